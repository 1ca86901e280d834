// The warm pool's promises without a cluster: a pod goes to exactly one call, only for its own plan, never
// when dead; idle pods, evicted plans and a drain delete what they hold, starts still in flight included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeCluster } from '../../../src/kube/cluster.js';
import { WarmPool, type WarmPod } from '../../../src/runtime/warm-pool.js';

function fakeKube(deleted: string[]): KubeCluster {
  return { namespace: 'ns', deleteQuietly: async (kind: string, name: string) => void deleted.push(`${kind}/${name}`) } as unknown as KubeCluster;
}

let n = 0;
function pod(key: string, kube: KubeCluster, alive = () => true): WarmPod {
  const name = `warm-${++n}`;
  return {
    key,
    image: 'fn',
    podName: name,
    created: [['pods', name]],
    kube,
    readyAt: Date.now(),
    alive,
    tracker: {} as WarmPod['tracker'],
    release: () => undefined,
  };
}

/** Resolves once the pool holds a ready pod for `key` (refill starts in the background). */
async function settled(): Promise<void> {
  await new Promise((r) => setImmediate(r));
}

test('a warm pod goes to exactly one call, and only to its own plan', async () => {
  const deleted: string[] = [];
  const kube = fakeKube(deleted);
  const pool = new WarmPool({ perPlan: 1, idleSeconds: 60 });
  assert.equal(await pool.take('a'), undefined);
  pool.refill('a', async () => pod('a', kube));
  await settled();
  assert.equal(await pool.take('b'), undefined, "another plan got plan a's pod");
  const first = await pool.take('a');
  assert.ok(first);
  assert.equal(await pool.take('a'), undefined, 'the same pod was handed out twice');
  assert.deepEqual(deleted, []);
  await pool.drain();
});

test('refill keeps at most perPlan pods per plan, counting starts in flight', async () => {
  const kube = fakeKube([]);
  const pool = new WarmPool({ perPlan: 2, idleSeconds: 60 });
  let starts = 0;
  const start = async () => (starts++, pod('a', kube));
  pool.refill('a', start);
  pool.refill('a', start);
  await settled();
  pool.refill('a', start);
  assert.equal(starts, 2);
  assert.equal(pool.list().length, 2);
  await pool.drain();
});

test('a plan called in a burst keeps as many pods as its calls of the last minute, up to burstMax; other plans keep perPlan', async () => {
  const kube = fakeKube([]);
  const pool = new WarmPool({ perPlan: 2, burstMax: 4, idleSeconds: 60 });
  const start = async () => pod('a', kube);
  for (let call = 1; call <= 6; call++) {
    await pool.take('a');
    pool.refill('a', start);
    await settled();
    assert.equal(pool.sizeOf('a'), Math.min(4, Math.max(2, call)), `after call ${call}`);
  }
  assert.equal(pool.list().filter((p) => p.key === 'a').length, 4, 'the burst of six calls leaves four pods ready');
  assert.equal(pool.sizeOf('b'), 2, 'a plan called once keeps perPlan');
  assert.equal(new WarmPool({ perPlan: 0, burstMax: 8 }).sizeOf('a'), 0, 'no pool: no burst either');
  assert.equal(new WarmPool({ perPlan: 3, burstMax: 1 }).burstMax, 3, 'the burst bound is never below perPlan');
  await pool.drain();
});

test('a warm pod whose container died is never handed out: it is deleted and the call gets none', async () => {
  const deleted: string[] = [];
  const kube = fakeKube(deleted);
  const pool = new WarmPool({ perPlan: 1, idleSeconds: 60 });
  let alive = true;
  pool.refill('a', async () => pod('a', kube, () => alive));
  await settled();
  alive = false;
  assert.equal(await pool.take('a'), undefined);
  await settled();
  assert.equal(deleted.length, 1);
});

test('idle pods are deleted after the idle time; plans beyond maxPlans are dropped, oldest first', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const deleted: string[] = [];
  const kube = fakeKube(deleted);
  const pool = new WarmPool({ perPlan: 1, idleSeconds: 5, maxPlans: 2 });
  pool.refill('a', async () => pod('a', kube));
  await settled();
  pool.refill('b', async () => pod('b', kube));
  pool.refill('c', async () => pod('c', kube));
  await settled();
  assert.deepEqual(pool.list().map((p) => p.pod).length, 2, 'plan a should have been dropped');
  assert.equal(deleted.length, 1);
  t.mock.timers.tick(5000);
  await settled();
  assert.equal(pool.list().length, 0);
  assert.equal(deleted.length, 3);
});

