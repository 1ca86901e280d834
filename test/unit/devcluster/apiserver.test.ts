// The API server in-process over HTTPS, driven by @kubernetes/client-node as a real client and by raw
// requests where the wire format itself is the subject.
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { ApiException, CoreV1Api, KubeConfig, PatchStrategy, Watch, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { badRequest } from '../../../src/devcluster/api/errors.js';
import { resourceByKind } from '../../../src/devcluster/api/resources.js';
import { MemoryStore } from '../../../src/devcluster/api/store.js';
import { ApiServer } from '../../../src/devcluster/server/apiserver.js';
import { TokenAuthenticator } from '../../../src/devcluster/server/auth.js';
import { RbacAuthorizer } from '../../../src/devcluster/server/rbac.js';
import { generateCa, issueServerCert } from '../../../src/devcluster/server/tls.js';
import { noFaults, type KubeObject, type NodeRuntime } from '../../../src/devcluster/types.js';

const ADMIN_TOKEN = 'admin-token';
const BOB_TOKEN = 'bob-token';
const POD = resourceByKind('Pod');

const ca = generateCa();
const serverCert = issueServerCert(ca, ['127.0.0.1', 'localhost']);
const store = new MemoryStore({ historyLimit: 200 });
const faults = noFaults();

const node: NodeRuntime = {
  nodeName: 'test-node',
  start: async () => {},
  stop: async () => {},
  exec: async () => {
    throw badRequest('no exec in this test');
  },
  attach: async () => {
    throw badRequest('no attach in this test');
  },
  logs: async (pod, opts) => Readable.from([`log of ${pod.metadata.name}/${opts.container}\n`]),
  portForward: async () => {
    throw new Error('no port-forward in this test');
  },
};

const server = new ApiServer({
  store,
  node,
  authenticator: new TokenAuthenticator([
    { name: 'admin', token: ADMIN_TOKEN, groups: ['system:masters'] },
    { name: 'bob', token: BOB_TOKEN, groups: [] },
  ]),
  authorizer: new RbacAuthorizer(store, new Map()),
  faults,
  tls: { cert: serverCert.certPem, key: serverCert.keyPem },
  maxBodyBytes: 64 * 1024,
  caPem: ca.certPem,
});
let port = 0;

function kubeConfig(token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'dev', server: `https://127.0.0.1:${port}`, caData: Buffer.from(ca.certPem).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'dev', cluster: 'dev', user: 'u' }],
    currentContext: 'dev',
  });
  return kc;
}

let admin: CoreV1Api;
let bob: CoreV1Api;

before(async () => {
  port = await server.listen(0);
  admin = kubeConfig(ADMIN_TOKEN).makeApiClient(CoreV1Api);
  bob = kubeConfig(BOB_TOKEN).makeApiClient(CoreV1Api);
});

after(() => server.close());

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function raw(method: string, path: string, opts: { token?: string | null; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
    const req = httpsRequest({ host: '127.0.0.1', port, method, path, headers, ca: ca.certPem }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

async function apiError(p: Promise<unknown>): Promise<{ code: number; status: any }> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiException, `expected ApiException, got ${e}`);
    return { code: e.code, status: typeof e.body === 'string' ? JSON.parse(e.body) : e.body };
  }
  assert.fail('expected the request to fail');
}

const podBody = (name: string, extra: Partial<V1Pod> = {}): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'web' } },
  spec: { containers: [{ name: 'main', image: 'localhost/berth/busybox:1' }] },
  ...extra,
});

async function createNamespace(name: string): Promise<void> {
  await admin.createNamespace({ body: { metadata: { name } } });
}

test('health endpoints answer ok without a token; everything else needs one', async () => {
  for (const p of ['/healthz', '/livez', '/readyz']) {
    const r = await raw('GET', p, { token: null });
    assert.equal(r.status, 200);
    assert.equal(r.body, 'ok');
  }
  const anon = await raw('GET', '/api/v1/namespaces', { token: null });
  assert.equal(anon.status, 401);
  assert.equal(JSON.parse(anon.body).reason, 'Unauthorized');
  const unknown = await apiError(kubeConfig('wrong').makeApiClient(CoreV1Api).listNamespace());
  assert.equal(unknown.code, 401);
});

