// runWorkload's ordering against a fake cluster whose every call waits until the test lets it go:
// what goes out at once, what must wait (the pod for its NetworkPolicy, ConfigMaps and the attach
// check), and how cleanup runs (all at once after the container ended, pod first otherwise, in the
// background only when the caller takes it). The fake container ends before berth would attach,
// so no stream is opened.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { IncomingMessage } from 'node:http';
import { PassThrough, Readable, Writable } from 'node:stream';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { WarmPool } from '../../../src/runtime/warm-pool.js';
import type { KubeCluster } from '../../../src/kube/cluster.js';
import { KubeError } from '../../../src/kube/errors.js';
import { RunError, runWorkload, type RunCluster } from '../../../src/runtime/run.js';
import type { Workload } from '../../../src/runtime/workload.js';
import { scratchDir } from '../../util/scratch.js';

type Kind = 'pods' | 'configmaps' | 'networkpolicies';

/** A call that is held until released; `reached` resolves once the call was made. */
class Gate {
  private release!: (fail?: Error) => void;
  private entered!: () => void;
  readonly reached = new Promise<void>((r) => (this.entered = r));
  private readonly open = new Promise<void>((resolve, reject) => (this.release = (fail) => (fail ? reject(fail) : resolve())));
  called = false;
  pass(): Promise<void> {
    this.called = true;
    this.entered();
    return this.open;
  }
  let(fail?: Error): void {
    this.release(fail);
  }
}

function fakeCluster(opts: { attachAllowed?: boolean; container?: 'terminated' | 'pending' } = {}) {
  const gates = new Map<string, Gate>();
  const gate = (name: string): Gate => {
    let g = gates.get(name);
    if (!g) gates.set(name, (g = new Gate()));
    return g;
  };
  let onPod: ((pod: V1Pod, type: string) => boolean) | undefined;
  const podState = (): V1Pod =>
    opts.container === 'pending'
      ? {
          status: {
            phase: 'Pending',
            conditions: [{ type: 'PodScheduled', status: 'True' }],
            containerStatuses: [{ name: 'main', image: 'fn', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }],
          },
        }
      : {
          status: {
            phase: 'Succeeded',
            containerStatuses: [{ name: 'main', image: 'fn', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 3 } } }],
          },
        };
  const deleted: Kind[] = [];
  const kube: KubeCluster = {
    kc: {} as KubeConfig,
    namespace: 'ci',
    server: 'https://fake',
    async createNetworkPolicy(np) {
      await gate('create networkpolicy').pass();
      return np;
    },
    async createConfigMap(cm) {
      await gate('create configmap').pass();
      return cm;
    },
    async createPod(pod) {
      await gate('create pod').pass();
      // the watch sees the pod right after it exists
      queueMicrotask(() => onPod?.(podState(), 'ADDED'));
      return pod;
    },
    async deleteQuietly(kind) {
      await gate(`delete ${kind}`).pass();
      deleted.push(kind);
    },
    // a cluster that serves stdout and stderr apart: the container wrote one line to stdout
    servesSplitLogs: () => Promise.resolve(true),
    readPodLog: (_name, _container, q) => Promise.resolve(Buffer.from(q?.stream === 'Stderr' ? '' : 'the log\n')),
    openPodLog: (_name, _container, q) =>
      Promise.resolve(Readable.from([Buffer.from(q?.stream === 'Stderr' ? '' : 'the log\n')]) as unknown as IncomingMessage),
    readPodTemplate: () => Promise.reject(new Error('not used')),
    annotateNetworkPolicy: () => Promise.reject(new Error('not used')),
    watchPod(_name, cb, signal) {
      onPod = cb;
      return new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(new KubeError('aborted'))));
    },
    async serverVersion() {
      await gate('version').pass();
      return { major: 1, minor: 32 };
    },
    async canI() {
      await gate('attach check').pass();
      return opts.attachAllowed ?? true;
    },
  };
  return { kube, gate, deleted, called: (name: string) => gates.get(name)?.called ?? false };
}

/** Lets every callback that is already due run: the code under test has gone as far as it can. */
const settle = () => new Promise<void>((r) => setImmediate(r));
const sink = () => new Writable({ write: (_c, _e, cb) => cb() });
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A stdin-reading function with --network none and one small read-only mount (a ConfigMap). */
function workload(): Workload {
  const dir = scratchDir('berth-run-');
  dirs.push(dir);
  writeFileSync(path.join(dir, 'a.txt'), 'a');
  return { image: 'fn', stdin: true, network: 'none', mounts: [{ source: dir, target: '/in', readOnly: true }] };
}

function start(fake: ReturnType<typeof fakeCluster>, extra: Partial<RunCluster> = {}, signal?: AbortSignal, w: Partial<Workload> = {}) {
  const stdout = new PassThrough();
  const stdin = new PassThrough();
  stdin.end('input');
  const run = runWorkload({ ...workload(), ...w }, { stdin, stdout, stderr: sink(), signal }, { kube: fake.kube, owner: 'test', ...extra });
  return { run, stdout };
}

