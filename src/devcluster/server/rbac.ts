// Authorization as kube-apiserver's RBAC authorizer decides it, reading Roles, ClusterRoles and their bindings
// live from the store, plus the rules the users file grants directly and the bootstrap policy every
// real cluster has (cluster-admin, admin, edit, view, system:basic-user, system:discovery, ...).
import { resourceByKind } from '../api/resources.js';
import type { KubeObject, ObjectStore, RequestAttributes, UserInfo } from '../types.js';
import type { FileRule } from './users-file.js';

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface Decision {
  allowed: boolean;
  reason?: string;
}

const MASTERS_GROUP = 'system:masters';
const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const RBAC_GROUP = 'rbac.authorization.k8s.io';

function clusterRole(name: string, rules: PolicyRule[]): KubeObject {
  return { apiVersion: `${RBAC_GROUP}/v1`, kind: 'ClusterRole', metadata: { name, labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } }, rules };
}

function clusterRoleBinding(name: string, role: string, groups: string[]): KubeObject {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
    subjects: groups.map((g) => ({ apiGroup: RBAC_GROUP, kind: 'Group', name: g })),
  };
}

const VIEW_RULES: PolicyRule[] = [
  {
    apiGroups: [''],
    resources: ['pods', 'pods/log', 'pods/status', 'services', 'services/status', 'serviceaccounts', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps', 'events', 'namespaces', 'namespaces/status', 'podtemplates'],
    verbs: READ,
  },
  { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: READ },
];

const EDIT_RULES: PolicyRule[] = [
  ...VIEW_RULES,
  { apiGroups: [''], resources: ['pods', 'pods/attach', 'pods/exec', 'pods/portforward'], verbs: WRITE },
  { apiGroups: [''], resources: ['pods/attach', 'pods/exec', 'pods/portforward', 'secrets'], verbs: READ },
  { apiGroups: [''], resources: ['services', 'serviceaccounts', 'persistentvolumeclaims', 'configmaps', 'secrets', 'events', 'podtemplates'], verbs: WRITE },
  // system:aggregate-to-edit: `kubectl create token` for the namespace's ServiceAccounts
  { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
  { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: WRITE },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...READ, ...WRITE] },
];

/**
 * The bootstrap ClusterRoles of a real cluster, reduced to the resources the dev cluster serves. The server may
 * seed them into the store; when the store has none of that name the authorizer uses these.
 */
export const BOOTSTRAP_CLUSTER_ROLES: readonly KubeObject[] = [
  clusterRole('cluster-admin', [
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    { nonResourceURLs: ['*'], verbs: ['*'] },
  ]),
  clusterRole('admin', [...EDIT_RULES, { apiGroups: [RBAC_GROUP], resources: ['roles', 'rolebindings'], verbs: [...READ, ...WRITE] }]),
  clusterRole('edit', EDIT_RULES),
  clusterRole('view', VIEW_RULES),
  clusterRole('system:basic-user', [
    { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
  ]),
  clusterRole('system:discovery', [
    { nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'], verbs: ['get'] },
  ]),
  clusterRole('system:public-info-viewer', [{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }]),
];

export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: readonly KubeObject[] = [
  clusterRoleBinding('cluster-admin', 'cluster-admin', [MASTERS_GROUP]),
  clusterRoleBinding('system:basic-user', 'system:basic-user', ['system:authenticated']),
  clusterRoleBinding('system:discovery', 'system:discovery', ['system:authenticated']),
  clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
];

// ---- rule matching (k8s.io/kubernetes/pkg/apis/rbac/v1 evaluation helpers) ----

const has = (list: string[] | undefined, value: string) => (list ?? []).some((x) => x === '*' || x === value);

function resourceMatches(ruleResources: string[] | undefined, resource: string, subresource: string | undefined, allowPrefixWildcard: boolean): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of ruleResources ?? []) {
    if (r === '*' || r === combined) return true;
    if (!subresource) continue;
    if (r === `*/${subresource}`) return true;
    // "pods/*" is a users-file convenience; real RBAC has no such wildcard, so Roles do not get it
    if (allowPrefixWildcard && r === `${resource}/*`) return true;
  }
  return false;
}

function nonResourceURLMatches(urls: string[] | undefined, path: string): boolean {
  return (urls ?? []).some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

function ruleAllows(rule: PolicyRule, attrs: RequestAttributes, allowPrefixWildcard = false): boolean {
  if (!has(rule.verbs, attrs.verb)) return false;
  if (attrs.nonResourcePath !== undefined) return nonResourceURLMatches(rule.nonResourceURLs, attrs.nonResourcePath);
  if (!has(rule.apiGroups, attrs.apiGroup)) return false;
  if (!resourceMatches(rule.resources, attrs.resource, attrs.subresource, allowPrefixWildcard)) return false;
  if (!rule.resourceNames || rule.resourceNames.length === 0) return true;
  return attrs.name !== undefined && rule.resourceNames.includes(attrs.name);
}

function fileRuleAllows(rule: FileRule, attrs: RequestAttributes): boolean {
  if (attrs.nonResourcePath === undefined && rule.namespaces && (!attrs.namespace || !rule.namespaces.includes(attrs.namespace))) return false;
  return ruleAllows(rule, attrs, true);
}

// ---- subjects ----

function appliesTo(subject: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const ns = subject.namespace || bindingNamespace;
      return ns !== '' && user.name === `system:serviceaccount:${ns}:${subject.name}`;
    }
    default:
      return false;
  }
}