test('built-in namespaces, default ServiceAccounts, kube-root-ca.crt and the kubernetes Service exist', async () => {
  const names = (await admin.listNamespace()).items.map((n) => n.metadata!.name);
  for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) assert.ok(names.includes(n), n);
  await createNamespace('fresh');
  const waitFor = async <T>(f: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await f();
      } catch (e) {
        if (!(e instanceof ApiException && e.code === 404)) throw e;
        await new Promise((r) => setImmediate(r));
      }
    }
  };
  const sa = await waitFor(() => admin.readNamespacedServiceAccount({ name: 'default', namespace: 'fresh' }));
  assert.equal(sa.metadata!.namespace, 'fresh');
  const cm = await waitFor(() => admin.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: 'fresh' }));
  assert.equal(cm.data!['ca.crt'], ca.certPem);
  const svc = await admin.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
  assert.equal(svc.spec!.clusterIP, '10.96.0.1');
});

test('create, get and list pods; the server fills in defaults and generated names', async () => {
  const created = await admin.createNamespacedPod({ namespace: 'default', body: podBody('web-1') });
  assert.ok(created.metadata!.uid);
  assert.equal(created.spec!.restartPolicy, 'Always');
  assert.equal(created.spec!.containers[0]!.imagePullPolicy, 'IfNotPresent');
  assert.equal(created.status!.phase, 'Pending');
  const generated = await admin.createNamespacedPod({ namespace: 'default', body: { ...podBody(''), metadata: { generateName: 'gen-' } } });
  assert.match(generated.metadata!.name!, /^gen-[a-z0-9]{5}$/);
  const got = await admin.readNamespacedPod({ name: 'web-1', namespace: 'default' });
  assert.equal(got.metadata!.resourceVersion, created.metadata!.resourceVersion);
  const list = await admin.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
  assert.ok(list.metadata!.resourceVersion);
  assert.deepEqual(list.items.map((p) => p.metadata!.name).sort(), ['web-1']);
  const missing = await apiError(admin.readNamespacedPod({ name: 'nope', namespace: 'default' }));
  assert.equal(missing.code, 404);
  assert.equal(missing.status.message, 'pods "nope" not found');
  const dup = await apiError(admin.createNamespacedPod({ namespace: 'default', body: podBody('web-1') }));
  assert.equal(dup.code, 409);
  assert.equal(dup.status.reason, 'AlreadyExists');
});

test('list chunking: limit and continue', async () => {
  await createNamespace('paged');
  for (const n of ['a', 'b', 'c']) await admin.createNamespacedConfigMap({ namespace: 'paged', body: { metadata: { name: `cm-${n}` } } });
  // the namespace controller adds kube-root-ca.crt asynchronously: page through whatever is there
  const seen: string[] = [];
  let cont: string | undefined;
  do {
    const page = await admin.listNamespacedConfigMap({ namespace: 'paged', limit: 2, _continue: cont });
    assert.ok(page.items.length <= 2);
    seen.push(...page.items.map((c) => c.metadata!.name!));
    cont = page.metadata!._continue;
  } while (cont);
  for (const n of ['cm-a', 'cm-b', 'cm-c']) assert.ok(seen.includes(n));
});

