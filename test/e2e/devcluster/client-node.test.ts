// @kubernetes/client-node 1.4 against the dev cluster: watch with resume, exec (v5 stdin close), attach, logs,
// port-forward.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import type { WebSocket } from 'ws';
import { BUSYBOX, deleteNamespace, kubeConfig, waitForPod } from '../harness/cluster.js';

const collect = (s: PassThrough) => {
  const chunks: Buffer[] = [];
  s.on('data', (c: Buffer) => chunks.push(c));
  return () => Buffer.concat(chunks).toString();
};

const isRunning = (p: k8s.V1Pod) => p.status?.containerStatuses?.[0]?.state?.running !== undefined;

describe('@kubernetes/client-node against the dev cluster', () => {
  const kc = kubeConfig();
  const core = kc.makeApiClient(k8s.CoreV1Api);
  let ns: string;

  const pod = (name: string, command: string, extra: Partial<k8s.V1Container> = {}): k8s.V1Pod => ({
    metadata: { name, labels: { suite: 'client-node' } },
    spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', command], ...extra }] },
  });

  before(async () => {
    ns = `client-node-${process.pid}`;
    await core.createNamespace({ body: { metadata: { name: ns } } });
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('watch resumes from a resourceVersion and sees only later changes', async () => {
    const list = await core.listNamespacedConfigMap({ namespace: ns });
    const from = list.metadata!.resourceVersion!;
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'first' }, data: { a: '1' } } });
    await core.patchNamespacedConfigMap({ namespace: ns, name: 'first', body: { data: { a: '2' } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await core.deleteNamespacedConfigMap({ namespace: ns, name: 'first' });
    const events: string[] = [];
    const watch = new k8s.Watch(kc);
    let lastRv = '';
    await new Promise<void>((resolve, reject) => {
      watch
        .watch(`/api/v1/namespaces/${ns}/configmaps`, { resourceVersion: from }, (type, obj: k8s.V1ConfigMap) => {
          if (obj.metadata?.name !== 'first') return;
          events.push(`${type}:${obj.data?.a}`);
          lastRv = obj.metadata!.resourceVersion!;
          if (type === 'DELETED') resolve();
        }, (err) => (err ? reject(err) : undefined))
        .then((req) => setTimeout(() => req.abort(), 10_000), reject);
    });
    assert.deepEqual(events, ['ADDED:1', 'MODIFIED:2', 'DELETED:2']);
    // resuming at the last seen version replays nothing old
    const replayed: string[] = [];
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'second' } } });
    await new Promise<void>((resolve, reject) => {
      watch
        .watch(`/api/v1/namespaces/${ns}/configmaps`, { resourceVersion: lastRv }, (type, obj: k8s.V1ConfigMap) => {
          replayed.push(`${type}:${obj.metadata?.name}`);
          if (obj.metadata?.name === 'second') resolve();
        }, (err) => (err ? reject(err) : undefined))
        .then((req) => setTimeout(() => req.abort(), 10_000), reject);
    });
    assert.deepEqual(replayed.filter((e) => !e.startsWith('ADDED:kube-root-ca.crt')), ['ADDED:second']);
  });

  test('a watch from a resourceVersion older than the history gets 410 Expired', async () => {
    const list = await core.listNamespacedConfigMap({ namespace: ns });
    const old = list.metadata!.resourceVersion!;
    // push `old` out of the server's watch history (the runner starts the cluster with a short one)
    const history = Number(process.env.BERTH_E2E_WATCH_HISTORY ?? 500);
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'churn' }, data: { n: '0' } } });
    for (let i = 1; i <= history + 10; i++) {
      await core.patchNamespacedConfigMap({ namespace: ns, name: 'churn', body: { data: { n: String(i) } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    }
    const watch = new k8s.Watch(kc);
    const outcome = await new Promise<string>((resolve) => {
      watch
        .watch(`/api/v1/namespaces/${ns}/configmaps`, { resourceVersion: old }, (type, obj: any) => {
          if (type === 'ERROR') resolve(`${obj.code}:${obj.reason}:${obj.message}`);
        }, (err: any) => resolve(err ? `${err.statusCode ?? err.code}:${err.message}` : 'ended'))
        .catch((err: any) => resolve(`${err.statusCode}:${err.message}`));
    });
    assert.match(outcome, new RegExp(`^410:Expired:too old resource version: ${old} \\(\\d+\\)$`));
  });

  test('exec with stdin closed (v5): cat sees EOF, output and exit code arrive', async () => {
    await core.createNamespacedPod({ namespace: ns, body: pod('exec-target', 'sleep 3600') });
    await waitForPod(kc, ns, 'exec-target', isRunning);
    const exec = new k8s.Exec(kc);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const out = collect(stdout);
    const err = collect(stderr);
    const payload = 'x'.repeat(256 * 1024) + '\nend\n';
    const status = await new Promise<k8s.V1Status>((resolve, reject) => {
      exec
        .exec(ns, 'exec-target', 'main', ['sh', '-c', 'cat; echo done >&2; exit 4'], stdout, stderr, Readable.from([payload]), false, resolve)
        .catch(reject);
    });
    assert.equal(out(), payload);
    assert.equal(err(), 'done\n');
    assert.equal(status.status, 'Failure');
    assert.equal(status.reason, 'NonZeroExitCode');
    assert.deepEqual(status.details?.causes, [{ reason: 'ExitCode', message: '4' }]);
  });

  test('attach streams stdin and output; the exit code comes from the pod status', async () => {
    await core.createNamespacedPod({ namespace: ns, body: pod('attach-target', 'while read l; do echo "echo:$l"; done; exit 5', { stdin: true, stdinOnce: true }) });
    await waitForPod(kc, ns, 'attach-target', isRunning);
    const stdout = new PassThrough();
    const out = collect(stdout);
    const stdin = new PassThrough();
    const ws = (await new k8s.Attach(kc).attach(ns, 'attach-target', 'main', stdout, null, stdin, false)) as WebSocket;
    assert.equal(ws.protocol, 'v5.channel.k8s.io');
    stdin.write('one\n');
    stdin.end('two\n');
    const done = await waitForPod(kc, ns, 'attach-target', (p) => p.status?.phase === 'Failed');
    assert.equal(done.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 5);
    assert.equal(done.status?.containerStatuses?.[0]?.state?.terminated?.reason, 'Error');
    await new Promise((r) => (ws.readyState === ws.CLOSED ? r(undefined) : ws.once('close', r)));
    assert.equal(out(), 'echo:one\necho:two\n');
  });

  test('logs: stdout and stderr, tail, timestamps, follow', async () => {
    await core.createNamespacedPod({ namespace: ns, body: pod('logger', 'for i in 1 2 3 4; do echo out$i; echo err$i >&2; done') });
    await waitForPod(kc, ns, 'logger', (p) => p.status?.phase === 'Succeeded');
    const all = await core.readNamespacedPodLog({ namespace: ns, name: 'logger' });
    assert.equal(all.split('\n').filter(Boolean).sort().join(','), 'err1,err2,err3,err4,out1,out2,out3,out4');
    const tail = await core.readNamespacedPodLog({ namespace: ns, name: 'logger', tailLines: 2 });
    assert.equal(tail.split('\n').filter(Boolean).length, 2);
    const stamped = await core.readNamespacedPodLog({ namespace: ns, name: 'logger', timestamps: true, tailLines: 1 });
    assert.match(stamped, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z \S+\n$/);
    const limited = await core.readNamespacedPodLog({ namespace: ns, name: 'logger', limitBytes: 5 });
    assert.equal(limited.length, 5);
    const follow = new PassThrough();
    const followed = collect(follow);
    await new k8s.Log(kc).log(ns, 'logger', 'main', follow, { follow: true });
    await new Promise((r) => follow.on('end', r));
    assert.equal(followed().split('\n').filter(Boolean).length, 8);
  });

  test('port-forward reaches a TCP server inside the pod', async () => {
    await core.createNamespacedPod({ namespace: ns, body: pod('pf-target', 'while true; do echo pong | nc -l -p 9000; done') });
    await waitForPod(kc, ns, 'pf-target', (p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);
    const forward = new k8s.PortForward(kc);
    const server = createServer((socket) => {
      forward.portForward(ns, 'pf-target', [9000], socket, null, socket).catch(() => socket.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const reply = await new Promise<string>((resolve, reject) => {
        import('node:net').then(({ connect }) => {
          const s = connect(port, '127.0.0.1');
          let data = '';
          s.on('data', (d) => {
            data += d;
            if (data.includes('\n')) {
              s.destroy();
              resolve(data);
            }
          });
          s.on('error', reject);
        });
      });
      assert.equal(reply, 'pong\n');
    } finally {
      server.close();
    }
  });
});
