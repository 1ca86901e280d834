// The dev cluster's fault switches, changed at run time through the admin endpoint, as reliability tests use them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { eventually } from '../../util/eventually.js';
import { apiRequest, BUSYBOX, deleteNamespace, kubeconfigPath, freshNamespace, kubeConfig, kubectl, kubectlOk, waitForPod } from '../harness/cluster.js';

const FAULTS = '/berth-dev/v1/faults';
const setFaults = async (faults: Record<string, number>) => {
  const r = await apiRequest('PUT', FAULTS, { body: faults });
  assert.equal(r.code, 200, JSON.stringify(r.body));
  return r.body;
};
const NONE = { dropStreams: 0, error500: 0, endWatchAfterMs: 0, delayPodStartMs: 0, failPortForwards: 0, containerLogMaxBytes: 10 * 1024 * 1024, containerLogCheckMs: 10_000 };

describe('fault switches', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('faults');
  });
  after(async () => {
    await setFaults(NONE);
    await deleteNamespace(ns);
  });

  test('only the admin may read or change them; bad values are refused and change nothing', async () => {
    assert.equal((await apiRequest('GET', FAULTS, { token: 'viewer-token-for-e2e-tests' })).code, 403);
    const bad = await apiRequest('PUT', FAULTS, { body: { error500: 2 } });
    assert.equal(bad.code, 400);
    assert.deepEqual((await apiRequest('GET', FAULTS)).body, NONE);
  });

  test('error500 answers 500 InternalError to API requests, not to the admin endpoint', async () => {
    await setFaults({ error500: 1 });
    try {
      const r = await apiRequest('GET', `/api/v1/namespaces/${ns}/configmaps`);
      assert.equal(r.code, 500);
      assert.equal(r.body.reason, 'InternalError');
    } finally {
      await setFaults({ error500: 0 });
    }
    assert.equal((await apiRequest('GET', `/api/v1/namespaces/${ns}/configmaps`)).code, 200);
  });

  test('endWatchAfterMs ends watches early; the client sees its watch end and can resume', async () => {
    await setFaults({ endWatchAfterMs: 300 });
    try {
      const started = Date.now();
      await new Promise<void>((resolve, reject) => {
        new k8s.Watch(kubeConfig()).watch(`/api/v1/namespaces/${ns}/configmaps`, {}, () => undefined, (err) => (err ? reject(err) : resolve())).catch(reject);
      });
      const lasted = Date.now() - started;
      assert.ok(lasted >= 250 && lasted < 10_000, `the watch lasted ${lasted} ms`);
    } finally {
      await setFaults({ endWatchAfterMs: 0 });
    }
  });

  test('delayPodStartMs holds a pod\'s containers back by that long', async () => {
    await setFaults({ delayPodStartMs: 2500 });
    try {
      const created = Date.now();
      await kubectlOk(['run', 'slow', '-n', ns, '--restart=Never', `--image=${BUSYBOX}`, '--', 'true']);
      const pod = await waitForPod(kubeConfig(), ns, 'slow', (p) => p.status?.phase === 'Succeeded');
      const started = Date.parse(pod.status!.containerStatuses![0].state!.terminated!.startedAt as unknown as string);
      // API timestamps have whole seconds: compare against the creation time rounded down the same way
      const createdSecond = Math.floor(created / 1000) * 1000;
      assert.ok(started - createdSecond >= 1000, `the container started ${started - created} ms after the pod was created`);
    } finally {
      await setFaults({ delayPodStartMs: 0 });
    }
  });

  test('dropStreams cuts exec sessions without a status: kubectl reports an error, never a success', async () => {
    await kubectlOk(['run', 'target', '-n', ns, '--restart=Never', `--image=${BUSYBOX}`, '--', 'sleep', '3600']);
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/target', '-n', ns, '--timeout=30s']);
    await setFaults({ dropStreams: 1 });
    try {
      const r = await kubectl(['exec', 'target', '-n', ns, '--', 'sh', '-c', 'sleep 1; echo done']);
      assert.notEqual(r.code, 0, `exec succeeded although its stream was dropped: ${r.stdout}`);
      assert.doesNotMatch(r.stdout, /done/);
    } finally {
      await setFaults({ dropStreams: 0 });
    }
    assert.equal((await kubectlOk(['exec', 'target', '-n', ns, '--', 'echo', 'ok'])).trim(), 'ok');
  });

  test('containerLogMaxBytes rotates a running container\'s log as a kubelet does: kubectl logs shows the newest file, a follow every line', async () => {
    await setFaults({ containerLogMaxBytes: 64 * 1024, containerLogCheckMs: 0 });
    try {
      // the lines come once the follow has seen the first one (`kubectl exec` lets them out)
      const script = 'echo ready; until [ -e /tmp/go ]; do sleep 0.1; done; seq 1 30000; echo last';
      await kubectlOk(['run', 'chatty', '-n', ns, '--restart=Never', `--image=${BUSYBOX}`, '--', 'sh', '-c', script]);
      await kubectlOk(['wait', '--for=condition=Ready', 'pod/chatty', '-n', ns, '--timeout=30s']);
      const child = spawn('kubectl', ['--kubeconfig', kubeconfigPath(), 'logs', '-f', 'chatty', '-n', ns], { stdio: ['ignore', 'pipe', 'inherit'] });
      let followed = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (followed += d));
      const ended = new Promise<void>((resolve, reject) => {
        child.on('error', reject);
        child.on('close', () => resolve());
      });
      await eventually('the follow has the first line', () => followed.startsWith('ready\n'), { timeoutMs: 30_000 });
      await kubectlOk(['exec', 'chatty', '-n', ns, '--', 'touch', '/tmp/go']);
      await ended;
      const expected = `ready\n${Array.from({ length: 30000 }, (_, i) => i + 1).join('\n')}\nlast\n`;
      assert.equal(followed, expected, 'the follow lost or doubled lines across rotations');
      await waitForPod(kubeConfig(), ns, 'chatty', (p) => p.status?.phase === 'Succeeded');
      // 30000 lines make about 1.3 MB of log file, rotated at 64 KiB: the newest file holds only the end (nothing,
      // when the last write itself filled the file and it was rotated at once)
      const newest = await kubectlOk(['logs', 'chatty', '-n', ns]);
      assert.ok(newest.length < 64 * 1024, `kubectl logs gave ${newest.length} bytes: the log was not rotated`);
      assert.ok(expected.endsWith(newest), `the newest file is not the end of what the container wrote: ${newest.slice(-100)}`);
    } finally {
      await setFaults({ containerLogMaxBytes: NONE.containerLogMaxBytes, containerLogCheckMs: NONE.containerLogCheckMs });
    }
  });
});
