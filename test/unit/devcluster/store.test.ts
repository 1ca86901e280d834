import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../../src/devcluster/api/errors.js';
import { resourceByKind } from '../../../src/devcluster/api/resources.js';
import { MemoryStore } from '../../../src/devcluster/api/store.js';
import type { KubeObject, WatchEvent } from '../../../src/devcluster/types.js';
import { thrownApiError } from '../../util/api-error.js';

const POD = resourceByKind('Pod');
const CM = resourceByKind('ConfigMap');
const NS = resourceByKind('Namespace');

const pod = (name: string, labels: Record<string, string> = {}, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'c', image: 'i' }] },
  ...extra,
});

const apiError = (fn: () => unknown): ApiError => thrownApiError(fn);

test('create assigns uid, name, timestamps and one increasing resourceVersion across kinds', () => {
  const s = new MemoryStore();
  const a = s.create(POD, 'ns', pod('a'));
  const b = s.create(CM, 'ns', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' } });
  assert.match(a.metadata.uid!, /^[0-9a-f-]{36}$/);
  assert.match(a.metadata.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(a.metadata.namespace, 'ns');
  assert.ok(Number(b.metadata.resourceVersion) > Number(a.metadata.resourceVersion));
  assert.equal(s.resourceVersion(), b.metadata.resourceVersion);
  const ns = s.create(NS, 'ignored', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', namespace: 'y' } });
  assert.equal(ns.metadata.namespace, undefined);
});

test('generateName appends 5 characters of the real alphabet; no name at all is 422', () => {
  const s = new MemoryStore();
  const o = s.create(POD, 'ns', { ...pod(''), metadata: { generateName: 'job-' } });
  assert.match(o.metadata.name!, /^job-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  const e = apiError(() => s.create(POD, 'ns', { ...pod(''), metadata: {} }));
  assert.equal(e.code, 422);
  assert.equal(e.message, 'Pod "" is invalid: metadata.name: Required value: name or generateName is required');
});

test('duplicate create is 409 AlreadyExists; get of a missing object is 404', () => {
  const s = new MemoryStore();
  s.create(POD, 'ns', pod('a'));
  const dup = apiError(() => s.create(POD, 'ns', pod('a')));
  assert.equal(dup.code, 409);
  assert.equal(dup.reason, 'AlreadyExists');
  s.create(POD, 'other', pod('a')); // same name, other namespace: fine
  const missing = apiError(() => s.get(POD, 'ns', 'nope'));
  assert.equal(missing.code, 404);
  assert.equal(missing.message, 'pods "nope" not found');
});

test('stored objects are copies: mutating a returned object changes nothing', () => {
  const s = new MemoryStore();
  const input = pod('a', { x: '1' });
  const created = s.create(POD, 'ns', input);
  input.metadata.labels!.x = '2';
  created.metadata.labels!.x = '3';
  assert.equal(s.get(POD, 'ns', 'a').metadata.labels!.x, '1');
});

test('update: stale resourceVersion is a Conflict; uid and creationTimestamp are kept', () => {
  const s = new MemoryStore();
  const a = s.create(POD, 'ns', pod('a'));
  const changed = { ...a, metadata: { ...a.metadata, uid: 'forged', labels: { v: '2' } } };
  const b = s.update(POD, 'ns', changed);
  assert.equal(b.metadata.uid, a.metadata.uid);
  assert.equal(b.metadata.creationTimestamp, a.metadata.creationTimestamp);
  assert.notEqual(b.metadata.resourceVersion, a.metadata.resourceVersion);
  const stale = apiError(() => s.update(POD, 'ns', { ...a, metadata: { ...a.metadata, labels: { v: '3' } } }));
  assert.equal(stale.code, 409);
  assert.equal(stale.reason, 'Conflict');
  assert.match(stale.message, /^Operation cannot be fulfilled on pods "a": the object has been modified/);
  assert.equal(apiError(() => s.update(POD, 'ns', pod('zz'))).code, 404);
});

test('a write that changes nothing keeps the resourceVersion and emits no event', () => {
  const s = new MemoryStore();
  const a = s.create(POD, 'ns', pod('a'));
  const events: WatchEvent[] = [];
  const h = s.watch(POD, 'ns', { resourceVersion: s.resourceVersion() }, (e) => events.push(e));
  const same = s.update(POD, 'ns', a);
  assert.equal(same.metadata.resourceVersion, a.metadata.resourceVersion);
  s.mutate(POD, 'ns', 'a', () => {});
  assert.equal(events.length, 0);
  h.stop();
});

test('status subresource: main updates keep .status, status updates write only .status', () => {
  const s = new MemoryStore();
  const a = s.create(POD, 'ns', { ...pod('a'), status: { phase: 'Pending' } });
  const main = s.update(POD, 'ns', { ...a, spec: { ...a.spec, activeDeadlineSeconds: 5 }, status: { phase: 'Running' } });
  assert.equal(main.status.phase, 'Pending');
  assert.equal(main.spec.activeDeadlineSeconds, 5);
  const st = s.update(POD, 'ns', { ...main, spec: { containers: [] }, status: { phase: 'Running' } }, { subresource: 'status' });
  assert.equal(st.status.phase, 'Running');
  assert.equal(st.spec.activeDeadlineSeconds, 5);
  assert.equal(st.spec.containers.length, 1);
  // kinds without a status subresource take the whole object
  const cm = s.create(CM, 'ns', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, status: { a: 1 } });
  assert.deepEqual(s.update(CM, 'ns', { ...cm, status: { a: 2 } }).status, { a: 2 });
});

test('mutate is read-modify-write without a conflict check', () => {
  const s = new MemoryStore();
  s.create(POD, 'ns', pod('a'));
  const m = s.mutate(POD, 'ns', 'a', (p) => {
    p.status = { phase: 'Running' };
    p.metadata.deletionTimestamp = '2030-01-01T00:00:00Z';
  });
  assert.equal(m.status.phase, 'Running');
  assert.equal(s.get(POD, 'ns', 'a').metadata.deletionTimestamp, '2030-01-01T00:00:00Z');
});

test('list: namespace filter, sorting by namespace then name, selectors', () => {
  const s = new MemoryStore();
  s.create(POD, 'b', pod('z', { app: 'web' }));
  s.create(POD, 'a', pod('y', { app: 'db' }));
  s.create(POD, 'a', pod('x', { app: 'web' }));
  assert.deepEqual(s.list(POD, undefined).items.map((p) => `${p.metadata.namespace}/${p.metadata.name}`), ['a/x', 'a/y', 'b/z']);
  assert.deepEqual(s.list(POD, 'a').items.map((p) => p.metadata.name), ['x', 'y']);
  assert.deepEqual(s.list(POD, undefined, { labelSelector: 'app=web' }).items.map((p) => p.metadata.name), ['x', 'z']);
  assert.deepEqual(s.list(POD, undefined, { fieldSelector: 'metadata.namespace=b' }).items.map((p) => p.metadata.name), ['z']);
  assert.equal(s.list(POD, undefined).resourceVersion, s.resourceVersion());
  assert.equal(apiError(() => s.list(POD, undefined, { fieldSelector: 'spec.image=x' })).code, 400);
});

test('list: limit and continue page through everything with remainingItemCount', () => {
  const s = new MemoryStore();
  for (const n of ['e', 'a', 'd', 'c', 'b']) s.create(POD, 'ns', pod(n));
  const p1 = s.list(POD, 'ns', { limit: 2 });
  assert.deepEqual(p1.items.map((p) => p.metadata.name), ['a', 'b']);
  assert.equal(p1.remainingItemCount, 3);
  assert.ok(p1.continue);
  // every page is the list at the first page's resourceVersion, as etcd serves it: what is made or deleted
  // between pages changes nothing in the pages that follow
  s.create(POD, 'ns', pod('bb'));
  s.remove(POD, 'ns', 'd');
  const p2 = s.list(POD, 'ns', { limit: 2, continue: p1.continue });
  assert.deepEqual(p2.items.map((p) => p.metadata.name), ['c', 'd']);
  assert.equal(p2.resourceVersion, p1.resourceVersion);
  assert.equal(p2.remainingItemCount, 1);
  const p3 = s.list(POD, 'ns', { limit: 2, continue: p2.continue });
  assert.deepEqual(p3.items.map((p) => p.metadata.name), ['e']);
  assert.equal(p3.continue, undefined);
  assert.deepEqual(s.list(POD, 'ns').items.map((p) => p.metadata.name), ['a', 'b', 'bb', 'c', 'e'], 'a new list sees the changes');
  assert.equal(apiError(() => s.list(POD, 'ns', { continue: 'garbage!' })).code, 400);
});

test('a continue token older than the kept history is 410 Expired', () => {
  const s = new MemoryStore({ historyLimit: 3 });
  for (const n of ['a', 'b', 'c']) s.create(POD, 'ns', pod(n));
  const p1 = s.list(POD, 'ns', { limit: 1 });
  for (const n of ['d', 'e', 'f', 'g']) s.create(POD, 'ns', pod(n));
  const e = apiError(() => s.list(POD, 'ns', { limit: 1, continue: p1.continue }));
  assert.equal(e.code, 410);
  assert.equal(e.reason, 'Expired');
  assert.equal(e.message, 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
});

test('watch without resourceVersion: synthetic ADDED for current objects, then live events in order', () => {
  const s = new MemoryStore();
  s.create(POD, 'ns', pod('a'));
  s.create(POD, 'other', pod('b'));
  const events: string[] = [];
  const h = s.watch(POD, 'ns', {}, (e) => events.push(`${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`));
  assert.equal(events.length, 1);
  assert.match(events[0]!, /^ADDED a /);
  s.create(POD, 'ns', pod('c'));
  s.mutate(POD, 'ns', 'c', (p) => (p.metadata.labels = { x: 'y' }));
  const removed = s.remove(POD, 'ns', 'c');
  s.create(POD, 'other', pod('d'));
  assert.deepEqual(events.slice(1).map((e) => e.split(' ').slice(0, 2).join(' ')), ['ADDED c', 'MODIFIED c', 'DELETED c']);
  assert.equal(events[3], `DELETED c ${removed.metadata.resourceVersion}`);
  h.stop();
  s.create(POD, 'ns', pod('e'));
  assert.equal(events.length, 4);
});

test('watch from a resourceVersion replays what came after it; older than history is 410', () => {
  const s = new MemoryStore({ historyLimit: 3 });
  const a = s.create(POD, 'ns', pod('a'));
  s.create(POD, 'ns', pod('b'));
  s.create(POD, 'ns', pod('c'));
  const seen: string[] = [];
  const h = s.watch(POD, 'ns', { resourceVersion: a.metadata.resourceVersion }, (e) => seen.push(`${e.type} ${e.object.metadata.name}`));
  assert.deepEqual(seen, ['ADDED b', 'ADDED c']);
  h.stop();
  s.create(POD, 'ns', pod('d'));
  s.create(POD, 'ns', pod('e'));
  const e = apiError(() => s.watch(POD, 'ns', { resourceVersion: a.metadata.resourceVersion }, () => {}));
  assert.equal(e.code, 410);
  assert.match(e.message, /^too old resource version: \d+ \(\d+\)$/);
  assert.equal(apiError(() => s.watch(POD, 'ns', { resourceVersion: 'abc' }, () => {})).code, 400);
});

test('watch with a selector: leaving it is DELETED, entering it is ADDED', () => {
  const s = new MemoryStore();
  s.create(POD, 'ns', pod('a', { app: 'web' }));
  const seen: string[] = [];
  const h = s.watch(POD, 'ns', { labelSelector: 'app=web', resourceVersion: s.resourceVersion() }, (e) => seen.push(`${e.type} ${e.object.metadata.labels?.app}`));
  s.mutate(POD, 'ns', 'a', (p) => (p.metadata.labels = { app: 'db' }));
  s.mutate(POD, 'ns', 'a', (p) => (p.metadata.labels = { app: 'db', x: '1' }));
  s.mutate(POD, 'ns', 'a', (p) => (p.metadata.labels = { app: 'web' }));
  // the DELETED carries the last matching state
  assert.deepEqual(seen, ['DELETED web', 'ADDED web']);
  h.stop();
  const phases: string[] = [];
  const h2 = s.watch(POD, 'ns', { fieldSelector: 'status.phase=Running', resourceVersion: s.resourceVersion() }, (e) => phases.push(e.type));
  s.mutate(POD, 'ns', 'a', (p) => (p.status = { phase: 'Running' }), { subresource: 'status' });
  s.remove(POD, 'ns', 'a');
  assert.deepEqual(phases, ['ADDED', 'DELETED']);
  h2.stop();
});

test('a watcher writing from its callback does not reorder what other watchers see', () => {
  const s = new MemoryStore();
  const order: string[] = [];
  const h1 = s.watch(POD, 'ns', {}, (e) => {
    if (e.type === 'ADDED' && e.object.metadata.name === 'a') s.create(POD, 'ns', pod('b'));
  });
  const h2 = s.watch(POD, 'ns', {}, (e) => order.push(`${e.object.metadata.name}@${e.object.metadata.resourceVersion}`));
  s.create(POD, 'ns', pod('a'));
  assert.equal(order.length, 2);
  assert.match(order[0]!, /^a@/);
  assert.match(order[1]!, /^b@/);
  h1.stop();
  h2.stop();
});