function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount') return `${subject.kind} "${subject.name}/${subject.namespace || bindingNamespace}"`;
  return `${subject.kind} "${subject.name}"`;
}

export class RbacAuthorizer {
  constructor(
    private readonly store: ObjectStore,
    private readonly fileRules: Map<string, FileRule[]>,
  ) {}

  authorize(user: UserInfo, attrs: RequestAttributes): Decision {
    // the real server short-circuits system:masters before RBAC, with no reason
    if (user.groups.includes(MASTERS_GROUP)) return { allowed: true };

    const own = this.fileRules.get(user.name) ?? [];
    const granted = own.findIndex((rule) => fileRuleAllows(rule, attrs));
    if (granted >= 0) return { allowed: true, reason: `berth: allowed by rule ${granted} of User "${user.name}" in the users file` };

    const errors: string[] = [];
    for (const binding of this.clusterRoleBindings()) {
      const reason = this.visitBinding(binding, user, attrs, errors);
      if (reason) return { allowed: true, reason };
    }
    if (attrs.namespace && attrs.nonResourcePath === undefined) {
      for (const binding of this.store.list(resourceByKind('RoleBinding'), attrs.namespace).items) {
        const reason = this.visitBinding(binding, user, attrs, errors);
        if (reason) return { allowed: true, reason };
      }
    }
    const decision: Decision = { allowed: false };
    if (errors.length > 0) decision.reason = `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`;
    return decision;
  }

  /**
   * Every rule that applies to the user in a namespace (SelfSubjectRulesReview, `kubectl auth can-i --list`), as
   * the RBAC rule resolver lists them: the users file's own rules, then cluster role bindings, then the
   * namespace's role bindings.
   */
  rulesFor(user: UserInfo, namespace: string): PolicyRule[] {
    const own = (this.fileRules.get(user.name) ?? [])
      .filter((rule) => !rule.namespaces || rule.namespaces.includes(namespace))
      .map(({ namespaces: _n, ...rule }) => rule);
    const bound = (binding: KubeObject): PolicyRule[] => {
      const bindingNamespace = binding.metadata.namespace ?? '';
      const subjects: Subject[] = Array.isArray(binding.subjects) ? binding.subjects : [];
      if (!subjects.some((s) => appliesTo(s, user, bindingNamespace))) return [];
      return this.rulesOf(binding.roleRef?.kind, binding.roleRef?.name, bindingNamespace, []);
    };
    const roleBindings = namespace ? this.store.list(resourceByKind('RoleBinding'), namespace).items : [];
    return [...own, ...this.clusterRoleBindings().flatMap(bound), ...roleBindings.flatMap(bound)];
  }

  private clusterRoleBindings(): KubeObject[] {
    const stored = this.store.list(resourceByKind('ClusterRoleBinding'), undefined).items;
    const names = new Set(stored.map((b) => b.metadata.name));
    return [...stored, ...BOOTSTRAP_CLUSTER_ROLE_BINDINGS.filter((b) => !names.has(b.metadata.name))];
  }

  /** The "allowed by" sentence when the binding applies to the user and its role allows the request. */
  private visitBinding(binding: KubeObject, user: UserInfo, attrs: RequestAttributes, errors: string[]): string | undefined {
    const namespace = binding.metadata.namespace ?? '';
    const subjects: Subject[] = Array.isArray(binding.subjects) ? binding.subjects : [];
    const subject = subjects.find((s) => appliesTo(s, user, namespace));
    if (!subject) return undefined;
    const roleRef = binding.roleRef ?? {};
    const rules = this.rulesOf(roleRef.kind, roleRef.name, namespace, errors);
    if (!rules.some((rule) => ruleAllows(rule, attrs))) return undefined;
    const bindingName = binding.kind === 'RoleBinding' || namespace ? `RoleBinding "${binding.metadata.name}/${namespace}"` : `ClusterRoleBinding "${binding.metadata.name}"`;
    return `RBAC: allowed by ${bindingName} of ${roleRef.kind} "${roleRef.name}" to ${describeSubject(subject, namespace)}`;
  }

  private rulesOf(kind: string, name: string, namespace: string, errors: string[]): PolicyRule[] {
    if (kind === 'Role') {
      const role = namespace ? this.store.tryGet(resourceByKind('Role'), namespace, name) : undefined;
      if (!role) errors.push(`role.rbac.authorization.k8s.io "${name}" not found`);
      return role?.rules ?? [];
    }
    if (kind === 'ClusterRole') {
      const role = this.store.tryGet(resourceByKind('ClusterRole'), undefined, name) ?? BOOTSTRAP_CLUSTER_ROLES.find((r) => r.metadata.name === name);
      if (!role) errors.push(`clusterrole.rbac.authorization.k8s.io "${name}" not found`);
      return role?.rules ?? [];
    }
    return [];
  }
}
