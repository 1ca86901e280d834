// berth serve on a cluster that serves a container's log with stdout and stderr merged (stock Kubernetes: the gate
// PodLogsQuerySplitStreams is alpha). berth says so when it starts, and what the docker CLI then gets is the whole
// output as stdout, with the real exit code: nothing lost, nothing passed off as stderr. A stderr line's place among
// the stdout lines is where the container runtime read it (it reads the two pipes apart), so lines are compared sorted.
// Where the cluster serves the streams apart, the rest of this folder holds berth to dockerd's exact streams.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUSYBOX, freshNamespace, servesSplitLogs } from '../harness/cluster.js';
import { berthLeftovers, bindServeRole, type DockerEngine, dropNamespace, startBerth } from './serve-env.js';

const instance = `bs${process.pid}-merged`;
const NOTE = /^berth serve: this cluster serves a container's log with stdout and stderr merged \(its feature gate PodLogsQuerySplitStreams is off\)/m;
let engine: DockerEngine;
let namespace = '';
let output = '';

before(async () => {
  namespace = await freshNamespace('serve-merged');
  await bindServeRole(namespace, 'shim');
  engine = await startBerth(namespace, instance, { user: 'shim', onOutput: (all) => (output = all) });
  // the docker CLI pulls an image it has not seen and says so on stderr: done here, that stderr is the container's
  await engine.dockerOk(['pull', BUSYBOX]);
});

after(async () => {
  await engine?.stop();
  if (namespace) await dropNamespace(namespace);
});

test(`berth serve says at start whether stdout and stderr arrive apart (${servesSplitLogs() ? 'they do here: no note' : 'merged here: one note'})`, async () => {
  await engine.waitForOutput(/listening on/);
  if (servesSplitLogs()) {
    // the note would come right after the listening line, once the cluster was asked: a container's run is later still
    await engine.dockerOk(['run', '--rm', BUSYBOX, 'true']);
    assert.doesNotMatch(output, NOTE);
  } else await engine.waitForOutput(NOTE);
});

test(
  'docker run --rm and docker logs: the whole output as stdout, each line once, and the exit code',
  { skip: servesSplitLogs() && 'the cluster serves the streams apart (the docker CLI tests of this folder check them)' },
  async () => {
    const script = 'echo out1; echo err1 >&2; echo out2; echo err2 >&2; exit 3';
    const lines = (out: string): string[] => out.split('\n').sort();
    const all = lines('out1\nerr1\nout2\nerr2\n');
    const run = await engine.docker(['run', '--rm', BUSYBOX, 'sh', '-c', script]);
    assert.deepEqual([run.code, lines(run.stdout), run.stderr], [3, all, '']);
    const id = (await engine.dockerOk(['run', '-d', BUSYBOX, 'sh', '-c', script])).trim();
    assert.equal((await engine.dockerOk(['wait', id])).trim(), '3');
    const logs = await engine.docker(['logs', id]);
    assert.deepEqual([logs.code, lines(logs.stdout), logs.stderr], [0, all, '']);
    await engine.dockerOk(['rm', id]);
    assert.deepEqual(await berthLeftovers(namespace, instance), []);
  },
);
