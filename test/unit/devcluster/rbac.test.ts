import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resourceByKind } from '../../../src/devcluster/api/resources.js';
import { MemoryStore } from '../../../src/devcluster/api/store.js';
import { RbacAuthorizer } from '../../../src/devcluster/server/rbac.js';
import type { FileRule } from '../../../src/devcluster/server/users-file.js';
import type { KubeObject, RequestAttributes, UserInfo } from '../../../src/devcluster/types.js';

const RBAC = 'rbac.authorization.k8s.io/v1';
const user = (name: string, ...groups: string[]): UserInfo => ({ name, groups: [...groups, 'system:authenticated'] });
const pods = (verb: string, namespace?: string, extra: Partial<RequestAttributes> = {}): RequestAttributes => ({ verb, apiGroup: '', resource: 'pods', namespace, ...extra });

function setup(fileRules: Record<string, FileRule[]> = {}) {
  const store = new MemoryStore();
  const put = (obj: KubeObject) => store.create(resourceByKind(obj.kind), obj.metadata.namespace, obj);
  return { store, put, authz: new RbacAuthorizer(store, new Map(Object.entries(fileRules))) };
}

test('system:masters may do anything; nobody else may by default', () => {
  const { authz } = setup();
  assert.deepEqual(authz.authorize({ name: 'admin', groups: ['system:masters'] }, pods('delete', 'ns')), { allowed: true });
  assert.equal(authz.authorize(user('bob'), pods('get', 'ns')).allowed, false);
  assert.equal(authz.authorize(user('bob'), { verb: 'get', apiGroup: '', resource: 'namespaces' }).allowed, false);
});

