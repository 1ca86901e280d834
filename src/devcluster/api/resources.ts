// The resources the dev cluster serves: the single table that routing, discovery and RBAC read.
import type { ResourceType } from '../types.js';

const ALL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function core(kind: string, plural: string, namespaced: boolean, extra: Partial<ResourceType> = {}): ResourceType {
  return { group: '', version: 'v1', kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), namespaced, verbs: ALL, ...extra };
}

function grouped(group: string, version: string, kind: string, plural: string, namespaced: boolean, extra: Partial<ResourceType> = {}): ResourceType {
  return { group, version, kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), namespaced, verbs: ALL, ...extra };
}

export const RESOURCES: readonly ResourceType[] = [
  core('Namespace', 'namespaces', false, { shortNames: ['ns'], subresources: ['status'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] }),
  core('Node', 'nodes', false, { shortNames: ['no'], subresources: ['status'], verbs: ['get', 'list', 'watch', 'patch', 'update'] }),
  core('Pod', 'pods', true, { shortNames: ['po'], categories: ['all'], subresources: ['status', 'log', 'exec', 'attach', 'portforward'] }),
  core('Service', 'services', true, { shortNames: ['svc'], categories: ['all'], subresources: ['status'] }),
  core('ConfigMap', 'configmaps', true, { shortNames: ['cm'] }),
  core('Secret', 'secrets', true),
  core('PodTemplate', 'podtemplates', true),
  core('ServiceAccount', 'serviceaccounts', true, { shortNames: ['sa'], subresources: ['token'] }),
  core('Event', 'events', true, { shortNames: ['ev'] }),
  core('PersistentVolumeClaim', 'persistentvolumeclaims', true, { shortNames: ['pvc'], subresources: ['status'] }),
  grouped('coordination.k8s.io', 'v1', 'Lease', 'leases', true),
  grouped('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies', true, { shortNames: ['netpol'] }),
  grouped('authorization.k8s.io', 'v1', 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', false, { verbs: ['create'] }),
  grouped('authorization.k8s.io', 'v1', 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', false, { verbs: ['create'] }),
  grouped('authentication.k8s.io', 'v1', 'SelfSubjectReview', 'selfsubjectreviews', false, { verbs: ['create'] }),
  grouped('rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true),
  grouped('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true),
  grouped('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false),
  grouped('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false),
];

export function groupVersion(rt: ResourceType): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

export function findResource(group: string, version: string, plural: string): ResourceType | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
}

export function resourceByKind(kind: string): ResourceType {
  const rt = RESOURCES.find((r) => r.kind === kind);
  if (!rt) throw new Error(`dev cluster serves no kind ${kind}`);
  return rt;
}

/** the groups and versions, in the order discovery lists them (core first) */
export function apiGroups(): { group: string; versions: string[] }[] {
  const out: { group: string; versions: string[] }[] = [];
  for (const r of RESOURCES) {
    let g = out.find((x) => x.group === r.group);
    if (!g) out.push((g = { group: r.group, versions: [] }));
    if (!g.versions.includes(r.version)) g.versions.push(r.version);
  }
  return out;
}
