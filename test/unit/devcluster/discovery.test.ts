import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RESOURCES } from '../../../src/devcluster/api/resources.js';
import { discoveryResponse } from '../../../src/devcluster/server/discovery.js';
import { kubectl, startFakeApi } from './kubectl-fake-api.js';

const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const KUBECTL_ACCEPT = `${V2},${V2BETA1},application/json`;

test('/version names the 1.32 server', () => {
  const r = discoveryResponse('/version?timeout=32s', undefined)!;
  assert.equal(r.contentType, 'application/json');
  assert.deepEqual(
    { ...(r.body as any), gitCommit: undefined, buildDate: undefined, goVersion: undefined },
    { major: '1', minor: '32', gitVersion: 'v1.32.0-berth', gitCommit: undefined, gitTreeState: 'clean', buildDate: undefined, goVersion: undefined, compiler: 'gc', platform: 'linux/amd64' },
  );
});

test('legacy discovery documents', () => {
  const api = discoveryResponse('/api', 'application/json')!.body as any;
  assert.equal(api.kind, 'APIVersions');
  assert.deepEqual(api.versions, ['v1']);
  const apis = discoveryResponse('/apis/', undefined)!.body as any;
  assert.equal(apis.kind, 'APIGroupList');
  assert.deepEqual(apis.groups.map((g: any) => g.name).sort(), ['authentication.k8s.io', 'authorization.k8s.io', 'coordination.k8s.io', 'networking.k8s.io', 'rbac.authorization.k8s.io']);
  assert.deepEqual(apis.groups.find((g: any) => g.name === 'coordination.k8s.io').preferredVersion, { groupVersion: 'coordination.k8s.io/v1', version: 'v1' });

  const core = discoveryResponse('/api/v1', undefined)!.body as any;
  assert.equal(core.kind, 'APIResourceList');
  assert.equal(core.groupVersion, 'v1');
  const byName = new Map<string, any>(core.resources.map((r: any) => [r.name, r]));
  assert.deepEqual({ ...byName.get('pods'), storageVersionHash: undefined }, {
    name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'], shortNames: ['po'], categories: ['all'], storageVersionHash: undefined,
  });
  assert.deepEqual(byName.get('pods/log'), { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] });
  assert.deepEqual(byName.get('pods/exec').verbs, ['create', 'get']);
  assert.equal(byName.get('pods/exec').kind, 'PodExecOptions');
  assert.deepEqual(byName.get('pods/status').verbs, ['get', 'patch', 'update']);
  assert.equal(byName.get('namespaces').namespaced, false);

  const rbac = discoveryResponse('/apis/rbac.authorization.k8s.io/v1', undefined)!.body as any;
  assert.equal(rbac.apiVersion, 'v1');
  assert.deepEqual(rbac.resources.map((r: any) => r.name), ['clusterrolebindings', 'clusterroles', 'rolebindings', 'roles']);
  assert.equal((discoveryResponse('/apis/coordination.k8s.io', undefined)!.body as any).kind, 'APIGroup');

  assert.equal(discoveryResponse('/apis/apps/v1', undefined), undefined);
  assert.equal(discoveryResponse('/api/v2', undefined), undefined);
  assert.equal(discoveryResponse('/apis/apps', undefined), undefined);
  assert.equal(discoveryResponse('/healthz', undefined), undefined);
});

test('aggregated discovery when the Accept header asks for it', () => {
  const r = discoveryResponse('/apis', KUBECTL_ACCEPT)!;
  assert.equal(r.contentType, V2);
  const body = r.body as any;
  assert.equal(body.kind, 'APIGroupDiscoveryList');
  assert.equal(body.apiVersion, 'apidiscovery.k8s.io/v2');
  const lease = body.items.find((i: any) => i.metadata.name === 'coordination.k8s.io').versions[0];
  assert.equal(lease.version, 'v1');
  assert.equal(lease.freshness, 'Current');
  assert.deepEqual(lease.resources[0], { resource: 'leases', responseKind: { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' }, scope: 'Namespaced', singularResource: 'lease', verbs: RESOURCES.find((x) => x.kind === 'Lease')!.verbs });

  const core = discoveryResponse('/api', `${V2};profile=nopeer,${KUBECTL_ACCEPT}`)!.body as any;
  assert.equal(core.items.length, 1);
  assert.equal(core.items[0].metadata.name, undefined);
  const pods = core.items[0].versions[0].resources.find((x: any) => x.resource === 'pods');
  assert.deepEqual(pods.subresources.find((s: any) => s.subresource === 'portforward'), { subresource: 'portforward', responseKind: { group: '', version: 'v1', kind: 'PodPortForwardOptions' }, verbs: ['create', 'get'] });
  const total = core.items[0].versions[0].resources.length + body.items.reduce((n: number, i: any) => n + i.versions[0].resources.length, 0);
  assert.equal(total, RESOURCES.length, 'every served resource is listed once');

  assert.equal(discoveryResponse('/api', V2BETA1)!.contentType, V2BETA1);
  assert.equal(discoveryResponse('/api', `application/json,${V2}`)!.contentType, 'application/json', 'client order wins');
  assert.equal(discoveryResponse('/api', `application/json;q=0.5,${V2}`)!.contentType, V2, 'q weights count');
  assert.equal(discoveryResponse('/api', 'application/vnd.kubernetes.protobuf,application/json')!.contentType, 'application/json');
});

test('openapi v3 tells kubectl that PATCH takes fieldValidation', () => {
  const root = discoveryResponse('/openapi/v3', 'application/json')!.body as any;
  const url = root.paths['apis/coordination.k8s.io/v1'].serverRelativeURL as string;
  const doc = discoveryResponse(url, 'application/json')!.body as any;
  const patch = doc.paths['/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}'].patch;
  assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' });
  assert.ok(patch.parameters.some((p: any) => p.name === 'fieldValidation' && p.in === 'query'));
  assert.equal(discoveryResponse('/openapi/v3/apis/apps/v1', undefined), undefined);
});

for (const legacyOnly of [false, true]) {
  test(`kubectl api-resources works with ${legacyOnly ? 'the legacy fallback' : 'aggregated discovery'}`, async (t) => {
    const api = await startFakeApi({ legacyOnly });
    t.after(() => api.close());
    const r = await kubectl(api, ['api-resources', '--no-headers', '-o', 'name']);
    assert.equal(r.code, 0, r.stderr);
    const names = r.stdout.trim().split('\n').sort();
    const expected = RESOURCES.map((x) => (x.group ? `${x.plural}.${x.group}` : x.plural)).sort();
    assert.deepEqual(names, expected);
    const fetchedGroupVersions = api.requests.some((q) => q.path.startsWith('/api/v1'));
    assert.equal(fetchedGroupVersions, legacyOnly, legacyOnly ? 'legacy discovery reads each group version' : 'aggregated discovery needs no per-version request');
    const wide = await kubectl(api, ['api-resources', '--api-group', '']);
    assert.equal(wide.code, 0, wide.stderr);
    assert.match(wide.stdout, /^pods\s+po\s+v1\s+true\s+Pod$/m);
  });
}
