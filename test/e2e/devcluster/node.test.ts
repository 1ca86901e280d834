// The dev cluster's node against real podman: pods become podman pods, with the kubelet's status, logs,
// exec, attach, port-forward, volumes, NetworkPolicy isolation and Service names.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { MemoryStore } from '../../../src/devcluster/api/store.js';
import { resourceByKind } from '../../../src/devcluster/api/resources.js';
import { PodmanNode } from '../../../src/devcluster/node/podman-node.js';
import { claimVolumeDir } from '../../../src/devcluster/node/claim-controller.js';
import { noFaults, type KubeObject, type StreamSession } from '../../../src/devcluster/types.js';
import { eventually } from '../../util/eventually.js';
import { rejectedApiError } from '../../util/api-error.js';

const BUSYBOX = 'localhost/berth/busybox:1';
const NS = 'node-e2e';
const POD = resourceByKind('Pod');
const CLUSTER_ID = `nodetest${process.pid}`;

const store = new MemoryStore();
const stateDir = mkdtempSync(join(tmpdir(), 'berth-node-test-'));
const node = new PodmanNode({ store, clusterId: CLUSTER_ID, stateDir, faults: noFaults(), restartBackoffMs: 500, imageBackoffMs: 1000 });

function podmanPodsOfTest(): string[] {
  return execFileSync('podman', ['pod', 'ps', '--filter', `label=io.berth.dev-cluster=${CLUSTER_ID}`, '--format', '{{.Name}}'], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

before(async () => {
  await node.start();
});

after(async () => {
  await node.stop();
  // belt and braces: whatever the node left behind goes, then prove nothing is left
  const left = podmanPodsOfTest();
  if (left.length) execFileSync('podman', ['pod', 'rm', '-f', '-t', '0', ...left]);
  rmSync(stateDir, { recursive: true, force: true });
  assert.deepEqual(left, []);
});

function pod(name: string, spec: any, labels?: Record<string, string>): KubeObject {
  return store.create(POD, NS, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels }, spec: { restartPolicy: 'Never', ...spec } });
}

/** resolves with the pod once `pred` holds; rejects with the last state seen after timeoutMs */
function waitForPod(name: string, pred: (p: KubeObject) => boolean, timeoutMs = 30_000): Promise<KubeObject> {
  return new Promise((resolve, reject) => {
    let last: KubeObject | undefined;
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      handle.stop();
      reject(new Error(`timed out waiting for pod ${name}; last status ${JSON.stringify(last?.status)}`));
    }, timeoutMs);
    const handle = store.watch(POD, NS, {}, (e) => {
      if (settled || e.object.metadata.name !== name) return;
      last = e.object;
      if (e.type !== 'DELETED' && pred(e.object)) {
        settled = true;
        clearTimeout(timer);
        setImmediate(() => handle.stop());
        resolve(e.object);
      }
    });
  });
}