test('side objects, the version and the attach check go out together; the pod waits for the NetworkPolicy', { timeout: 5000 }, async () => {
  const fake = fakeCluster();
  const { run } = start(fake);
  // all four are under way before any has answered
  await Promise.all(['create networkpolicy', 'create configmap', 'version', 'attach check'].map((n) => fake.gate(n).reached));
  for (const n of ['version', 'attach check', 'create configmap']) fake.gate(n).let();
  await settle();
  assert.equal(fake.called('create pod'), false, 'the pod was created before its NetworkPolicy existed');
  fake.gate('create networkpolicy').let();
  await fake.gate('create pod').reached;
  fake.gate('create pod').let();
  for (const k of ['pods', 'configmaps', 'networkpolicies']) fake.gate(`delete ${k}`).let();
  assert.deepEqual(await run, { exitCode: 3 });
});

// with a warm pool, the check goes out only once no warm pod served the call (a TTY call is one none can serve)
for (const [how, extra, w] of [
  ['', {}, {}],
  [' (a pool, a call no warm pod serves)', { pool: new WarmPool() }, { tty: true }],
] as const) {
  test(`the pod also waits for the attach check, and a denied attach creates no pod${how}`, { timeout: 5000 }, async () => {
    const fake = fakeCluster({ attachAllowed: false });
    const { run } = start(fake, extra, undefined, w);
    for (const n of ['version', 'create configmap', 'create networkpolicy']) fake.gate(n).let();
    await fake.gate('attach check').reached;
    await settle();
    assert.equal(fake.called('create pod'), false);
    fake.gate('attach check').let();
    // the side objects that exist are deleted before the error comes back
    await Promise.all([fake.gate('delete configmaps').reached, fake.gate('delete networkpolicies').reached]);
    fake.gate('delete configmaps').let();
    fake.gate('delete networkpolicies').let();
    await assert.rejects(run, (e: RunError) => e instanceof RunError && /forbidden: cannot create pods\/attach in namespace ci/.test(e.message));
    assert.equal(fake.called('create pod'), false);
    assert.deepEqual(fake.deleted.sort(), ['configmaps', 'networkpolicies']);
  });
}

test('a failed side object: its sibling still being created is deleted once it exists', { timeout: 5000 }, async () => {
  const fake = fakeCluster();
  const { run } = start(fake);
  for (const n of ['version', 'attach check']) fake.gate(n).let();
  await fake.gate('create networkpolicy').reached;
  fake.gate('create configmap').let(new KubeError('configmaps is forbidden'));
  await settle();
  assert.equal(fake.called('delete networkpolicies'), false, 'deleted before its creation had answered');
  fake.gate('create networkpolicy').let();
  await fake.gate('delete networkpolicies').reached;
  fake.gate('delete networkpolicies').let();
  await assert.rejects(run, /configmaps is forbidden/);
  assert.deepEqual(fake.deleted, ['networkpolicies']);
  assert.equal(fake.called('create pod'), false);
});

test('after the container ended: everything is deleted at once, and a caller with background gets the exit code first', { timeout: 5000 }, async () => {
  const fake = fakeCluster();
  let background: Promise<void> | undefined;
  const { run, stdout } = start(fake, { background: (p) => (background = p) });
  for (const n of ['version', 'attach check', 'create configmap', 'create networkpolicy', 'create pod']) fake.gate(n).let();
  // the exit code is back while no deletion has answered yet
  assert.deepEqual(await run, { exitCode: 3 });
  assert.equal(stdout.read()?.toString(), 'the log\n');
  assert.ok(background, 'the deletions were not handed over');
  // all three were sent before any answered
  await Promise.all(['pods', 'configmaps', 'networkpolicies'].map((k) => fake.gate(`delete ${k}`).reached));
  assert.deepEqual(fake.deleted, []);
  for (const k of ['networkpolicies', 'configmaps', 'pods']) fake.gate(`delete ${k}`).let();
  await background;
  assert.deepEqual(fake.deleted.sort(), ['configmaps', 'networkpolicies', 'pods']);
});

test('interrupted while the pod starts: deleted before returning, even with background, the pod before its NetworkPolicy', { timeout: 5000 }, async () => {
  const fake = fakeCluster({ container: 'pending' });
  const abort = new AbortController();
  let handed = false;
  const { run } = start(fake, { background: () => (handed = true) }, abort.signal);
  for (const n of ['version', 'attach check', 'create configmap', 'create networkpolicy', 'create pod']) fake.gate(n).let();
  await fake.gate('create pod').reached;
  await settle();
  abort.abort();
  await fake.gate('delete pods').reached;
  await settle();
  assert.equal(fake.called('delete networkpolicies'), false, 'the NetworkPolicy went while the pod could still run');
  let returned = false;
  void run.catch(() => (returned = true));
  fake.gate('delete pods').let();
  await Promise.all([fake.gate('delete configmaps').reached, fake.gate('delete networkpolicies').reached]);
  assert.equal(returned, false, 'returned before the side objects were deleted');
  fake.gate('delete configmaps').let();
  fake.gate('delete networkpolicies').let();
  await assert.rejects(run, (e: RunError) => e instanceof RunError && e.exitCode === 130);
  assert.equal(handed, false);
  assert.equal(fake.deleted[0], 'pods');
  assert.deepEqual(fake.deleted.slice(1).sort(), ['configmaps', 'networkpolicies']);
});
