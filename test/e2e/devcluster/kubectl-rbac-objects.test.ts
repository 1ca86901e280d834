// RBAC objects applied with kubectl are checked as the rbac registry checks them: a binding's roleRef cannot be
// changed (a patch would otherwise hand its subjects another role's rights), and bindings and roles that would
// grant nothing as written (an unknown subject kind, a rule without verbs) are refused instead of stored.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { deleteNamespace, freshNamespace, kubectl, kubectlOk } from '../harness/cluster.js';

describe('kubectl and the rules of RBAC objects', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('rbacobj');
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('a RoleBinding keeps its roleRef: patching it is refused and the binding still grants the first role', async () => {
    await kubectlOk(['create', 'role', 'reader', '-n', ns, '--verb=get', '--resource=pods']);
    await kubectlOk(['create', 'role', 'admin-ish', '-n', ns, '--verb=*', '--resource=*']);
    await kubectlOk(['create', 'rolebinding', 'viewer-reads', '-n', ns, '--role=reader', '--user=viewer']);
    const r = await kubectl(['patch', 'rolebinding', 'viewer-reads', '-n', ns, '--type', 'merge', '-p', '{"roleRef":{"name":"admin-ish"}}']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /The RoleBinding "viewer-reads" is invalid: roleRef: Invalid value: rbac\.RoleRef\{APIGroup:"rbac\.authorization\.k8s\.io", Kind:"Role", Name:"admin-ish"\}: cannot change roleRef/);
    // before: patched, and viewer could delete pods
    assert.equal((await kubectl(['auth', 'can-i', 'delete', 'pods', '-n', ns], { user: 'viewer' })).stdout.trim(), 'no');
    assert.equal(await kubectlOk(['get', 'rolebinding', 'viewer-reads', '-n', ns, '-o', 'jsonpath={.roleRef.name}']), 'reader');
  });

  test('bindings and roles that grant nothing as written are refused, with every reason', async () => {
    const binding = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ${ns}-odd}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: Robot, name: viewer}, {kind: ServiceAccount, name: default}]
`;
    const b = await kubectl(['apply', '-f', '-'], { input: binding });
    assert.equal(b.code, 1);
    assert.match(
      b.stderr,
      new RegExp(`The ClusterRoleBinding "${ns}-odd" is invalid: \\n\\* roleRef\\.kind: Unsupported value: "Role": supported values: "ClusterRole"\\n\\* subjects\\[0\\]\\.kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"\\n\\* subjects\\[1\\]\\.namespace: Required value`),
    );
    const role = `apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: no-verbs, namespace: ${ns}}\nrules: [{apiGroups: [""], resources: [pods]}]\n`;
    const r = await kubectl(['apply', '-f', '-'], { input: role });
    assert.match(r.stderr, /The Role "no-verbs" is invalid: rules\[0\]\.verbs: Required value: verbs must contain at least one value/);
    assert.match((await kubectl(['get', 'clusterrolebinding', `${ns}-odd`])).stderr, /not found/);
    assert.match((await kubectl(['get', 'role', 'no-verbs', '-n', ns])).stderr, /not found/);
  });
});