test('a stale resourceVersion is 409 Conflict; an invalid pod is 422 with causes', async () => {
  const p = await admin.createNamespacedPod({ namespace: 'default', body: podBody('conflict') });
  const fresh = await admin.replaceNamespacedPod({ name: 'conflict', namespace: 'default', body: { ...p, metadata: { ...p.metadata, labels: { v: '2' } } } });
  assert.notEqual(fresh.metadata!.resourceVersion, p.metadata!.resourceVersion);
  const stale = await apiError(admin.replaceNamespacedPod({ name: 'conflict', namespace: 'default', body: { ...p, metadata: { ...p.metadata, labels: { v: '3' } } } }));
  assert.equal(stale.code, 409);
  assert.equal(stale.status.reason, 'Conflict');
  // stale and invalid at once: the version is compared first, as the registry's GuaranteedUpdate does
  const staleAndInvalid = await apiError(admin.replaceNamespacedPod({ name: 'conflict', namespace: 'default', body: { ...p, spec: { ...p.spec!, restartPolicy: 'Never' } } }));
  assert.equal(staleAndInvalid.code, 409);
  const bad = await apiError(admin.createNamespacedPod({ namespace: 'default', body: { ...podBody('bad'), spec: { containers: [{ name: 'main' } as never] } } }));
  assert.equal(bad.code, 422);
  assert.equal(bad.status.message, 'Pod "bad" is invalid: spec.containers[0].image: Required value');
  assert.deepEqual(bad.status.details.causes, [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[0].image' }]);
  const immutable = await apiError(
    admin.patchNamespacedPod({ name: 'conflict', namespace: 'default', body: { spec: { restartPolicy: 'Never' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
  );
  assert.equal(immutable.code, 422);
  assert.match(immutable.status.message, /spec: Forbidden: pod updates may not change fields other than/);
});

test('RBAC: a user without a binding gets 403 with the real sentence', async () => {
  const denied = await apiError(bob.listNamespacedPod({ namespace: 'default' }));
  assert.equal(denied.code, 403);
  assert.equal(denied.status.message, 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"');
  const named = await apiError(bob.readNamespacedPod({ name: 'web-1', namespace: 'default' }));
  assert.equal(named.status.message, 'pods "web-1" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "default"');
  // SelfSubjectAccessReview asks the same authorizer
  const review = await raw('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    token: BOB_TOKEN,
    body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'default' } } }),
  });
  assert.equal(review.status, 201);
  assert.equal(JSON.parse(review.body).status.allowed, false);
  const adminReview = await raw('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'default' } } }),
  });
  assert.equal(JSON.parse(adminReview.body).status.allowed, true);
});

test('patch: merge, JSON and strategic merge patches', async () => {
  await admin.createNamespacedPod({ namespace: 'default', body: podBody('patched') });
  const merged = await admin.patchNamespacedPod(
    { name: 'patched', namespace: 'default', body: { metadata: { labels: { tier: 'front' } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  assert.deepEqual(merged.metadata!.labels, { app: 'web', tier: 'front' });
  const json = await admin.patchNamespacedPod(
    { name: 'patched', namespace: 'default', body: [{ op: 'add', path: '/spec/activeDeadlineSeconds', value: 60 }] },
    setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
  );
  assert.equal(json.spec!.activeDeadlineSeconds, 60);
  const smp = await admin.patchNamespacedPod(
    { name: 'patched', namespace: 'default', body: { spec: { containers: [{ name: 'main', image: 'localhost/berth/busybox:2' }] } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
  assert.equal(smp.spec!.containers[0]!.image, 'localhost/berth/busybox:2');
  assert.equal(smp.spec!.containers.length, 1);
  const unknownType = await raw('PATCH', '/api/v1/namespaces/default/pods/patched', { body: '{}', headers: { 'content-type': 'text/plain' } });
  assert.equal(unknownType.status, 415);
});

test('watch: events in order with selectors, then an in-stream 410 for a too old resourceVersion', async () => {
  const watch = new Watch(kubeConfig(ADMIN_TOKEN));
  await createNamespace('watched');
  const start = (await admin.listNamespacedPod({ namespace: 'watched' })).metadata!.resourceVersion!;
  const events: string[] = [];
  let gotDeleted!: () => void;
  const deleted = new Promise<void>((r) => (gotDeleted = r));
  const ctl = await watch.watch(
    '/api/v1/namespaces/watched/pods',
    { resourceVersion: start, labelSelector: 'app=web' },
    (type, obj: KubeObject) => {
      events.push(`${type} ${obj.metadata.name}`);
      if (type === 'DELETED') gotDeleted();
    },
    () => {},
  );
  try {
    await admin.createNamespacedPod({ namespace: 'watched', body: podBody('w1') });
    await admin.createNamespacedPod({ namespace: 'watched', body: { ...podBody('other'), metadata: { name: 'other', labels: { app: 'db' } } } });
    await admin.patchNamespacedPod({ name: 'w1', namespace: 'watched', body: { metadata: { labels: { app: 'web', x: '1' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await admin.deleteNamespacedPod({ name: 'w1', namespace: 'watched' });
    await deleted;
  } finally {
    ctl.abort();
  }
  assert.deepEqual(events, ['ADDED w1', 'MODIFIED w1', 'DELETED w1']);

  // push the start out of the kept history
  for (let i = 0; i < 210; i++) store.create(resourceByKind('ConfigMap'), 'watched', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `filler-${i}` } });
  const errorEvent = await new Promise<{ type: string; obj: any }>((resolve, reject) => {
    watch.watch('/api/v1/namespaces/watched/pods', { resourceVersion: start }, (type, obj) => resolve({ type, obj }), (err) => (err ? reject(err) : undefined)).catch(reject);
  });
  assert.equal(errorEvent.type, 'ERROR');
  assert.equal(errorEvent.obj.code, 410);
  assert.equal(errorEvent.obj.reason, 'Expired');
  assert.match(errorEvent.obj.message, /^too old resource version: \d+ \(\d+\)$/);
});

test('watch wire format: chunked NDJSON, bookmarks when asked (the last 2 s before the deadline), timeoutSeconds ends it', async () => {
  const rv = store.resourceVersion();
  const started = Date.now();
  const r = await raw('GET', `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=4`);
  assert.equal(r.status, 200);
  assert.equal(r.headers['transfer-encoding'], 'chunked');
  assert.equal(r.headers['content-type'], 'application/json');
  assert.ok(Date.now() - started >= 3900, 'ended by timeoutSeconds');
  const lines = r.body.trim().split('\n').map((l) => JSON.parse(l));
  // an idle watch of 4 s gets one bookmark, at 2 s, as from the watch cache; not one a second
  assert.equal(lines.length, 1, r.body);
  assert.ok(lines.every((e) => e.type === 'BOOKMARK' && e.object.kind === 'ConfigMap' && e.object.metadata.resourceVersion));
});

test('WatchList: sendInitialEvents sends the state as ADDED, then a bookmark marking its end; ListOptions checked as 1.32 does', async () => {
  await admin.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'wl-a' }, data: { a: '1' } } });
  const rv = store.resourceVersion();
  const r = await raw('GET', `/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`);
  assert.equal(r.status, 200);
  const events = r.body.trim().split('\n').map((l) => JSON.parse(l));
  const end = events.findIndex((e) => e.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true');
  assert.ok(end > 0, r.body);
  assert.equal(events[end].type, 'BOOKMARK');
  assert.ok(events.slice(0, end).some((e) => e.type === 'ADDED' && e.object.metadata.name === 'wl-a'), 'the current objects come first, though a resourceVersion was given');
  const refused = async (path: string, text: RegExp) => {
    const bad = await raw('GET', path);
    assert.equal(bad.status, 422, `${path}: ${bad.body}`);
    assert.match(JSON.parse(bad.body).message, text);
  };
  await refused('/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true', /ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/);
  await refused('/api/v1/namespaces/default/configmaps?watch=1&resourceVersionMatch=NotOlderThan', /resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided/);
  await refused('/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact', /resourceVersionMatch is forbidden unless resourceVersion is provided/);
  await refused('/api/v1/namespaces/default/configmaps?sendInitialEvents=true', /sendInitialEvents is forbidden for list/);
  // a list at a version the dev cluster no longer has is answered as compacted; one from the future as too large
  const old = await raw('GET', '/api/v1/namespaces/default/configmaps?resourceVersion=1&resourceVersionMatch=Exact');
  assert.equal(old.status, 410, old.body);
  const future = await raw('GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${Number(store.resourceVersion()) + 100}`);
  assert.equal(future.status, 504, future.body);
  assert.match(JSON.parse(future.body).message, /^Too large resource version/);
  const futureWatch = await raw('GET', `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${Number(store.resourceVersion()) + 100}&timeoutSeconds=1`);
  assert.equal(futureWatch.status, 504, futureWatch.body);
  assert.equal((await raw('GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${store.resourceVersion()}&resourceVersionMatch=Exact`)).status, 200);
});

test('delete: unscheduled pods go at once, scheduled ones gracefully; config maps answer a Status', async () => {
  await admin.createNamespacedPod({ namespace: 'default', body: podBody('gone') });
  const gone = await admin.deleteNamespacedPod({ name: 'gone', namespace: 'default' });
  assert.equal(gone.metadata!.name, 'gone');
  assert.equal((await apiError(admin.readNamespacedPod({ name: 'gone', namespace: 'default' }))).code, 404);

  await admin.createNamespacedPod({ namespace: 'default', body: podBody('graceful') });
  store.mutate(POD, 'default', 'graceful', (p) => (p.spec.nodeName = 'test-node'));
  const marked = await admin.deleteNamespacedPod({ name: 'graceful', namespace: 'default', gracePeriodSeconds: 20 });
  assert.ok(marked.metadata!.deletionTimestamp);
  assert.equal(marked.metadata!.deletionGracePeriodSeconds, 20);
  assert.ok(store.tryGet(POD, 'default', 'graceful'), 'the node removes it after stopping the containers');
  const forced = await admin.deleteNamespacedPod({ name: 'graceful', namespace: 'default', gracePeriodSeconds: 0 });
  assert.equal(forced.metadata!.name, 'graceful');
  assert.equal(store.tryGet(POD, 'default', 'graceful'), undefined);

  const cm = await admin.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'del' } } });
  const precondition = await apiError(admin.deleteNamespacedConfigMap({ name: 'del', namespace: 'default', body: { preconditions: { uid: 'other' } } }));
  assert.equal(precondition.code, 409);
  const status = await raw('DELETE', '/api/v1/namespaces/default/configmaps/del');
  assert.equal(status.status, 200);
  assert.deepEqual(JSON.parse(status.body), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'del', kind: 'configmaps', uid: cm.metadata!.uid } });
});

test('owner references: dependents are collected, unless orphaned', async () => {
  const owner = await admin.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'owner' } } });
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! };
  await admin.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'dependent', ownerReferences: [ref] } } });
  await admin.createNamespacedPod({ namespace: 'default', body: { ...podBody('dep-pod'), metadata: { name: 'dep-pod', ownerReferences: [{ ...ref }] } } });
  const goneEvents = new Set<string>();
  const handles = [POD, resourceByKind('ConfigMap')].map((rt) =>
    store.watch(rt, 'default', { resourceVersion: store.resourceVersion() }, (e) => e.type === 'DELETED' && goneEvents.add(e.object.metadata.name!)),
  );
  try {
    await admin.deleteNamespacedConfigMap({ name: 'owner', namespace: 'default' });
    while (!(goneEvents.has('dependent') && goneEvents.has('dep-pod'))) await new Promise((r) => setImmediate(r));
  } finally {
    for (const h of handles) h.stop();
  }

  const owner2 = await admin.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'owner2' } } });
  await admin.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'orphan', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner2', uid: owner2.metadata!.uid! }] } },
  });
  await admin.deleteNamespacedConfigMap({ name: 'owner2', namespace: 'default', propagationPolicy: 'Orphan' });
  let orphan = await admin.readNamespacedConfigMap({ name: 'orphan', namespace: 'default' });
  while (orphan.metadata!.ownerReferences) {
    await new Promise((r) => setImmediate(r));
    orphan = await admin.readNamespacedConfigMap({ name: 'orphan', namespace: 'default' });
  }
  assert.equal(orphan.metadata!.name, 'orphan');
});

