// PersistentVolumeClaims in the dev cluster as a one-node cluster with a default dynamic provisioner serves
// them: bound at once, pods wait for their claims, a claim in use is not removed under its pod, and a
// claim made again after a delete gets a volume of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, existsSync, rmSync } from 'node:fs';
import { applyCreateDefaults } from '../../../src/devcluster/api/defaults.js';
import { resourceByKind } from '../../../src/devcluster/api/resources.js';
import { MemoryStore } from '../../../src/devcluster/api/store.js';
import { ClaimController, claimVolumeDir, PVC_PROTECTION } from '../../../src/devcluster/node/claim-controller.js';
import { EventRecorder } from '../../../src/devcluster/node/events.js';
import { checkFit } from '../../../src/devcluster/node/scheduler.js';
import type { KubeObject, WatchEvent } from '../../../src/devcluster/types.js';
import { scratchDir } from '../../util/scratch.js';

const PVC = resourceByKind('PersistentVolumeClaim');
const POD = resourceByKind('Pod');
const EVENT = resourceByKind('Event');

/** The node handles the store's events after the write that made them (podman-node.ts defers them): flush() does that here. */
function setUp(): { store: MemoryStore; claims: ClaimController; dir: string; bound: string[]; flush(): void; events: () => Array<{ reason: string; message: string }>; done(): void } {
  const store = new MemoryStore();
  const dir = scratchDir('claims-');
  const bound: string[] = [];
  const claims = new ClaimController(store, new EventRecorder(store, 'node'), dir, () => bound.push('bound'));
  const queue: WatchEvent[] = [];
  store.watch(PVC, undefined, {}, (e: WatchEvent) => queue.push(e));
  const flush = (): void => {
    for (let e = queue.shift(); e; e = queue.shift()) claims.onClaim(e);
  };
  return { store, claims, dir, bound, flush, events: () => store.list(EVENT, 'ci').items.map((e) => ({ reason: e.reason, message: e.message })), done: () => rmSync(dir, { recursive: true, force: true }) };
}

function newClaim(t: { store: MemoryStore; flush(): void }, name: string, spec: Record<string, unknown> = {}): KubeObject {
  const { store } = t;
  const obj: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'ci' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } };
  applyCreateDefaults(PVC, obj, { allocateClusterIp: () => '' });
  const made = store.create(PVC, 'ci', obj);
  t.flush();
  return made;
}

test('a claim without a class is bound at once to a volume of its own; one naming a class that does not exist stays Pending', () => {
  const t = setUp();
  const { store, bound, events, done } = t;
  try {
    const made = newClaim(t, 'cache');
    const c = store.get(PVC, 'ci', 'cache');
    assert.deepEqual(made.metadata.finalizers, [PVC_PROTECTION], 'StorageObjectInUseProtection');
    assert.equal(c.spec.volumeName, `pvc-${c.metadata.uid}`);
    assert.deepEqual(c.status, { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } });
    assert.equal(bound.length, 1);
    newClaim(t, 'fast', { storageClassName: 'fast' });
    assert.equal(store.get(PVC, 'ci', 'fast').status.phase, 'Pending');
    assert.deepEqual(events(), [{ reason: 'ProvisioningFailed', message: 'storageclass.storage.k8s.io "fast" not found' }]);
  } finally {
    done();
  }
});

test('the scheduler waits for a pod\'s claims: missing, unbound, being deleted', () => {
  const t = setUp();
  const { store, done } = t;
  try {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, status: { allocatable: { cpu: '2', memory: '1Gi', pods: '110' } } };
    const pod = (claim: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ci' }, spec: { containers: [{}], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: claim } }] } });
    const lookup = (ns: string, name: string) => store.tryGet(PVC, ns, name);
    const tail = '. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';
    assert.deepEqual(checkFit(pod('nope'), node, [], lookup), { fits: false, message: `0/1 nodes are available: persistentvolumeclaim "nope" not found${tail}` });
    newClaim(t, 'slow', { storageClassName: 'slow' });
    assert.deepEqual(checkFit(pod('slow'), node, [], lookup), { fits: false, message: `0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims${tail}` });
    newClaim(t, 'cache');
    assert.deepEqual(checkFit(pod('cache'), node, [], lookup), { fits: true });
    store.mutate(PVC, 'ci', 'cache', (o) => void (o.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'));
    assert.deepEqual(checkFit(pod('cache'), node, [], lookup), { fits: false, message: `0/1 nodes are available: persistentvolumeclaim "cache" is being deleted${tail}` });
  } finally {
    done();
  }
});

test('a deleted claim stays while a pod that may run uses it, then goes with its data; made again, it starts empty', () => {
  const t = setUp();
  const { store, claims, dir, flush, done } = t;
  try {
    const first = store.get(PVC, 'ci', newClaim(t, 'cache').metadata.name!);
    const volume = claimVolumeDir(dir, first);
    mkdirSync(volume, { recursive: true });
    store.create(POD, 'ci', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'task', namespace: 'ci' }, spec: { containers: [{}], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'cache' } }] }, status: { phase: 'Running' } });
    store.mutate(PVC, 'ci', 'cache', (o) => void (o.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'));
    flush();
    assert.ok(store.tryGet(PVC, 'ci', 'cache'), 'kept while the pod runs');
    assert.ok(existsSync(volume));
    store.mutate(POD, 'ci', 'task', (p) => void (p.status.phase = 'Succeeded'), { subresource: 'status' });
    claims.onPodsChanged();
    flush();
    assert.equal(store.tryGet(PVC, 'ci', 'cache'), undefined, 'gone once its pod ended');
    assert.equal(existsSync(volume), false, 'its volume is deleted with it');
    const again = store.get(PVC, 'ci', newClaim(t, 'cache').metadata.name!);
    assert.notEqual(claimVolumeDir(dir, again), volume, 'a claim made again has a volume of its own');
  } finally {
    done();
  }
});
