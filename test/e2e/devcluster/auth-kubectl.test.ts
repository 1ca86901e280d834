// Who a request runs as, through kubectl: impersonation (--as, --as-group), `kubectl auth whoami`
// (SelfSubjectReview) and `kubectl auth can-i --list` (SelfSubjectRulesReview).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { deleteNamespace, freshNamespace, kubectl, kubectlOk } from '../harness/cluster.js';

const roleFor = (ns: string) => `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cm-reader, namespace: ${ns}}
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: shim-reads-cm, namespace: ${ns}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: shim}
`;

describe('kubectl auth: impersonation, whoami, can-i --list', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('auth');
    await kubectlOk(['apply', '-f', '-'], { input: roleFor(ns) });
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('admin --as shim has exactly the shim user\'s rights', async () => {
    const denied = await kubectl(['get', 'pods', '-n', ns, '--as', 'shim']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, new RegExp(`pods is forbidden: User "shim" cannot list resource "pods" in API group "" in the namespace "${ns}"`));
    const allowed = await kubectl(['get', 'configmaps', '-n', ns, '--as', 'shim', '-o', 'name']);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /configmap\/kube-root-ca\.crt/);
    // a service account is impersonated by its username
    const sa = await kubectl(['get', 'configmaps', '-n', ns, '--as', `system:serviceaccount:${ns}:default`]);
    assert.match(sa.stderr, new RegExp(`User "system:serviceaccount:${ns}:default" cannot list resource "configmaps"`));
  });

  test('a user without the impersonate verb is refused, naming what it may not impersonate', async () => {
    const r = await kubectl(['get', 'pods', '-n', ns, '--as', 'shim'], { user: 'viewer' });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /users "shim" is forbidden: User "viewer" cannot impersonate resource "users" in API group "" at the cluster scope/);
    const group = await kubectl(['get', 'pods', '-n', ns, '--as', 'viewer', '--as-group', 'team-x'], { user: 'viewer' });
    assert.match(group.stderr, /users "viewer" is forbidden: User "viewer" cannot impersonate resource "users"/);
    const uid = await kubectl(['get', 'configmaps', '-n', ns, '--as', 'shim', '--as-uid', '1234']);
    assert.equal(uid.code, 0, `admin may impersonate a uid (authentication.k8s.io uids): ${uid.stderr}`);
  });

  test('auth whoami shows the caller, and the impersonated user with --as', async () => {
    const admin = await kubectlOk(['auth', 'whoami']);
    assert.match(admin, /Username\s+admin/);
    assert.match(admin, /Groups\s+\[system:masters system:authenticated\]/);
    const viewer = JSON.parse(await kubectlOk(['auth', 'whoami', '-o', 'json'], { user: 'viewer' }));
    assert.equal(viewer.kind, 'SelfSubjectReview');
    assert.deepEqual(viewer.status.userInfo, { username: 'viewer', groups: ['system:authenticated'] });
    const as = JSON.parse(await kubectlOk(['auth', 'whoami', '-o', 'json', '--as', 'shim', '--as-group', 'team-x', '--as-uid', 'u-1']));
    assert.deepEqual(as.status.userInfo, { username: 'shim', uid: 'u-1', groups: ['team-x', 'system:authenticated'] });
  });

  test('auth can-i --list lists the rules of admin, of a users-file user and of a Role binding', async () => {
    const admin = await kubectlOk(['auth', 'can-i', '--list', '-n', ns]);
    assert.match(admin, /^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
    const viewer = await kubectlOk(['auth', 'can-i', '--list', '-n', ns], { user: 'viewer' });
    assert.match(viewer, /^pods\/log\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    assert.match(viewer, /^selfsubjectrulesreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
    assert.doesNotMatch(viewer, /\*\.\*/);
    const shim = await kubectlOk(['auth', 'can-i', '--list', '-n', ns, '--as', 'shim']);
    assert.match(shim, /^configmaps\s+\[\]\s+\[\]\s+\[get list\]$/m);
    const elsewhere = await kubectlOk(['auth', 'can-i', '--list', '-n', 'default', '--as', 'shim']);
    assert.doesNotMatch(elsewhere, /^configmaps/m, 'the RoleBinding grants nothing outside its namespace');
  });
});
