// berth serve under concurrency: many `docker run --rm` at once each get exactly their own output and exit
// code (an attach opened before start reads the whole log, however late the pod runs), and parallel starts
// of one container make one pod.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUSYBOX, freshNamespace, kubectlOk } from '../harness/cluster.js';
import { startBerth, stopAndCheckLeftovers } from './serve-env.js';

const RUNS = 50;

test(`${RUNS} concurrent docker run --rm: every stdout, stderr and exit code exact`, { timeout: 600_000 }, async () => {
  const namespace = await freshNamespace('serve-conc');
  const instance = `conc${process.pid}`;
  const engine = await startBerth(namespace, instance);
  try {
    await engine.dockerOk(['pull', BUSYBOX]);
    const runs = await Promise.all(
      Array.from({ length: RUNS }, (_, i) =>
        engine
          .docker(['run', '--rm', BUSYBOX, 'sh', '-c', `echo out-${i}; echo err-${i} >&2; exit $((${i} % 7))`], { timeoutMs: 480_000 })
          .then((r) => ({ i, ...r })),
      ),
    );
    const wrong = runs.filter((r) => r.stdout !== `out-${r.i}\n` || r.stderr !== `err-${r.i}\n` || r.code !== r.i % 7);
    console.log(`concurrent docker run --rm: ${RUNS - wrong.length} of ${RUNS} exact (stdout, stderr, exit code)`);
    assert.deepEqual(
      wrong.map((r) => `#${r.i}: exit ${r.code} stdout ${JSON.stringify(r.stdout)} stderr ${JSON.stringify(r.stderr)}`),
      [],
    );
    assert.equal((await engine.dockerOk(['ps', '-a', '-q'])).trim(), '', '--rm removed every container');
  } finally {
    await stopAndCheckLeftovers(engine, namespace, instance);
  }
});

test('10 parallel docker start of one container make exactly one pod; rm -f leaves none', { timeout: 300_000 }, async () => {
  const namespace = await freshNamespace('serve-starts');
  const instance = `starts${process.pid}`;
  const engine = await startBerth(namespace, instance);
  try {
    await engine.dockerOk(['pull', BUSYBOX]);
    const id = (await engine.dockerOk(['create', '--name', 'once', BUSYBOX, 'sleep', '600'])).trim();
    const starts = await Promise.all(Array.from({ length: 10 }, () => engine.docker(['start', 'once'])));
    assert.deepEqual(
      starts.map((s) => s.code),
      Array(10).fill(0),
      starts.map((s) => s.stderr).join(''),
    );
    const pods = async (): Promise<string[]> =>
      (await kubectlOk(['-n', namespace, 'get', 'pods', '-l', `berth.dev/container=${id.slice(0, 12)}`, '-o', 'name'])).split('\n').filter(Boolean);
    const made = await pods();
    console.log(`10 parallel docker start: ${made.length} pod(s)`);
    assert.equal(made.length, 1, made.join(', '));
    assert.equal((await engine.dockerOk(['inspect', '-f', '{{.State.Status}}', 'once'])).trim(), 'running');
    await engine.dockerOk(['rm', '-f', 'once']);
    assert.deepEqual(await pods(), []);
  } finally {
    await stopAndCheckLeftovers(engine, namespace, instance);
  }
});