test('every authenticated user may discover and review its own access', () => {
  const { authz } = setup();
  const bob = user('bob');
  const ssar = authz.authorize(bob, { verb: 'create', apiGroup: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' });
  assert.deepEqual(ssar, { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated"' });
  assert.ok(authz.authorize(bob, { verb: 'create', apiGroup: 'authorization.k8s.io', resource: 'selfsubjectrulesreviews' }).allowed);
  for (const path of ['/api', '/api/v1', '/apis', '/apis/rbac.authorization.k8s.io/v1', '/version', '/healthz', '/livez', '/readyz', '/openapi/v3', '/openapi/v3/api/v1']) {
    assert.ok(authz.authorize(bob, { verb: 'get', apiGroup: '', resource: '', nonResourcePath: path }).allowed, path);
  }
  assert.equal(authz.authorize(bob, { verb: 'get', apiGroup: '', resource: '', nonResourcePath: '/metrics' }).allowed, false);
  assert.equal(authz.authorize(bob, { verb: 'post', apiGroup: '', resource: '', nonResourcePath: '/api' }).allowed, false);
  assert.equal(authz.authorize({ name: 'anon', groups: [] }, { verb: 'get', apiGroup: '', resource: '', nonResourcePath: '/api' }).allowed, false);
});

test('users-file rules: namespaces limit resource rules, pods/* covers subresources', () => {
  const { authz } = setup({
    shim: [
      { apiGroups: [''], resources: ['pods', 'pods/*'], verbs: ['get', 'create'], namespaces: ['ci'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['*'], resourceNames: ['lock'] },
      { nonResourceURLs: ['/metrics'], verbs: ['get'] },
    ],
  });
  const shim = user('shim');
  const exec = authz.authorize(shim, pods('create', 'ci', { subresource: 'exec', name: 'p' }));
  assert.deepEqual(exec, { allowed: true, reason: 'berth: allowed by rule 0 of User "shim" in the users file' });
  assert.equal(authz.authorize(shim, pods('create', 'other', { subresource: 'exec' })).allowed, false);
  assert.equal(authz.authorize(shim, pods('get')).allowed, false, 'a namespaced rule does not reach cluster-wide lists');
  assert.equal(authz.authorize(shim, pods('delete', 'ci')).allowed, false);
  const lease = (name?: string): RequestAttributes => ({ verb: 'update', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'x', name });
  assert.ok(authz.authorize(shim, lease('lock')).allowed, 'rules without namespaces apply everywhere');
  assert.equal(authz.authorize(shim, lease('other')).allowed, false);
  assert.equal(authz.authorize(shim, lease()).allowed, false, 'resourceNames never match a request without a name');
  assert.ok(authz.authorize(shim, { verb: 'get', apiGroup: '', resource: '', nonResourcePath: '/metrics' }).allowed);
  assert.equal(authz.authorize(user('other'), pods('get', 'ci')).allowed, false);
});

test('RoleBindings grant Roles and ClusterRoles in their namespace to users, groups and service accounts', () => {
  const { put, authz } = setup();
  put({ apiVersion: RBAC, kind: 'Role', metadata: { name: 'runner', namespace: 'ci' }, rules: [{ apiGroups: [''], resources: ['pods', 'pods/exec', 'pods/log'], verbs: ['get', 'list', 'create'] }] });
  put({
    apiVersion: RBAC,
    kind: 'RoleBinding',
    metadata: { name: 'runners', namespace: 'ci' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'runner' },
    subjects: [{ kind: 'User', name: 'alice' }, { kind: 'Group', name: 'devs' }, { kind: 'ServiceAccount', name: 'builder' }],
  });
  put({ apiVersion: RBAC, kind: 'RoleBinding', metadata: { name: 'viewers', namespace: 'ci' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'carol' }] });

  assert.deepEqual(authz.authorize(user('alice'), pods('create', 'ci', { subresource: 'exec' })), { allowed: true, reason: 'RBAC: allowed by RoleBinding "runners/ci" of Role "runner" to User "alice"' });
  assert.equal(authz.authorize(user('alice'), pods('create', 'ci', { subresource: 'attach' })).allowed, false);
  assert.equal(authz.authorize(user('alice'), pods('delete', 'ci')).allowed, false);
  assert.equal(authz.authorize(user('alice'), pods('get', 'other')).allowed, false);
  assert.ok(authz.authorize(user('dave', 'devs'), pods('list', 'ci')).allowed);
  assert.deepEqual(authz.authorize({ name: 'system:serviceaccount:ci:builder', groups: ['system:serviceaccounts', 'system:authenticated'] }, pods('get', 'ci')), {
    allowed: true,
    reason: 'RBAC: allowed by RoleBinding "runners/ci" of Role "runner" to ServiceAccount "builder/ci"',
  });
  assert.equal(authz.authorize({ name: 'system:serviceaccount:other:builder', groups: [] }, pods('get', 'ci')).allowed, false);
  assert.ok(authz.authorize(user('carol'), pods('get', 'ci', { subresource: 'log' })).allowed, 'bootstrap ClusterRole view');
  assert.equal(authz.authorize(user('carol'), { verb: 'get', apiGroup: '', resource: 'secrets', namespace: 'ci' }).allowed, false);
});

test('ClusterRoleBindings, wildcards, */subresource, and missing roles reported like RBAC does', () => {
  const { put, store, authz } = setup();
  put({ apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: 'scaler' }, rules: [{ apiGroups: ['*'], resources: ['*/status'], verbs: ['patch'] }, { apiGroups: ['coordination.k8s.io'], resources: ['*'], verbs: ['get'] }] });
  put({ apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: { name: 'scalers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'scaler' }, subjects: [{ kind: 'Group', name: 'ops' }] });
  const op = user('olga', 'ops');
  assert.deepEqual(authz.authorize(op, pods('patch', 'any', { subresource: 'status' })), { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "scalers" of ClusterRole "scaler" to Group "ops"' });
  assert.ok(authz.authorize(op, { verb: 'get', apiGroup: 'coordination.k8s.io', resource: 'leases' }).allowed, 'cluster-wide');
  assert.equal(authz.authorize(op, pods('patch', 'any')).allowed, false);

  put({ apiVersion: RBAC, kind: 'Role', metadata: { name: 'wild', namespace: 'w' }, rules: [{ apiGroups: [''], resources: ['pods/*'], verbs: ['*'] }] });
  put({ apiVersion: RBAC, kind: 'RoleBinding', metadata: { name: 'wild', namespace: 'w' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'wild' }, subjects: [{ kind: 'User', name: 'will' }] });
  assert.equal(authz.authorize(user('will'), pods('create', 'w', { subresource: 'exec' })).allowed, false, 'real RBAC has no "pods/*" wildcard');

  put({ apiVersion: RBAC, kind: 'RoleBinding', metadata: { name: 'dangling', namespace: 'd' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'gone' }, subjects: [{ kind: 'User', name: 'dan' }] });
  assert.deepEqual(authz.authorize(user('dan'), pods('get', 'd')), { allowed: false, reason: 'RBAC: role.rbac.authorization.k8s.io "gone" not found' });

  // live: a binding removed from the store stops granting at once
  store.remove(resourceByKind('ClusterRoleBinding'), undefined, 'scalers');
  assert.equal(authz.authorize(op, pods('patch', 'any', { subresource: 'status' })).allowed, false);
});
