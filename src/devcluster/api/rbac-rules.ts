// RBAC objects as the rbac registry defaults and validates them (pkg/apis/rbac/v1 defaults, pkg/apis/rbac/
// validation): a binding's roleRef names a Role or ClusterRole of rbac.authorization.k8s.io and never changes,
// its subjects are Users, Groups or ServiceAccounts, and a rule names verbs and what they apply to. Without these
// checks a binding could be pointed at another role by a patch, or grant nothing while it looks as if it did.
import type { KubeObject } from '../types.js';
import { dns1123SubdomainErrors, pathSegmentErrors } from './validation.js';
import { fieldInvalid, fieldNotSupported, fieldRequired, type FieldError } from './validation-fields.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const BINDINGS = new Set(['RoleBinding', 'ClusterRoleBinding']);

interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

interface Subject {
  kind?: string;
  apiGroup?: string;
  name?: string;
  namespace?: string;
}

interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** SetDefaults_RoleBinding/ClusterRoleBinding and SetDefaults_Subject: the API group when left out */
export function defaultRbac(obj: KubeObject): void {
  if (!BINDINGS.has(obj.kind)) return;
  const ref = obj.roleRef as RoleRef | undefined;
  if (ref && !ref.apiGroup) ref.apiGroup = RBAC_GROUP;
  for (const s of (obj.subjects ?? []) as Subject[]) {
    if (!s.apiGroup && (s.kind === 'User' || s.kind === 'Group')) s.apiGroup = RBAC_GROUP;
  }
}

function subjectErrors(s: Subject, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!s.name) errs.push(fieldRequired(`${path}.name`));
  switch (s.kind) {
    case 'ServiceAccount':
      if (s.name) for (const m of dns1123SubdomainErrors(s.name)) errs.push(fieldInvalid(`${path}.name`, s.name, m));
      if (s.apiGroup) errs.push(fieldNotSupported(`${path}.apiGroup`, s.apiGroup, ['']));
      if (!namespaced && !s.namespace) errs.push(fieldRequired(`${path}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (s.apiGroup !== RBAC_GROUP) errs.push(fieldNotSupported(`${path}.apiGroup`, s.apiGroup ?? '', [RBAC_GROUP]));
      break;
    default:
      errs.push(fieldNotSupported(`${path}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

function bindingErrors(obj: KubeObject): FieldError[] {
  const namespaced = obj.kind === 'RoleBinding';
  const ref = (obj.roleRef ?? {}) as RoleRef;
  const errs: FieldError[] = [];
  if (ref.apiGroup !== RBAC_GROUP) errs.push(fieldNotSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind ?? '')) errs.push(fieldNotSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) errs.push(fieldRequired('roleRef.name'));
  else for (const m of pathSegmentErrors(ref.name)) errs.push(fieldInvalid('roleRef.name', ref.name, m));
  ((obj.subjects ?? []) as Subject[]).forEach((s, i) => errs.push(...subjectErrors(s, namespaced, `subjects[${i}]`)));
  return errs;
}

/** `%#v` of a Go []string, as field.Invalid prints a rule's nonResourceURLs */
const goStrings = (values: string[]) => `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;

function ruleErrors(rule: PolicyRule, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!rule.verbs?.length) errs.push(fieldRequired(`${path}.verbs`, 'verbs must contain at least one value'));
  const urls = rule.nonResourceURLs ?? [];
  if (urls.length) {
    const invalid = (detail: string): FieldError => ({ field: `${path}.nonResourceURLs`, type: 'FieldValueInvalid', message: `Invalid value: ${goStrings(urls)}: ${detail}` });
    if (namespaced) errs.push(invalid('namespaced rules cannot apply to non-resource URLs'));
    if (rule.apiGroups?.length || rule.resources?.length || rule.resourceNames?.length) errs.push(invalid('rules cannot apply to both regular resources and non-resource URLs'));
    return errs;
  }
  if (!rule.apiGroups?.length) errs.push(fieldRequired(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  if (!rule.resources?.length) errs.push(fieldRequired(`${path}.resources`, 'resource rules must supply at least one resource'));
  return errs;
}

/** the kind-specific errors of a Role, ClusterRole, RoleBinding or ClusterRoleBinding */
export function rbacErrors(obj: KubeObject): FieldError[] {
  if (BINDINGS.has(obj.kind)) return bindingErrors(obj);
  if (obj.kind !== 'Role' && obj.kind !== 'ClusterRole') return [];
  const namespaced = obj.kind === 'Role';
  return ((obj.rules ?? []) as PolicyRule[]).flatMap((r, i) => ruleErrors(r, namespaced, `rules[${i}]`));
}

/** a binding's roleRef is fixed at creation: another role needs another binding */
export function roleRefUpdateErrors(old: KubeObject, obj: KubeObject): FieldError[] {
  if (!BINDINGS.has(obj.kind)) return [];
  const was = (old.roleRef ?? {}) as RoleRef;
  const now = (obj.roleRef ?? {}) as RoleRef;
  if (was.apiGroup === now.apiGroup && was.kind === now.kind && was.name === now.name) return [];
  const value = `rbac.RoleRef{APIGroup:${JSON.stringify(now.apiGroup ?? '')}, Kind:${JSON.stringify(now.kind ?? '')}, Name:${JSON.stringify(now.name ?? '')}}`;
  return [{ field: 'roleRef', type: 'FieldValueInvalid', message: `Invalid value: ${value}: cannot change roleRef` }];
}