function waitForGone(name: string, timeoutMs = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pod ${name} still there`)), timeoutMs);
    const check = () => {
      if (!store.tryGet(POD, NS, name)) {
        clearTimeout(timer);
        setImmediate(() => handle.stop());
        resolve();
      }
    };
    const handle = store.watch(POD, NS, {}, (e) => e.type === 'DELETED' && check());
    check();
  });
}

const phaseIs = (...phases: string[]) => (p: KubeObject) => phases.includes(p.status?.phase);
const running = (p: KubeObject) => p.status?.phase === 'Running' && p.status.containerStatuses?.every((c: any) => c.state.running);

function remove(name: string): void {
  try {
    store.remove(POD, NS, name);
  } catch {
    // already gone
  }
}

async function readAll(r: Readable | null): Promise<string> {
  if (!r) return '';
  let s = '';
  for await (const chunk of r) s += chunk.toString();
  return s;
}

/** reads a stream until `text` appears */
function readUntil(r: Readable, text: string, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`never saw ${JSON.stringify(text)}; saw ${JSON.stringify(seen)}`)), timeoutMs);
    const onData = (b: Buffer) => {
      seen += b.toString();
      if (seen.includes(text)) {
        clearTimeout(timer);
        r.off('data', onData);
        resolve(seen);
      }
    };
    r.on('data', onData);
  });
}

const rejectsWith = async (p: Promise<unknown>, code: number, message: string | RegExp): Promise<void> => void (await rejectedApiError(p, { code, message }));

describe('PodmanNode', () => {
  test('registers a Ready node with capacity and labels', () => {
    const n = store.get(resourceByKind('Node'), undefined, 'berth-dev');
    assert.equal(n.metadata.labels?.['kubernetes.io/hostname'], 'berth-dev');
    assert.equal(n.status.conditions.find((c: any) => c.type === 'Ready').status, 'True');
    assert.equal(n.status.allocatable.pods, '110');
    assert.equal(n.status.nodeInfo.kubeletVersion, 'v1.32.0-berth');
    assert.ok(n.status.addresses.some((a: any) => a.type === 'InternalIP'));
  });

  test('a failing pod ends Failed with its exit code and both log streams', async (t) => {
    t.after(() => remove('echo-fail'));
    pod('echo-fail', { containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', 'echo out1; echo err1 >&2; sleep 0.1; echo out2; exit 3'] }] });
    const p = await waitForPod('echo-fail', phaseIs('Failed', 'Succeeded'));
    assert.equal(p.status.phase, 'Failed');
    const term = p.status.containerStatuses[0].state.terminated;
    assert.equal(term.exitCode, 3);
    assert.equal(term.reason, 'Error');
    assert.match(p.status.containerStatuses[0].containerID, /^podman:\/\/[0-9a-f]{64}$/);
    assert.ok(p.status.podIP?.startsWith('10.88.'), p.status.podIP);
    assert.equal(p.spec.nodeName, 'berth-dev');
    assert.equal(p.status.conditions.find((c: any) => c.type === 'Ready').reason, 'PodCompleted');
    assert.equal(await readAll(await node.logs(p, { stream: 'Stdout' })), 'out1\nout2\n');
    assert.equal(await readAll(await node.logs(p, { stream: 'Stderr' })), 'err1\n');
    const all = await readAll(await node.logs(p, {}));
    assert.equal(all.split('\n').sort().join(','), ',err1,out1,out2');
    assert.ok(all.indexOf('out2') > all.indexOf('err1'), all);
    const stamped = await readAll(await node.logs(p, { timestamps: true, tailLines: 1 }));
    assert.match(stamped, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z out2\n$/);
    assert.equal(await readAll(await node.logs(p, { limitBytes: 3, stream: 'Stdout' })), 'out');
    await rejectsWith(node.logs(p, { previous: true }), 400, 'previous terminated container "main" in pod "echo-fail" not found');
    await rejectsWith(node.logs(p, { container: 'nope' }), 400, 'container nope is not valid for pod echo-fail');
    await rejectsWith(node.exec(p, { container: 'main', command: ['true'], stdin: false, stdout: true, stderr: true, tty: false }), 400, 'unable to upgrade connection: container not found ("main")');
    const events = store.list(resourceByKind('Event'), NS).items.filter((e) => e.involvedObject.name === 'echo-fail').map((e) => e.reason);
    for (const r of ['Scheduled', 'Pulled', 'Created', 'Started']) assert.ok(events.includes(r), `${r} in ${events}`);
  });

  test('the log is whole the moment the status says terminated (ended by conmon\'s exit file), unfinished last line included', async (t) => {
    // 200 KiB of stdout (more than a pipe holds) and a last line without a newline on each stream, 8 times
    const script = 'head -c 204800 /dev/zero | tr "\\0" x; printf "tail-out"; printf "tail-err" >&2; exit 4';
    for (let i = 0; i < 8; i++) {
      const name = `whole-log-${i}`;
      t.after(() => remove(name));
      pod(name, { containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', script] }] });
      const p = await waitForPod(name, (o) => o.status?.containerStatuses?.[0]?.state?.terminated !== undefined);
      // read at once, in the same turn as the status change was seen
      const [out, err] = await Promise.all([readAll(await node.logs(p, { stream: 'Stdout' })), readAll(await node.logs(p, { stream: 'Stderr' }))]);
      assert.equal(p.status.containerStatuses[0].state.terminated.exitCode, 4);
      assert.equal(out.length, 204800 + 'tail-out'.length, `run ${i}: stdout has ${out.length} bytes`);
      assert.ok(out.endsWith('xtail-out'), `run ${i}`);
      assert.equal(err, 'tail-err');
    }
  });

  test('init containers run in order before the containers', async (t) => {
    t.after(() => remove('init-order'));
    pod('init-order', {
      volumes: [{ name: 'work', emptyDir: {} }],
      initContainers: [
        { name: 'first', image: BUSYBOX, command: ['sh', '-c', 'sleep 0.3; echo first >> /work/order'], volumeMounts: [{ name: 'work', mountPath: '/work' }] },
        { name: 'second', image: BUSYBOX, command: ['sh', '-c', 'echo second >> /work/order'], volumeMounts: [{ name: 'work', mountPath: '/work' }] },
      ],
      containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', 'echo main >> /work/order; cat /work/order'], volumeMounts: [{ name: 'work', mountPath: '/work' }] }],
    });
    const p = await waitForPod('init-order', phaseIs('Failed', 'Succeeded'));
    assert.equal(p.status.phase, 'Succeeded');
    assert.deepEqual(p.status.initContainerStatuses.map((s: any) => s.state.terminated?.reason), ['Completed', 'Completed']);
    assert.equal(await readAll(await node.logs(p, { container: 'main' })), 'first\nsecond\nmain\n');
  });

  test('a failing init container with restartPolicy Never fails the pod and never starts the containers', async (t) => {
    t.after(() => remove('init-fail'));
    pod('init-fail', {
      initContainers: [{ name: 'boom', image: BUSYBOX, command: ['sh', '-c', 'exit 5'] }],
      containers: [{ name: 'main', image: BUSYBOX, command: ['true'] }],
    });
    const p = await waitForPod('init-fail', phaseIs('Failed', 'Succeeded'));
    assert.equal(p.status.phase, 'Failed');
    assert.equal(p.status.initContainerStatuses[0].state.terminated.exitCode, 5);
    assert.equal(p.status.containerStatuses[0].state.waiting.reason, 'PodInitializing');
    await rejectsWith(node.logs(p, { container: 'main' }), 400, 'container "main" in pod "init-fail" is waiting to start: PodInitializing');
  });

  test('env from a ConfigMap, a Secret and the downward API; a ConfigMap volume with nested items', async (t) => {
    t.after(() => {
      remove('env-cm');
      for (const [rt, n] of [['ConfigMap', 'settings'], ['Secret', 'creds']] as const) {
        try {
          store.remove(resourceByKind(rt), NS, n);
        } catch {
          // gone
        }
      }
    });
    store.create(resourceByKind('ConfigMap'), NS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { greeting: 'hello world', 'c.txt': 'nested file\n', other: 'x' } });
    store.create(resourceByKind('Secret'), NS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, data: { password: Buffer.from('s3cret').toString('base64') } });
    pod('env-cm', {
      volumes: [{ name: 'cfg', configMap: { name: 'settings', items: [{ key: 'c.txt', path: 'a/b/c.txt', mode: 0o600 }] } }],
      containers: [
        {
          name: 'main',
          image: BUSYBOX,
          command: ['sh', '-c', 'echo "$GREETING|$PASSWORD|$POD_NAME|$MISSING|$(cat /cfg/a/b/c.txt)|$(stat -c %a /cfg/a/b/c.txt)|$(ls /cfg)|$EXPANDED"'],
          env: [
            { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'settings', key: 'greeting' } } },
            { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'MISSING', valueFrom: { secretKeyRef: { name: 'nope', key: 'k', optional: true } } },
            { name: 'EXPANDED', value: '$(POD_NAME)-x' },
          ],
          volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }],
        },
      ],
    });
    const p = await waitForPod('env-cm', phaseIs('Failed', 'Succeeded'));
    assert.equal(p.status.phase, 'Succeeded', JSON.stringify(p.status));
    assert.equal(await readAll(await node.logs(p, {})), 'hello world|s3cret|env-cm||nested file|600|a|env-cm-x\n');
  });

  test('a subPath naming an existing file mounts that file; a missing subPath becomes a directory', async (t) => {
    t.after(() => remove('subpath'));
    pod('subpath', {
      volumes: [{ name: 'work', emptyDir: {} }],
      initContainers: [{ name: 'seed', image: BUSYBOX, command: ['sh', '-c', 'echo seeded > /w/file.txt'], volumeMounts: [{ name: 'work', mountPath: '/w' }] }],
      containers: [
        {
          name: 'main',
          image: BUSYBOX,
          command: ['sh', '-c', 'cat /etc/one.txt; test -d /made && echo dir'],
          volumeMounts: [
            { name: 'work', mountPath: '/etc/one.txt', subPath: 'file.txt' },
            { name: 'work', mountPath: '/made', subPath: 'new/dir' },
          ],
        },
      ],
    });
    const p = await waitForPod('subpath', phaseIs('Failed', 'Succeeded'));
    assert.equal(p.status.phase, 'Succeeded', JSON.stringify(p.status));
    assert.equal(await readAll(await node.logs(p, {})), 'seeded\ndir\n');
  });

  test('a hostNetwork pod shares the node\'s network and reports the node\'s address as its IP', async (t) => {
    t.after(() => remove('hostnet'));
    pod('hostnet', { hostNetwork: true, containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', 'ip -o addr show 2>/dev/null || ifconfig'] }] });
    const p = await waitForPod('hostnet', phaseIs('Failed', 'Succeeded'));
    assert.equal(p.status.phase, 'Succeeded', JSON.stringify(p.status));
    assert.equal(p.status.podIP, p.status.hostIP);
    // the node's own bridge address is one of the pod's interfaces: it is in the host's namespace
    assert.match(await readAll(await node.logs(p, {})), new RegExp(p.status.hostIP.replace(/\./g, '\\.')));
  });

  test('a missing ConfigMap is CreateContainerConfigError until it appears', async (t) => {
    t.after(() => {
      remove('cm-late');
      try {
        store.remove(resourceByKind('ConfigMap'), NS, 'late');
      } catch {
        // gone
      }
    });
    pod('cm-late', { containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', 'echo $V'], env: [{ name: 'V', valueFrom: { configMapKeyRef: { name: 'late', key: 'v' } } }] }] });
    const waiting = await waitForPod('cm-late', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError');
    assert.equal(waiting.status.containerStatuses[0].state.waiting.message, 'configmap "late" not found');
    assert.equal(waiting.status.phase, 'Pending');
    store.create(resourceByKind('ConfigMap'), NS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' }, data: { v: 'arrived' } });
    const p = await waitForPod('cm-late', phaseIs('Succeeded', 'Failed'));
    assert.equal(await readAll(await node.logs(p, {})), 'arrived\n');
  });

  test('a missing image is ErrImagePull, then ImagePullBackOff, within 5 s; Never is ErrImageNeverPull', async (t) => {
    t.after(() => {
      remove('no-image');
      remove('never-pull');
    });
    const started = Date.now();
    const seen: string[] = [];
    const handle = store.watch(POD, NS, {}, (e) => {
      const r = e.object.metadata.name === 'no-image' ? e.object.status?.containerStatuses?.[0]?.state?.waiting?.reason : undefined;
      if (r && seen[seen.length - 1] !== r) seen.push(r);
    });
    t.after(() => handle.stop());
    pod('no-image', { containers: [{ name: 'main', image: 'localhost/berth/does-not-exist:1' }] });
    pod('never-pull', { containers: [{ name: 'main', image: 'localhost/berth/does-not-exist:1', imagePullPolicy: 'Never' }] });
    const p = await waitForPod('no-image', (x) => x.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ImagePullBackOff', 5000);
    assert.ok(Date.now() - started < 5000);
    assert.deepEqual(seen.slice(0, 3), ['ContainerCreating', 'ErrImagePull', 'ImagePullBackOff']);
    assert.equal(p.status.containerStatuses[0].state.waiting.message, 'Back-off pulling image "localhost/berth/does-not-exist:1"');
    assert.equal(p.status.phase, 'Pending');
    const never = await waitForPod('never-pull', (x) => x.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ErrImageNeverPull', 5000);
    assert.equal(never.status.containerStatuses[0].state.waiting.message, 'Container image "localhost/berth/does-not-exist:1" is not present with pull policy of Never');
    await rejectsWith(node.logs(p, {}), 400, 'container "main" in pod "no-image" is waiting to start: trying and failing to pull image');
  });

  test('runAsNonRoot with the root busybox user is CreateContainerConfigError; runAsUser runs as that user', async (t) => {
    t.after(() => {
      remove('nonroot');
      remove('as-nobody');
    });
    pod('nonroot', { securityContext: { runAsNonRoot: true }, containers: [{ name: 'c', image: BUSYBOX, command: ['id'] }] });
    pod('as-nobody', {
      securityContext: { runAsNonRoot: true, runAsUser: 65534 },
      containers: [{ name: 'c', image: BUSYBOX, command: ['sh', '-c', 'id -u; touch /x 2>/dev/null || echo ro'], securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
    });
    const p = await waitForPod('nonroot', (x) => x.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError');
    assert.equal(p.status.containerStatuses[0].state.waiting.message, `container has runAsNonRoot and image will run as root (pod: "${NS}/nonroot", container: c)`);
    const ok = await waitForPod('as-nobody', phaseIs('Succeeded', 'Failed'));
    assert.equal(await readAll(await node.logs(ok, {})), '65534\nro\n');
  });

  test('activeDeadlineSeconds ends the pod with DeadlineExceeded', async (t) => {
    t.after(() => remove('deadline'));
    const created = Date.now();
    pod('deadline', { activeDeadlineSeconds: 2, containers: [{ name: 'c', image: BUSYBOX, command: ['sleep', '60'] }] });
    // under load the container may not have started within 2 s: then it is never started, as on a real node
    const p = await waitForPod('deadline', (x) => x.status?.phase === 'Failed', 20_000);
    assert.equal(p.status.reason, 'DeadlineExceeded');
    assert.equal(p.status.message, 'Pod was active on the node longer than the specified deadline');
    const state = p.status.containerStatuses[0].state;
    if (!state.waiting) {
      assert.equal(state.terminated.exitCode, 137);
      assert.equal(state.terminated.reason, 'Error');
    }
    const ranFor = Date.now() - created;
    assert.ok(ranFor >= 2000 && ranFor < 8000, `deadline hit after ${ranFor} ms`);
  });

  test('graceful deletion sends SIGTERM, then the pod leaves the store and podman', async () => {
    // the claim the pod writes its proof to: bound by the node's provisioner to a folder of its own
    store.create(resourceByKind('PersistentVolumeClaim'), NS, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'graceful-claim', namespace: NS },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
    });
    const p = pod('graceful', {
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'graceful-claim' } }],
      containers: [
        {
          name: 'c',
          image: BUSYBOX,
          command: ['sh', '-c', 'trap "echo got TERM > /data/term; exit 0" TERM; echo ready; while true; do sleep 0.1; done'],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
    });
    const started = await waitForPod('graceful', running);
    // the trap is set once the shell printed "ready"
    await readUntil(await node.logs(started, { follow: true }), 'ready\n');
    const claim = store.get(resourceByKind('PersistentVolumeClaim'), NS, 'graceful-claim');
    const claimFile = join(claimVolumeDir(join(stateDir, 'claims'), claim), 'term');
    rmSync(claimFile, { force: true });
    // what the API server does on DELETE with a grace period
    store.mutate(POD, NS, 'graceful', (o) => {
      o.metadata.deletionTimestamp = new Date(Date.now() + 5000).toISOString();
      o.metadata.deletionGracePeriodSeconds = 5;
    });
    await waitForGone('graceful');
    assert.equal(readFileSync(claimFile, 'utf8'), 'got TERM\n');
    const uidPiece = p.metadata.uid!.replace(/-/g, '').slice(0, 8);
    assert.ok(!podmanPodsOfTest().some((n) => n.endsWith(uidPiece)));
    const events = store.list(resourceByKind('Event'), NS).items.filter((e) => e.involvedObject.name === 'graceful').map((e) => e.reason);
    assert.ok(events.includes('Killing'), String(events));
  });

  test('exec with stdin returns the exit code; unknown commands 127; unknown containers 400', async (t) => {
    t.after(() => remove('exec-pod'));
    pod('exec-pod', { containers: [{ name: 'c', image: BUSYBOX, command: ['sleep', '600'], env: [{ name: 'FOO', value: 'bar' }] }] });
    const p = await waitForPod('exec-pod', running);
    const s = await node.exec(p, { container: 'c', command: ['sh', '-c', 'cat; echo "$FOO" >&2; exit 7'], stdin: true, stdout: true, stderr: true, tty: false });
    s.stdin!.end('hello from stdin\n');
    const [out, err, done] = await Promise.all([readAll(s.stdout), readAll(s.stderr), s.done]);
    assert.equal(out, 'hello from stdin\n');
    assert.equal(err, 'bar\n');
    assert.deepEqual(done, { exitCode: 7 });
    const nf = await node.exec(p, { container: 'c', command: ['no-such-command'], stdin: false, stdout: true, stderr: true, tty: false });
    await Promise.all([readAll(nf.stdout), readAll(nf.stderr)]);
    assert.deepEqual(await nf.done, { exitCode: 127 });
    const tty = await node.exec(p, { container: 'c', command: ['sh', '-c', 'test -t 1 && echo is-a-tty; echo err >&2'], stdin: false, stdout: true, stderr: true, tty: true });
    assert.equal(tty.stderr, null);
    assert.equal(await readAll(tty.stdout), 'is-a-tty\r\nerr\r\n');
    assert.deepEqual(await tty.done, { exitCode: 0 });
    await rejectsWith(node.exec(p, { container: 'x', command: ['true'], stdin: false, stdout: true, stderr: false, tty: false }), 400, 'container x is not valid for pod exec-pod');
  });

  test('attach taps live output and stdinOnce closes stdin only when the client does', async (t) => {
    t.after(() => remove('attach-pod'));
    pod('attach-pod', {
      containers: [{ name: 'c', image: BUSYBOX, stdin: true, stdinOnce: true, command: ['sh', '-c', 'echo before-attach; while read line; do echo "got:$line"; done; echo "eof"; exit 0'] }],
    });
    const p = await waitForPod('attach-pod', running);
    await readUntil(await node.logs(p, { follow: true }), 'before-attach\n');
    const s: StreamSession = await node.attach(p, { container: 'c', stdin: true, stdout: true, stderr: true, tty: false });
    s.stdin!.write('one\n');
    const seen = await readUntil(s.stdout!, 'got:one\n');
    assert.ok(!seen.includes('before-attach'), 'attach replays no earlier output');
    // the container must not have seen EOF yet
    assert.equal(store.get(POD, NS, 'attach-pod').status.phase, 'Running');
    s.stdin!.write('two\n');
    await readUntil(s.stdout!, 'got:two\n');
    s.stdin!.end();
    await readUntil(s.stdout!, 'eof\n');
    assert.deepEqual(await s.done, { exitCode: 0 });
    const done = await waitForPod('attach-pod', phaseIs('Succeeded', 'Failed'));
    assert.equal(done.status.phase, 'Succeeded');
    assert.equal(await readAll(await node.logs(done, {})), 'before-attach\ngot:one\ngot:two\neof\n');
  });

  test('port-forward reaches busybox httpd in the pod', async (t) => {
    t.after(() => remove('httpd'));
    pod('httpd', { containers: [{ name: 'web', image: BUSYBOX, command: ['sh', '-c', 'mkdir -p /www && echo hello-from-httpd > /www/index.html && exec httpd -f -p 8080 -h /www'] }] });
    const p = await waitForPod('httpd', running);
    const get = async (): Promise<string> => {
      const sock = await node.portForward(p, 8080);
      sock.end('GET /index.html HTTP/1.0\r\n\r\n');
      return readAll(sock as Readable);
    };
    // httpd may still be binding
    const body = await eventually('httpd answers', async () => {
      const b = await get().catch((e) => String(e));
      return b.includes('hello-from-httpd') && b;
    }, { timeoutMs: 5_000 });
    assert.match(body, /200 OK[\s\S]*hello-from-httpd/);
  });

  test('a pod selected by a deny-all NetworkPolicy has loopback only', async (t) => {
    t.after(() => {
      remove('isolated');
      try {
        store.remove(resourceByKind('NetworkPolicy'), NS, 'deny-all');
      } catch {
        // gone
      }
    });
    store.create(resourceByKind('NetworkPolicy'), NS, {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'deny-all' },
      spec: { podSelector: { matchLabels: { sandbox: 'yes' } }, policyTypes: ['Ingress', 'Egress'] },
    });
    pod('isolated', { containers: [{ name: 'c', image: BUSYBOX, command: ['sh', '-c', 'ls /sys/class/net; nc -w 2 10.88.0.1 9 </dev/null 2>&1'] }] }, { sandbox: 'yes' });
    const p = await waitForPod('isolated', phaseIs('Succeeded', 'Failed'));
    assert.equal(p.status.podIP, undefined);
    const out = await readAll(await node.logs(p, {}));
    assert.equal(out.split('\n')[0], 'lo');
    assert.match(out, /Network is unreachable/);
  });

  test('a Service name resolves to the pod it selects, from another pod', async (t) => {
    t.after(() => {
      remove('web');
      remove('client');
      try {
        store.remove(resourceByKind('Service'), NS, 'web');
      } catch {
        // gone
      }
    });
    store.create(resourceByKind('Service'), NS, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 8080 }] } });
    pod('web', { containers: [{ name: 'web', image: BUSYBOX, command: ['sh', '-c', 'mkdir -p /www && echo served-by-web > /www/index.html && exec httpd -f -p 8080 -h /www'] }] }, { app: 'web' });
    await waitForPod('web', running);
    pod('client', {
      containers: [
        {
          name: 'c',
          image: BUSYBOX,
          // busybox wget crashes in this image; nc resolves through /etc/hosts as well
          command: ['sh', '-c', `get() { printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 "$1" 8080 | tail -1; }; for i in $(seq 1 100); do a=$(get web) && [ -n "$a" ] && b=$(get web.${NS}.svc.cluster.local) && echo "$a" && echo "$b" && exit 0; sleep 0.1; done; cat /etc/hosts; exit 1`],
        },
      ],
    });
    const p = await waitForPod('client', phaseIs('Succeeded', 'Failed'));
    const out = await readAll(await node.logs(p, {}));
    assert.equal(p.status.phase, 'Succeeded', out);
    assert.equal(out, 'served-by-web\nserved-by-web\n');
  });

  test('restartPolicy OnFailure restarts with CrashLoopBackOff and keeps the previous log', async (t) => {
    t.after(() => remove('crashy'));
    pod('crashy', { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: BUSYBOX, command: ['sh', '-c', 'echo run; exit 1'] }] });
    const p = await waitForPod('crashy', (x) => x.status?.containerStatuses?.[0]?.restartCount >= 2 && x.status.containerStatuses[0].state.waiting?.reason === 'CrashLoopBackOff');
    assert.equal(p.status.phase, 'Running');
    assert.equal(p.status.containerStatuses[0].lastState.terminated.exitCode, 1);
    assert.equal(await readAll(await node.logs(p, { previous: true })), 'run\n');
    assert.equal(await readAll(await node.logs(p, {})), 'run\n');
  });

  test('a pod whose nodeSelector matches no node stays Pending as Unschedulable', async (t) => {
    t.after(() => remove('unschedulable'));
    pod('unschedulable', { nodeSelector: { disk: 'ssd' }, containers: [{ name: 'c', image: BUSYBOX }] });
    const p = await waitForPod('unschedulable', (x) => x.status?.conditions?.some((c: any) => c.type === 'PodScheduled'));
    const cond = p.status.conditions.find((c: any) => c.type === 'PodScheduled');
    assert.equal(cond.status, 'False');
    assert.equal(cond.reason, 'Unschedulable');
    assert.match(cond.message, /^0\/1 nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector\./);
    assert.equal(p.spec.nodeName, undefined);
  });

  test('an ordinary pod takes a ready sandbox and still has its own hostname', async (t) => {
    t.after(() => remove('pooled'));
    // the node keeps sandboxes ready once it is idle: wait until it has some
    const ready = await eventually('a sandbox made ready', () => {
      const sandboxes = podmanPodsOfTest().filter((n) => n.includes('-sandbox-'));
      return sandboxes.length > 0 && sandboxes;
    });
    assert.ok(ready.length > 0, 'no sandbox was made ready');
    const p = pod('pooled', { containers: [{ name: 'c', image: BUSYBOX, command: ['sh', '-c', 'hostname; echo "$(cat /etc/hostname)"; echo "$HOSTNAME"; sleep 600'] }] });
    const up = await waitForPod('pooled', running);
    assert.ok(up.status.podIP?.startsWith('10.88.'), up.status.podIP);
    const id = up.status.containerStatuses[0].containerID.replace('podman://', '');
    const podmanPod = execFileSync('podman', ['ps', '-a', '--pod', '--filter', `id=${id}`, '--format', '{{.PodName}}'], { encoding: 'utf8' }).trim();
    assert.ok(ready.includes(podmanPod), `${podmanPod} is not one of ${ready}`);
    // Running means the command runs: exec works at once
    const s = await node.exec(up, { container: 'c', command: ['cat', '/proc/1/cmdline'], stdin: false, stdout: true, stderr: true, tty: false });
    // sh has exec'd its last command: the container is well past its start
    assert.equal(await readAll(s.stdout), 'sleep\u0000600\u0000');
    await s.done;
    assert.equal(await readAll(await node.logs(up, {})), 'pooled\npooled\npooled\n');
    // removed from the store at once: the node removes the sandbox right after
    remove('pooled');
    await eventually('the taken sandbox gone with its pod', () => !podmanPodsOfTest().includes(podmanPod));
    assert.ok(p.metadata.uid);
  });

  test('images are looked up again after podman\'s image store changed', async (t) => {
    const image = `localhost/berth/node-cache-test-${process.pid}:1`;
    // only this name: `podman untag IMAGE` without names would strip busybox's own name too
    const untag = () => execFileSync('podman', ['untag', image, image], { stdio: 'ignore' });
    t.after(() => {
      remove('cached-a');
      remove('cached-b');
      try {
        untag();
      } catch {
        // not tagged
      }
    });
    execFileSync('podman', ['tag', BUSYBOX, image]);
    pod('cached-a', { containers: [{ name: 'c', image, command: ['true'] }] });
    assert.equal((await waitForPod('cached-a', phaseIs('Succeeded', 'Failed'))).status.phase, 'Succeeded');
    untag();
    pod('cached-b', { containers: [{ name: 'c', image, command: ['true'] }] });
    await waitForPod('cached-b', (x) => x.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ErrImagePull', 10_000);
    // a build (here a tag) while the pod backs off unblocks it
    execFileSync('podman', ['tag', BUSYBOX, image]);
    assert.equal((await waitForPod('cached-b', phaseIs('Succeeded', 'Failed'), 20_000)).status.phase, 'Succeeded');
  });

  test('follow streams new lines and ends with the container', async (t) => {
    t.after(() => remove('follow'));
    pod('follow', { containers: [{ name: 'c', image: BUSYBOX, command: ['sh', '-c', 'for i in 1 2 3; do echo line$i; sleep 0.2; done'] }] });
    const p = await waitForPod('follow', running);
    const text = await readAll(await node.logs(p, { follow: true }));
    assert.equal(text, 'line1\nline2\nline3\n');
    assert.ok(existsSync(stateDir));
  });
});