test('namespace deletion: Terminating, new content refused, everything removed, then the namespace', async () => {
  await createNamespace('doomed');
  await admin.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'c' } } });
  const gone = new Promise<void>((resolve) => {
    const h = store.watch(resourceByKind('Namespace'), undefined, { resourceVersion: store.resourceVersion() }, (e) => {
      if (e.type === 'DELETED' && e.object.metadata.name === 'doomed') {
        queueMicrotask(() => h.stop());
        resolve();
      }
    });
  });
  const terminating = await admin.deleteNamespace({ name: 'doomed' });
  assert.equal((terminating as any).status?.phase, 'Terminating');
  const refused = await apiError(admin.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'late' } } }));
  // either still terminating (403) or already gone (404), as on a real cluster
  if (refused.code === 403) assert.match(refused.status.message, /unable to create new content in namespace doomed because it is being terminated/);
  else assert.equal(refused.code, 404);
  await gone;
  assert.equal(store.list(resourceByKind('ConfigMap'), 'doomed').items.length, 0);
  const missing = await apiError(admin.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'x' } } }));
  assert.equal(missing.code, 404);
  assert.equal(missing.status.message, 'namespaces "doomed" not found');
  const protectedNs = await apiError(admin.deleteNamespace({ name: 'default' }));
  assert.equal(protectedNs.code, 403);
});

