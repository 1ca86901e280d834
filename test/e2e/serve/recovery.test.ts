// berth serve restarted with the same --instance takes its containers over from the pods' annotations;
// --prune-start instead deletes what a crashed predecessor left, and so does `berth gc`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../../util/eventually.js';
import { berthCli, BUSYBOX, freshNamespace, kubeconfigPath, kubectlOk, runCommand } from '../harness/cluster.js';
import { berthLeftovers, type DockerEngine, dropNamespace, startBerth } from './serve-env.js';

test('a crashed berth serve is taken over by the next one, or pruned with --prune-start', async () => {
  const namespace = await freshNamespace('serve-recover');
  const instance = `rec${process.pid}`;
  let engine: DockerEngine | undefined;
  try {
    engine = await startBerth(namespace, instance);
    await engine.dockerOk(['pull', BUSYBOX]);
    await engine.dockerOk(['run', '-d', '--name', 'kept', '-l', 'suite=recover', BUSYBOX, 'sh', '-c', 'echo kept; exec sleep 600']);
    assert.equal((await engine.docker(['run', '--name', 'done', BUSYBOX, 'sh', '-c', 'exit 3'])).code, 3);
    // changed after its start: what the next berth knows of it comes from its pod
    await engine.dockerOk(['rename', 'kept', 'keep']);
    await engine.dockerOk(['network', 'create', 'later']);
    await engine.dockerOk(['network', 'connect', '--alias', 'late', 'later', 'keep']);
    await engine.crash();

    engine = await startBerth(namespace, instance);
    assert.equal((await engine.dockerOk(['ps', '--filter', 'label=suite=recover', '--format', '{{.Names}} {{.State}}'])).trim(), 'keep running');
    assert.equal((await engine.dockerOk(['inspect', '-f', '{{.State.Status}} {{.State.ExitCode}}', 'done'])).trim(), 'exited 3');
    assert.equal((await engine.dockerOk(['inspect', '-f', '{{json .NetworkSettings.Networks.later.Aliases}}', 'keep'])).trim(), '["late"]');
    // the log of a container started before the crash: `run -d` does not wait for its first line
    const taken = engine;
    await eventually('the log of `keep`', async () => assert.equal(await taken.dockerOk(['logs', 'keep']), 'kept\n') ?? true);
    assert.equal(await engine.dockerOk(['exec', 'keep', 'echo', 'still here']), 'still here\n');
    await engine.dockerOk(['run', '-d', '--name', 'orphan', BUSYBOX, 'sleep', '600']);
    await engine.crash();
    assert.ok((await berthLeftovers(namespace, instance)).length >= 3, 'a crash leaves the pods behind');

    engine = await startBerth(namespace, instance, { extra: ['--prune-start'] });
    assert.deepEqual(await berthLeftovers(namespace, instance), []);
    assert.equal((await engine.dockerOk(['ps', '-a', '-q'])).trim(), '');
  } finally {
    await engine?.stop();
    const left = await berthLeftovers(namespace, instance);
    await dropNamespace(namespace);
    assert.deepEqual(left, []);
  }
});

test('berth gc removes what a killed berth serve left: pods, alias Services, volume claims and its Lease', async () => {
  const namespace = await freshNamespace('serve-gc');
  const instance = `gc${process.pid}`;
  const engine = await startBerth(namespace, instance, { extra: ['--lock'] });
  try {
    for (const args of [
      ['pull', BUSYBOX],
      ['network', 'create', 'gcnet'],
      ['volume', 'create', 'gcvol'],
      ['run', '-d', '--network', 'gcnet', '--network-alias', 'gcdb', '-v', 'gcvol:/data', BUSYBOX, 'sleep', '600'],
    ]) {
      await engine.dockerOk(args);
    }
  } finally {
    await engine.crash();
  }
  const kinds = async (): Promise<string[]> =>
    (await kubectlOk(['-n', namespace, 'get', 'pods,services,persistentvolumeclaims,leases', '-l', `berth.dev/owner=${instance}`, '-o', 'name']))
      .split('\n')
      .filter(Boolean)
      .map((n) => n.split('/')[0])
      .sort();
  try {
    assert.deepEqual([...new Set(await kinds())], ['lease.coordination.k8s.io', 'persistentvolumeclaim', 'pod', 'service']);
    const gc = (extra: string[]) => runCommand(process.execPath, [berthCli, 'gc', '--kubeconfig', kubeconfigPath(), '-n', namespace, ...extra]);
    const early = await gc([]);
    assert.equal(early.code, 0, early.stderr);
    assert.match(early.stdout, /nothing expired/, 'nothing of a fresh crash has expired yet');
    const all = await gc(['--all']);
    assert.equal(all.code, 0, all.stderr);
    for (const kind of ['Pod/', 'Service/', 'PersistentVolumeClaim/', 'Lease/'])
      assert.ok(all.stdout.includes(kind), `gc --all deleted a ${kind}: ${all.stdout}`);
    assert.deepEqual(await kinds(), []);
  } finally {
    await dropNamespace(namespace);
  }
});
