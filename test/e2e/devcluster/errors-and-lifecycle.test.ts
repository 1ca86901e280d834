// Error responses shaped as the real API server shapes them, and the pod failure states the kubelet reports.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiRequest as call, BUSYBOX, kubeConfig, waitForPod, deleteNamespace, type ApiReply as Reply } from '../harness/cluster.js';

function assertStatus(r: Reply, code: number, reason: string, message: string | RegExp) {
  assert.equal(r.code, code, JSON.stringify(r.body));
  assert.equal(r.body.kind, 'Status');
  assert.equal(r.body.apiVersion, 'v1');
  assert.equal(r.body.status, 'Failure');
  assert.equal(r.body.code, code);
  assert.equal(r.body.reason, reason);
  if (typeof message === 'string') assert.equal(r.body.message, message);
  else assert.match(r.body.message, message);
}

describe('errors as the real API server shapes them', () => {
  const ns = `errors-${process.pid}`;
  before(async () => {
    assert.equal((await call('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).code, 201);
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('404 NotFound with details', async () => {
    const r = await call('GET', `/api/v1/namespaces/${ns}/pods/nope`);
    assertStatus(r, 404, 'NotFound', 'pods "nope" not found');
    assert.deepEqual(r.body.details, { name: 'nope', kind: 'pods' });
  });

  test('409 AlreadyExists and 409 Conflict on a stale resourceVersion', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { a: '1' } };
    const created = await call('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: cm });
    assert.equal(created.code, 201);
    assertStatus(await call('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: cm }), 409, 'AlreadyExists', 'configmaps "c1" already exists');
    const stale = created.body;
    assert.equal((await call('PUT', `/api/v1/namespaces/${ns}/configmaps/c1`, { body: { ...stale, data: { a: '2' } } })).code, 200);
    assertStatus(
      await call('PUT', `/api/v1/namespaces/${ns}/configmaps/c1`, { body: { ...stale, data: { a: '3' } } }),
      409,
      'Conflict',
      'Operation cannot be fulfilled on configmaps "c1": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  test('422 Invalid with field causes', async () => {
    const r = await call('POST', `/api/v1/namespaces/${ns}/pods`, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Bad_Name' }, spec: { containers: [{ name: 'a' }, { name: 'a', image: BUSYBOX, volumeMounts: [{ name: 'missing', mountPath: '/m' }] }] } },
    });
    assertStatus(r, 422, 'Invalid', /^Pod "Bad_Name" is invalid: \[/);
    const fields = r.body.details.causes.map((c: any) => `${c.field}:${c.reason}`);
    assert.ok(fields.includes('metadata.name:FieldValueInvalid'), fields.join());
    assert.ok(fields.includes('spec.containers[0].image:FieldValueRequired'), fields.join());
    assert.ok(fields.includes('spec.containers[1].name:FieldValueDuplicate'), fields.join());
    assert.ok(fields.includes('spec.containers[1].volumeMounts[0].name:FieldValueNotFound'), fields.join());
    assert.equal(r.body.details.kind, 'Pod');
    assert.equal(r.body.details.name, 'Bad_Name');
    // nothing was created
    assert.equal((await call('GET', `/api/v1/namespaces/${ns}/pods`)).body.items.length, 0);
  });

  test('403 Forbidden names the user, verb, resource and namespace', async () => {
    const viewer = 'viewer-token-for-e2e-tests';
    assertStatus(
      await call('POST', `/api/v1/namespaces/${ns}/configmaps`, { token: viewer, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } }),
      403,
      'Forbidden',
      `configmaps is forbidden: User "viewer" cannot create resource "configmaps" in API group "" in the namespace "${ns}"`,
    );
    assertStatus(
      await call('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/l1`, { token: viewer }),
      403,
      'Forbidden',
      `leases.coordination.k8s.io "l1" is forbidden: User "viewer" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "${ns}"`,
    );
  });

  test('401 Unauthorized for an unknown or missing token', async () => {
    assertStatus(await call('GET', '/api/v1/namespaces', { token: 'not-a-token' }), 401, 'Unauthorized', 'Unauthorized');
    assertStatus(await call('GET', '/api/v1/namespaces', { token: null }), 401, 'Unauthorized', 'Unauthorized');
  });

  test('400 BadRequest for malformed JSON and unsupported selectors', async () => {
    const r = await call('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: '{"kind": "ConfigMap", ' });
    assert.equal(r.code, 400);
    assert.equal(r.body.reason, 'BadRequest');
    assertStatus(await call('GET', `/api/v1/namespaces/${ns}/pods?fieldSelector=spec.bogus%3Dx`), 400, 'BadRequest', /field label not supported: spec.bogus/);
  });

  test('400 for a malformed continue token, 410 Expired for one whose version left the history', async () => {
    const malformed = await call('GET', `/api/v1/namespaces/${ns}/configmaps?limit=1&continue=bm90LWEtdG9rZW4`);
    assert.equal(malformed.code, 400, JSON.stringify(malformed.body));
    assert.equal(malformed.body.reason, 'BadRequest');
    for (const name of ['page-a', 'page-b']) await call('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } } });
    const first = await call('GET', `/api/v1/namespaces/${ns}/configmaps?limit=1`);
    const token = first.body.metadata.continue;
    assert.ok(token, 'a first page of one item leaves a continue token');
    // push the token's resourceVersion out of the server's history (the e2e cluster keeps a short one)
    const history = Number(process.env.BERTH_E2E_WATCH_HISTORY ?? 500);
    for (let i = 0; i <= history; i++) await call('PATCH', `/api/v1/namespaces/${ns}/configmaps/page-a`, { body: { data: { n: String(i) } }, contentType: 'application/merge-patch+json' });
    assertStatus(await call('GET', `/api/v1/namespaces/${ns}/configmaps?limit=1&continue=${encodeURIComponent(token)}`), 410, 'Expired', /continue parameter is too old/);
  });
});

describe('pod failure states as the kubelet reports them', () => {
  const kc = kubeConfig();
  const ns = `lifecycle-${process.pid}`;
  const create = async (body: object) => {
    const r = await call('POST', `/api/v1/namespaces/${ns}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', ...body } });
    assert.equal(r.code, 201, JSON.stringify(r.body));
  };
  before(async () => {
    await call('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('a missing image reports ErrImagePull, then ImagePullBackOff, within 5 s', async () => {
    const started = Date.now();
    await create({ metadata: { name: 'noimage' }, spec: { containers: [{ name: 'main', image: 'localhost/berth/does-not-exist:1' }] } });
    const reasons = new Set<string>();
    await waitForPod(kc, ns, 'noimage', (p) => {
      const r = p.status?.containerStatuses?.[0]?.state?.waiting?.reason;
      if (r) reasons.add(r);
      return reasons.has('ErrImagePull') && reasons.has('ImagePullBackOff');
    }, 15_000);
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
    const pod = await kc.makeApiClient((await import('@kubernetes/client-node')).CoreV1Api).readNamespacedPod({ namespace: ns, name: 'noimage' });
    assert.equal(pod.status?.phase, 'Pending');
  });

  test('runAsNonRoot with an image that runs as root reports CreateContainerConfigError', async () => {
    await create({ metadata: { name: 'nonroot' }, spec: { securityContext: { runAsNonRoot: true }, containers: [{ name: 'main', image: BUSYBOX, command: ['true'] }] } });
    const pod = await waitForPod(kc, ns, 'nonroot', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError');
    assert.match(pod.status!.containerStatuses![0].state!.waiting!.message!, /runAsNonRoot and image will run as root/);
  });

  // (a workingDir the image lacks is created, as runc creates it: kubectl.test.ts)
  test('a command that cannot start (missing, not executable) is StartError 128, never a success', async () => {
    const cases = [
      { name: 'nocmd', container: { command: ['/no/such/bin'] }, message: /no such file or directory/ },
      { name: 'noexec', container: { command: ['/etc/passwd'] }, message: /permission denied/ },
    ];
    for (const c of cases) await create({ metadata: { name: c.name }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: BUSYBOX, ...c.container }] } });
    const core = kc.makeApiClient((await import('@kubernetes/client-node')).CoreV1Api);
    for (const c of cases) {
      const pod = await waitForPod(kc, ns, c.name, (p) => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded');
      assert.equal(pod.status?.phase, 'Failed', c.name);
      const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
      assert.equal(terminated?.exitCode, 128, c.name);
      assert.equal(terminated?.reason, 'StartError', c.name);
      assert.match(terminated?.message ?? '', c.message, c.name);
      // the process never ran: its log is empty, not podman's error
      assert.equal(await core.readNamespacedPodLog({ namespace: ns, name: c.name }), '', c.name);
    }
  });

  test('activeDeadlineSeconds ends the pod as Failed with reason DeadlineExceeded', async () => {
    await create({ metadata: { name: 'deadline' }, spec: { activeDeadlineSeconds: 2, restartPolicy: 'Never', containers: [{ name: 'main', image: BUSYBOX, command: ['sleep', '3600'] }] } });
    const pod = await waitForPod(kc, ns, 'deadline', (p) => p.status?.phase === 'Failed', 20_000);
    assert.equal(pod.status?.reason, 'DeadlineExceeded');
    // under load the container may not have started within 2 s: then it is never started, as on a real node
    const state = pod.status?.containerStatuses?.[0]?.state;
    assert.ok(state?.terminated || state?.waiting, `the container is terminated or was never started: ${JSON.stringify(state)}`);
  });
});