test('request bodies: size limit, malformed JSON, kind and namespace mismatches', async () => {
  const big = await raw('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: 'big' }, data: { a: 'x'.repeat(70 * 1024) } }) });
  assert.equal(big.status, 413);
  const malformed = await raw('POST', '/api/v1/namespaces/default/configmaps', { body: '{"metadata":' });
  assert.equal(malformed.status, 400);
  assert.equal(JSON.parse(malformed.body).reason, 'BadRequest');
  const wrongKind = await raw('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }) });
  assert.equal(wrongKind.status, 400);
  const wrongNs = await raw('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: 'x', namespace: 'kube-system' } }) });
  assert.equal(wrongNs.status, 400);
  assert.equal(JSON.parse(wrongNs.body).message, 'the namespace of the provided object does not match the namespace sent on the request');
  const unknownPath = await raw('GET', '/apis/example.com/v1/widgets');
  assert.equal(unknownPath.status, 404);
  const dryRun = await raw('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: JSON.stringify({ metadata: { name: 'dry' } }) });
  assert.equal(dryRun.status, 201);
  assert.equal(store.tryGet(resourceByKind('ConfigMap'), 'default', 'dry'), undefined);
});

test('kubectl get: Table answers for get, list and watch when asked', async () => {
  const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
  await admin.createNamespacedPod({ namespace: 'default', body: podBody('tabled') });
  const list = await raw('GET', '/api/v1/namespaces/default/pods?limit=500', { headers: { accept } });
  assert.equal(list.status, 200);
  assert.equal(list.headers['content-type'], 'application/json;as=Table;v=v1;g=meta.k8s.io');
  const table = JSON.parse(list.body);
  assert.equal(table.kind, 'Table');
  assert.ok(table.rows.some((r: any) => r.cells[0] === 'tabled'));
  const one = JSON.parse((await raw('GET', '/api/v1/namespaces/default/pods/tabled', { headers: { accept } })).body);
  assert.equal(one.kind, 'Table');
  assert.equal(one.rows.length, 1);
  const watched = await raw('GET', '/api/v1/namespaces/default/pods?watch=1&fieldSelector=metadata.name%3Dtabled&timeoutSeconds=1', { headers: { accept } });
  const first = JSON.parse(watched.body.split('\n')[0]!);
  assert.equal(first.type, 'ADDED');
  assert.equal(first.object.kind, 'Table');
  assert.equal(first.object.rows.length, 1);
});

test('logs: streamed as text; the container must be named when there are several', async () => {
  await admin.createNamespacedPod({ namespace: 'default', body: podBody('logged') });
  const log = await raw('GET', '/api/v1/namespaces/default/pods/logged/log');
  assert.equal(log.status, 200);
  assert.equal(log.body, 'log of logged/main\n');
  await admin.createNamespacedPod({
    namespace: 'default',
    body: { ...podBody('two'), spec: { containers: [{ name: 'a', image: 'i:1' }, { name: 'b', image: 'i:1' }] } },
  });
  const ambiguous = await raw('GET', '/api/v1/namespaces/default/pods/two/log');
  assert.equal(ambiguous.status, 400);
  assert.equal(JSON.parse(ambiguous.body).message, 'a container name must be specified for pod two, choose one of: [a b]');
  const unknown = await raw('GET', '/api/v1/namespaces/default/pods/two/log?container=zz');
  assert.equal(JSON.parse(unknown.body).message, 'container zz is not valid for pod two');
});

function rawUpgrade(path: string, token: string | null): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: ca.certPem, servername: 'localhost' }, () => {
      const lines = [
        `GET ${path} HTTP/1.1`,
        'Host: 127.0.0.1',
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Protocol: v5.channel.k8s.io',
      ];
      if (token) lines.push(`Authorization: Bearer ${token}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

test('exec: plain requests need an upgrade; upgrades are authenticated, authorized and answered with a Status', async () => {
  const plain = await raw('GET', '/api/v1/namespaces/default/pods/logged/exec?command=sh&stdout=1');
  assert.equal(plain.status, 400);
  assert.equal(JSON.parse(plain.body).message, 'Upgrade request required');
  const anon = await rawUpgrade('/api/v1/namespaces/default/pods/logged/exec?command=sh&stdout=1', null);
  assert.match(anon, /^HTTP\/1\.1 401 /);
  const forbidden = await rawUpgrade('/api/v1/namespaces/default/pods/logged/exec?command=sh&stdout=1', BOB_TOKEN);
  assert.match(forbidden, /^HTTP\/1\.1 403 /);
  assert.match(forbidden, /User \\"bob\\" cannot create resource \\"pods\/exec\\"/);
  const missing = await rawUpgrade('/api/v1/namespaces/default/pods/nope/exec?command=sh&stdout=1', ADMIN_TOKEN);
  assert.match(missing, /^HTTP\/1\.1 404 /);
  const refused = await rawUpgrade('/api/v1/namespaces/default/pods/logged/exec?command=sh&stdout=1', ADMIN_TOKEN);
  assert.match(refused, /^HTTP\/1\.1 400 /);
  assert.match(refused, /no exec in this test/);
});

test('faults: admin-only endpoint; error500 fails API requests but not health checks', async () => {
  const denied = await raw('GET', '/berth-dev/v1/faults', { token: BOB_TOKEN });
  assert.equal(denied.status, 403);
  const set = await raw('PUT', '/berth-dev/v1/faults', { body: JSON.stringify({ error500: 1 }) });
  assert.equal(set.status, 200);
  try {
    assert.equal(faults.error500, 1);
    const failed = await raw('GET', '/api/v1/namespaces');
    assert.equal(failed.status, 500);
    assert.equal(JSON.parse(failed.body).reason, 'InternalError');
    assert.equal((await raw('GET', '/healthz', { token: null })).status, 200);
  } finally {
    await raw('PUT', '/berth-dev/v1/faults', { body: JSON.stringify({ error500: 0 }) });
  }
  assert.equal(faults.error500, 0);
  const bad = await raw('PUT', '/berth-dev/v1/faults', { body: JSON.stringify({ error500: 2 }) });
  assert.equal(bad.status, 400);
});

// a minimal protobuf writer: kubectl's typed clients send these bodies
function varint(n: number): Buffer {
  const out: number[] = [];
  do {
    out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>>= 7;
  } while (n > 0);
  return Buffer.from(out);
}
const bytesField = (num: number, value: Buffer | string) => {
  const b = Buffer.isBuffer(value) ? value : Buffer.from(value);
  return Buffer.concat([varint((num << 3) | 2), varint(b.length), b]);
};

test('protobuf request bodies (kubectl create namespace, auth can-i) are read', async () => {
  const labels = bytesField(11, Buffer.concat([bytesField(1, 'team'), bytesField(2, 'a')]));
  // Go writes empty non-pointer strings too: generateName "" must not appear in the object
  const meta = Buffer.concat([bytesField(1, 'pb-ns'), bytesField(2, ''), labels]);
  const namespace = Buffer.concat([bytesField(1, meta), bytesField(2, Buffer.alloc(0))]);
  const typeMeta = Buffer.concat([bytesField(1, 'v1'), bytesField(2, 'Namespace')]);
  const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), bytesField(1, typeMeta), bytesField(2, namespace)]);
  const r = await raw('POST', '/api/v1/namespaces', { body, headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/vnd.kubernetes.protobuf,application/json' } });
  assert.equal(r.status, 201, r.body);
  assert.equal(r.headers['content-type'], 'application/json');
  const created = JSON.parse(r.body);
  assert.equal(created.metadata.name, 'pb-ns');
  assert.equal(created.metadata.labels.team, 'a');
  assert.equal('generateName' in created.metadata, false);
  assert.equal(created.status.phase, 'Active');
  const unknownKind = Buffer.concat([Buffer.from('k8s\0', 'latin1'), bytesField(1, Buffer.concat([bytesField(1, 'v1'), bytesField(2, 'PersistentVolumeClaim')]))]);
  const refused = await raw('POST', '/api/v1/namespaces/default/persistentvolumeclaims', { body: unknownKind, headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
  assert.equal(refused.status, 415);
});
