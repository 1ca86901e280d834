// Objects the cluster needs before berth's tests run, applied with kubectl as admin: the API server's access to
// the kubelet, the users file's rules as RBAC, the default StorageClass and the volume provisioner's namespace.
import { stringify } from 'yaml';
import type { FileRule, UserSpec } from './users-file.js';
import { APISERVER_KUBELET_CLIENT } from './pki.js';

type Obj = Record<string, unknown>;

const rbac = 'rbac.authorization.k8s.io/v1';
const LABELS = { 'app.kubernetes.io/managed-by': 'berth-dev-cluster' };

function policyRule(r: FileRule): Obj {
  const { namespaces: _ignored, ...rule } = r;
  return rule;
}

/** A user's rules: those without namespaces in a ClusterRole bound cluster-wide; the others bound per namespace. */
export function userRbac(user: UserSpec): Obj[] {
  const name = `berth-dev:user:${user.name}`;
  const subject = { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user.name };
  const global = user.rules.filter((r) => !r.namespaces?.length);
  const objects: Obj[] = [];
  if (global.length) {
    objects.push({ apiVersion: rbac, kind: 'ClusterRole', metadata: { name, labels: LABELS }, rules: global.map(policyRule) });
    objects.push({
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name, labels: LABELS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [subject],
    });
  }
  const byNamespace = new Map<string, FileRule[]>();
  for (const r of user.rules) for (const ns of r.namespaces ?? []) byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), r]);
  for (const [namespace, rules] of byNamespace) {
    // a Role needs its namespace: the users file may name one nobody created yet
    objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    objects.push({ apiVersion: rbac, kind: 'Role', metadata: { name, namespace, labels: LABELS }, rules: rules.map(policyRule) });
    objects.push({
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name, namespace, labels: LABELS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [subject],
    });
  }
  return objects;
}

export const LOCAL_PATH_NAMESPACE = 'local-path-storage';
export const LOCAL_PATH_PROVISIONER = 'rancher.io/local-path';

export function clusterObjects(users: UserSpec[]): Obj[] {
  return [
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'berth-dev:apiserver-kubelet', labels: LABELS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:kubelet-api-admin' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: APISERVER_KUBELET_CLIENT }],
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'standard', labels: LABELS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: LOCAL_PATH_PROVISIONER,
      // one node and a shared folder: claims bind at once, as a user of the dev cluster expects
      volumeBindingMode: 'Immediate',
      reclaimPolicy: 'Delete',
    },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: LOCAL_PATH_NAMESPACE, labels: LABELS } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'local-path-provisioner', namespace: LOCAL_PATH_NAMESPACE } },
    ...users.flatMap(userRbac),
  ];
}

export function toYamlStream(objects: Obj[]): string {
  return objects.map((o) => stringify(o)).join('---\n');
}
