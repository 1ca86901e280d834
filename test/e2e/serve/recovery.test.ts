// berth serve restarted with the same --instance takes its containers over from the pods' annotations;
// --prune-start instead deletes what a crashed predecessor left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUSYBOX, freshNamespace } from '../harness/cluster.js';
import { berthLeftovers, type DockerEngine, dropNamespace, startBerth } from './serve-env.js';

test('a crashed berth serve is taken over by the next one, or pruned with --prune-start', async () => {
  const namespace = await freshNamespace('serve-recover');
  const instance = `rec${process.pid}`;
  let engine: DockerEngine | undefined;
  const ok = async (e: DockerEngine, args: string[]): Promise<string> => {
    const r = await e.docker(args);
    assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  try {
    engine = await startBerth(namespace, instance);
    await ok(engine, ['pull', BUSYBOX]);
    await ok(engine, ['run', '-d', '--name', 'keep', '-l', 'suite=recover', BUSYBOX, 'sh', '-c', 'echo kept; exec sleep 600']);
    assert.equal((await engine.docker(['run', '--name', 'done', BUSYBOX, 'sh', '-c', 'exit 3'])).code, 3);
    await engine.crash();

    engine = await startBerth(namespace, instance);
    assert.equal((await ok(engine, ['ps', '--filter', 'label=suite=recover', '--format', '{{.Names}} {{.State}}'])).trim(), 'keep running');
    assert.equal((await ok(engine, ['inspect', '-f', '{{.State.Status}} {{.State.ExitCode}}', 'done'])).trim(), 'exited 3');
    assert.equal(await ok(engine, ['logs', 'keep']), 'kept\n');
    assert.equal(await ok(engine, ['exec', 'keep', 'echo', 'still here']), 'still here\n');
    await ok(engine, ['run', '-d', '--name', 'orphan', BUSYBOX, 'sleep', '600']);
    await engine.crash();
    assert.ok((await berthLeftovers(namespace, instance)).length >= 3, 'a crash leaves the pods behind');

    engine = await startBerth(namespace, instance, { extra: ['--prune-start'] });
    assert.deepEqual(await berthLeftovers(namespace, instance), []);
    assert.equal((await ok(engine, ['ps', '-a', '-q'])).trim(), '');
  } finally {
    await engine?.stop();
    const left = await berthLeftovers(namespace, instance);
    await dropNamespace(namespace);
    assert.deepEqual(left, []);
  }
});