test('drain deletes every pod, and one still starting once it exists; nothing is taken afterwards', async () => {
  const deleted: string[] = [];
  const kube = fakeKube(deleted);
  const pool = new WarmPool({ perPlan: 1, idleSeconds: 60 });
  pool.refill('a', async () => pod('a', kube));
  await settled();
  let land!: (p: WarmPod) => void;
  pool.refill('b', () => new Promise<WarmPod>((resolve) => (land = resolve)));
  const drained = pool.drain();
  land(pod('b', kube));
  assert.equal(await drained, 1);
  assert.equal(deleted.length, 2);
  pool.refill('a', async () => pod('a', kube));
  await settled();
  assert.equal(await pool.take('a'), undefined);
});

test('a call that finds no pod ready claims one still starting and gets it; two calls never share it', async () => {
  const kube = fakeKube([]);
  const pool = new WarmPool({ perPlan: 1, idleSeconds: 60 });
  let land!: (p: WarmPod) => void;
  pool.refill('a', () => new Promise<WarmPod>((resolve) => (land = resolve)));
  const first = pool.take('a');
  const second = pool.take('a');
  const starting = pod('a', kube);
  land(starting);
  assert.equal(await first, starting);
  assert.equal(await second, undefined, 'a claimed pod went to a second call');
  assert.deepEqual(pool.list(), [], 'a claimed pod also stayed in the pool');
  await pool.drain();
});

test('pool ls lists only warm pods a call could take: one whose process ended is not shown', async () => {
  const kube = fakeKube([]);
  const pool = new WarmPool({ perPlan: 2, idleSeconds: 60 });
  let living = true;
  let made = 0;
  pool.refill('a', async () => pod('a', kube, made++ === 0 ? () => living : () => true));
  await settled();
  assert.equal(pool.list().length, 2);
  living = false;
  assert.equal(pool.list().length, 1, 'a dead warm pod is listed');
  await pool.drain();
});

test('forgetPlan: a plan whose call failed keeps no warm pods, ready or still starting, and its failed starts say nothing', async () => {
  const deleted: string[] = [];
  const kube = fakeKube(deleted);
  const errors: string[] = [];
  const pool = new WarmPool({ perPlan: 2, idleSeconds: 60, onError: (line) => errors.push(line) });
  pool.refill('a', async () => pod('a', kube));
  await settled();
  assert.equal(pool.list().length, 2);
  let land!: (p: WarmPod) => void;
  let fail!: (e: Error) => void;
  pool.forgetPlan('a');
  assert.equal(pool.list().length, 0);
  assert.equal(deleted.length, 2, 'the ready pods are deleted');
  // starts in flight when the plan is forgotten: one lands (deleted), one fails (quietly)
  let starts = 0;
  pool.refill('b', () => (starts++ === 0 ? new Promise<WarmPod>((resolve) => (land = resolve)) : new Promise<WarmPod>((_resolve, reject) => (fail = reject))));
  assert.equal(starts, 2);
  pool.forgetPlan('b');
  land(pod('b', kube));
  fail(new Error('ErrImagePull'));
  await settled();
  await settled();
  assert.equal(pool.list().length, 0);
  assert.equal(deleted.length, 3, 'the pod that landed after is deleted');
  assert.deepEqual(errors, []);
  await pool.drain();
});

test("a discarded pod releases its share of the plan's policy once its deletion is over, saying whether it was deleted", async () => {
  const order: string[] = [];
  const failing = { namespace: 'ns', deleteQuietly: async () => Promise.reject(new Error('the cluster is down')) } as unknown as KubeCluster;
  const kube = { namespace: 'ns', deleteQuietly: async (kind: string, name: string) => void order.push(`deleted ${kind}/${name}`) } as unknown as KubeCluster;
  const pool = new WarmPool({ perPlan: 2, idleSeconds: 60 });
  const held = (p: WarmPod): WarmPod => ({ ...p, policy: { podLabels: {}, release: async (deleted) => void order.push(`released ${p.podName} ${deleted}`) } });
  const gone = held(pod('a', kube));
  const stuck = held(pod('a', failing));
  const starts = [gone, stuck];
  pool.refill('a', async () => starts.shift() as WarmPod);
  await settled();
  await pool.drain();
  assert.deepEqual(order, [`deleted pods/${gone.podName}`, `released ${gone.podName} true`, `released ${stuck.podName} false`]);
});
