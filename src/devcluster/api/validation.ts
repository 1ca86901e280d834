// Validation with the field paths, error types and sentences of the real API server
// (apimachinery util/validation, pkg/apis/core/validation), so 422 answers read the same.
import type { KubeObject, ResourceType } from '../types.js';
import { invalid } from './errors.js';

import { fieldDuplicate, fieldForbidden, fieldInvalid, fieldNotFound, fieldNotSupported, fieldRequired, fieldTooLong, type FieldError } from './validation-fields.js';
import { secretTypeErrors } from './secret-types.js';
import { finalizerErrors, metaUpdateErrors, ownerReferenceErrors } from './meta-rules.js';
import { rbacErrors, roleRefUpdateErrors } from './rbac-rules.js';
import { externallyAccessible, needsHealthCheckNodePort } from './node-ports.js';

// ---- name rules (apimachinery/pkg/util/validation) ----

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (!examples.length) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}
const maxLenError = (n: number) => `must be no more than ${n} characters`;

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';

const full = (fmt: string) => new RegExp(`^${fmt}$`);
const DNS1123_LABEL_RE = full(DNS1123_LABEL_FMT);
const DNS1123_SUBDOMAIN_RE = full(DNS1123_SUBDOMAIN_FMT);
const DNS1035_LABEL_RE = full(DNS1035_LABEL_FMT);
const QUALIFIED_NAME_RE = full(QUALIFIED_NAME_FMT);
const LABEL_VALUE_RE = full(LABEL_VALUE_FMT);
const CONFIG_KEY_RE = full(CONFIG_KEY_FMT);

export function dns1123LabelErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(v)) {
    errs.push(regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

export function dns1123SubdomainErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(v)) {
    errs.push(regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", DNS1123_SUBDOMAIN_FMT, 'example.com'));
  }
  return errs;
}

export function dns1035LabelErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!DNS1035_LABEL_RE.test(v)) {
    errs.push(regexError("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  }
  return errs;
}

export function pathSegmentErrors(v: string): string[] {
  if (v === '.' || v === '..') return [`may not be '${v}'`];
  const errs: string[] = [];
  for (const c of ['/', '%']) if (v.includes(c)) errs.push(`may not contain '${c}'`);
  return errs;
}

const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** IsQualifiedName: label and annotation keys */
export function labelKeyErrors(key: string): string[] {
  const errs: string[] = [];
  const parts = key.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (!prefix.length) errs.push('prefix part must be non-empty');
    else errs.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [`a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (!name.length) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!QUALIFIED_NAME_RE.test(name)) errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function labelValueErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(v)) {
    errs.push(regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

function configKeyErrors(key: string): string[] {
  const errs: string[] = [];
  if (key.length > 253) errs.push(maxLenError(253));
  if (!CONFIG_KEY_RE.test(key)) errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", CONFIG_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  if (key === '.') errs.push("must not be '.'");
  else if (key === '..') errs.push("must not be '..'");
  else if (key.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

// ---- object meta ----

type NameRule = (v: string) => string[];

/** which rule a kind's metadata.name follows on the real server */
function nameRule(rt: ResourceType): NameRule {
  if (rt.kind === 'Namespace') return dns1123LabelErrors;
  if (rt.kind === 'Service') return dns1035LabelErrors;
  if (rt.group === 'rbac.authorization.k8s.io') return pathSegmentErrors;
  return dns1123SubdomainErrors;
}

/** ValidateObjectMeta's prefix mode: a trailing '-' of generateName is allowed */
const maskTrailingDash = (v: string) => (v.length > 1 && v.endsWith('-') ? `${v.slice(0, -1)}a` : v);

const TOTAL_ANNOTATION_SIZE = 256 * 1024;

function validateMeta(rt: ResourceType, obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const meta = obj.metadata ?? {};
  const rule = nameRule(rt);
  if (meta.generateName) {
    for (const m of rule(maskTrailingDash(meta.generateName))) errs.push(fieldInvalid('metadata.generateName', meta.generateName, m));
  }
  if (!meta.name) {
    if (!meta.generateName) errs.push(fieldRequired('metadata.name', 'name or generateName is required'));
  } else {
    for (const m of rule(meta.name)) errs.push(fieldInvalid('metadata.name', meta.name, m));
  }
  if (meta.namespace && rt.namespaced) {
    for (const m of dns1123LabelErrors(meta.namespace)) errs.push(fieldInvalid('metadata.namespace', meta.namespace, m));
  }
  for (const [k, v] of Object.entries(meta.labels ?? {})) {
    for (const m of labelKeyErrors(k)) errs.push(fieldInvalid('metadata.labels', k, m));
    if (typeof v !== 'string') continue;
    for (const m of labelValueErrors(v)) errs.push(fieldInvalid('metadata.labels', v, m));
  }
  let annotationBytes = 0;
  for (const [k, v] of Object.entries(meta.annotations ?? {})) {
    for (const m of labelKeyErrors(k.toLowerCase())) errs.push(fieldInvalid('metadata.annotations', k, m));
    annotationBytes += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  }
  if (annotationBytes > TOTAL_ANNOTATION_SIZE) errs.push(fieldTooLong('metadata.annotations', TOTAL_ANNOTATION_SIZE));
  errs.push(...ownerReferenceErrors(meta), ...finalizerErrors(meta));
  return errs;
}

// ---- pods ----

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

function validateContainer(c: any, path: string, volumes: Set<string>, errs: FieldError[]): void {
  if (!c.name) errs.push(fieldRequired(`${path}.name`));
  else for (const m of dns1123LabelErrors(c.name)) errs.push(fieldInvalid(`${path}.name`, c.name, m));
  if (!c.image) errs.push(fieldRequired(`${path}.image`));
  else if (String(c.image).trim() !== c.image) errs.push(fieldInvalid(`${path}.image`, c.image, 'must not have leading or trailing whitespace'));
  if (c.imagePullPolicy !== undefined && !PULL_POLICIES.includes(c.imagePullPolicy)) errs.push(fieldNotSupported(`${path}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES));
  (c.ports ?? []).forEach((p: any, i: number) => {
    const pp = `${path}.ports[${i}]`;
    if (!Number.isInteger(p.containerPort) || p.containerPort < 1 || p.containerPort > 65535) {
      errs.push(fieldInvalid(`${pp}.containerPort`, p.containerPort ?? 0, 'must be between 1 and 65535, inclusive'));
    }
    if (p.protocol !== undefined && !PROTOCOLS.includes(p.protocol)) errs.push(fieldNotSupported(`${pp}.protocol`, p.protocol, PROTOCOLS));
  });
  (c.volumeMounts ?? []).forEach((vm: any, i: number) => {
    const vp = `${path}.volumeMounts[${i}]`;
    if (!vm.name) errs.push(fieldRequired(`${vp}.name`));
    else if (!volumes.has(vm.name)) errs.push(fieldNotFound(`${vp}.name`, vm.name));
    if (!vm.mountPath) errs.push(fieldRequired(`${vp}.mountPath`));
  });
}

function validatePodSpec(spec: any, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!spec || typeof spec !== 'object') return [fieldRequired(path)];
  const volumes = new Set<string>();
  (spec.volumes ?? []).forEach((v: any, i: number) => {
    const vp = `${path}.volumes[${i}].name`;
    if (!v?.name) errs.push(fieldRequired(vp));
    else if (volumes.has(v.name)) errs.push(fieldDuplicate(vp, v.name));
    else for (const m of dns1123LabelErrors(v.name)) errs.push(fieldInvalid(vp, v.name, m));
    if (v?.name) volumes.add(v.name);
  });
  const containers: any[] = Array.isArray(spec.containers) ? spec.containers : [];
  const inits: any[] = Array.isArray(spec.initContainers) ? spec.initContainers : [];
  if (!containers.length) errs.push(fieldRequired(`${path}.containers`));
  const seen = new Set<string>();
  containers.forEach((c, i) => {
    const p = `${path}.containers[${i}]`;
    if (c?.name && seen.has(c.name)) errs.push(fieldDuplicate(`${p}.name`, c.name));
    if (c?.name) seen.add(c.name);
    validateContainer(c ?? {}, p, volumes, errs);
  });
  // init container names share one namespace with the regular containers' names
  const regularNames = new Set(containers.map((c) => c?.name).filter(Boolean));
  const initNames = new Set<string>();
  inits.forEach((c, i) => {
    const p = `${path}.initContainers[${i}]`;
    if (c?.name && (regularNames.has(c.name) || initNames.has(c.name))) errs.push(fieldDuplicate(`${p}.name`, c.name));
    if (c?.name) initNames.add(c.name);
    validateContainer(c ?? {}, p, volumes, errs);
  });
  if (spec.restartPolicy === undefined || spec.restartPolicy === '') errs.push(fieldRequired(`${path}.restartPolicy`));
  else if (!RESTART_POLICIES.includes(spec.restartPolicy)) errs.push(fieldNotSupported(`${path}.restartPolicy`, spec.restartPolicy, RESTART_POLICIES));
  if (spec.dnsPolicy !== undefined && !DNS_POLICIES.includes(spec.dnsPolicy)) errs.push(fieldNotSupported(`${path}.dnsPolicy`, spec.dnsPolicy, DNS_POLICIES));
  const ads = spec.activeDeadlineSeconds;
  if (ads !== undefined && ads !== null && (!Number.isInteger(ads) || ads < 1 || ads > 2147483647)) {
    errs.push(fieldInvalid(`${path}.activeDeadlineSeconds`, ads, 'must be between 1 and 2147483647, inclusive'));
  }
  return errs;
}

const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** ValidatePodUpdate's rule: a spec equal to the old one once the mutable fields are copied over */
function podSpecUpdateErrors(oldSpec: any, newSpec: any): FieldError[] {
  const errs: FieldError[] = [];
  const ads = newSpec?.activeDeadlineSeconds;
  const oldAds = oldSpec?.activeDeadlineSeconds;
  if (oldAds != null && (ads == null || ads > oldAds)) {
    errs.push(fieldInvalid('spec.activeDeadlineSeconds', ads ?? null, 'must be less than or equal to previous value'));
  }
  const munged = structuredClone(newSpec ?? {});
  const copyImages = (key: 'containers' | 'initContainers') => {
    const oldList: any[] = oldSpec?.[key] ?? [];
    const newList: any[] = munged[key] ?? [];
    if (oldList.length !== newList.length) return;
    newList.forEach((c, i) => {
      if (c && oldList[i]) c.image = oldList[i].image;
    });
  };
  copyImages('containers');
  copyImages('initContainers');
  munged.activeDeadlineSeconds = oldSpec?.activeDeadlineSeconds;
  const oldTol: any[] = oldSpec?.tolerations ?? [];
  const newTol: any[] = munged.tolerations ?? [];
  const isAddition = oldTol.every((t) => newTol.some((n) => deepEqual(n, t)));
  if (isAddition) munged.tolerations = oldSpec?.tolerations;
  const oldGrace = oldSpec?.terminationGracePeriodSeconds;
  if (oldGrace != null && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = oldGrace;
  if (!deepEqual(stripUndefined(munged), stripUndefined(oldSpec ?? {}))) errs.push(fieldForbidden('spec', POD_UPDATE_FORBIDDEN));
  return errs;
}

// ---- services ----

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

function validateServiceSpec(spec: any): FieldError[] {
  const errs: FieldError[] = [];
  if (!spec || typeof spec !== 'object') return [fieldRequired('spec')];
  if (spec.type !== undefined && !SERVICE_TYPES.includes(spec.type)) errs.push(fieldNotSupported('spec.type', spec.type, SERVICE_TYPES));
  const ports: any[] = spec.ports ?? [];
  const headless = spec.clusterIP === 'None';
  if (!ports.length && !headless && spec.type !== 'ExternalName') errs.push(fieldRequired('spec.ports'));
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const pp = `spec.ports[${i}]`;
    if (ports.length > 1 && !p?.name) errs.push(fieldRequired(`${pp}.name`));
    if (p?.name) {
      if (names.has(p.name)) errs.push(fieldDuplicate(`${pp}.name`, p.name));
      names.add(p.name);
    }
    if (!Number.isInteger(p?.port) || p.port < 1 || p.port > 65535) errs.push(fieldInvalid(`${pp}.port`, p?.port ?? 0, 'must be between 1 and 65535, inclusive'));
    if (p?.protocol !== undefined && !PROTOCOLS.includes(p.protocol)) errs.push(fieldNotSupported(`${pp}.protocol`, p.protocol, PROTOCOLS));
  });
  return [...errs, ...nodePortErrors(spec, ports), ...trafficPolicyErrors(spec)];
}

/** ValidateService's node port rules: one node port per protocol, none on a ClusterIP Service */
function nodePortErrors(spec: any, ports: any[]): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  ports.forEach((p, i) => {
    if (!p?.nodePort) return;
    const key = `${p.protocol ?? 'TCP'}/${p.nodePort}`;
    if (seen.has(key)) errs.push(fieldDuplicate(`spec.ports[${i}].nodePort`, p.nodePort));
    seen.add(key);
  });
  if ((spec.type ?? 'ClusterIP') === 'ClusterIP') {
    ports.forEach((p, i) => {
      if (p?.nodePort) errs.push(fieldForbidden(`spec.ports[${i}].nodePort`, "may not be used when `type` is 'ClusterIP'"));
    });
  }
  if (spec.type !== 'LoadBalancer' && spec.allocateLoadBalancerNodePorts != null) {
    errs.push(fieldForbidden('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"));
  }
  return errs;
}

const TRAFFIC_POLICIES = ['Cluster', 'Local'];

/** validateServiceExternalTrafficPolicy */
function trafficPolicyErrors(spec: any): FieldError[] {
  const errs: FieldError[] = [];
  const policy = spec.externalTrafficPolicy;
  if (!externallyAccessible(spec)) {
    if (policy) errs.push(fieldInvalid('spec.externalTrafficPolicy', policy, 'may only be set for externally-accessible services'));
  } else if (!policy) errs.push(fieldRequired('spec.externalTrafficPolicy'));
  else if (!TRAFFIC_POLICIES.includes(policy)) errs.push(fieldNotSupported('spec.externalTrafficPolicy', policy, TRAFFIC_POLICIES));
  const hc = spec.healthCheckNodePort;
  if (!needsHealthCheckNodePort(spec)) {
    if (hc) errs.push(fieldInvalid('spec.healthCheckNodePort', hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
  } else if (!hc) errs.push(fieldRequired('spec.healthCheckNodePort'));
  else if (!Number.isInteger(hc) || hc < 1 || hc > 65535) errs.push(fieldInvalid('spec.healthCheckNodePort', hc, 'must be between 1 and 65535, inclusive'));
  return errs;
}

// ---- config maps and secrets ----

const MAX_DATA_BYTES = 1024 * 1024;

function validateData(obj: KubeObject, sizePath: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const key of ['data', 'binaryData'] as const) {
    for (const [k, v] of Object.entries((obj[key] ?? {}) as Record<string, unknown>)) {
      for (const m of configKeyErrors(k)) errs.push(fieldInvalid(`${key}[${k}]`, k, m));
      // Secret data and ConfigMap binaryData travel base64-encoded: count the decoded bytes
      const encoded = key === 'binaryData' || obj.kind === 'Secret';
      total += encoded ? Buffer.from(String(v ?? ''), 'base64').length : Buffer.byteLength(String(v ?? ''));
    }
  }
  if (obj.kind === 'Secret') {
    for (const [k, v] of Object.entries((obj.stringData ?? {}) as Record<string, unknown>)) {
      for (const m of configKeyErrors(k)) errs.push(fieldInvalid(`stringData[${k}]`, k, m));
      total += Buffer.byteLength(String(v ?? ''));
    }
  }
  if (total > MAX_DATA_BYTES) errs.push(fieldTooLong(sizePath, MAX_DATA_BYTES));
  return errs;
}

// ---- entry points ----

function kindErrors(rt: ResourceType, obj: KubeObject): FieldError[] {
  switch (rt.kind) {
    case 'Pod':
      return validatePodSpec(obj.spec, 'spec');
    case 'Service':
      return validateServiceSpec(obj.spec);
    case 'ConfigMap':
      // the real ValidateConfigMap reports the total size on the empty path
      return validateData(obj, '');
    case 'Secret':
      return [...validateData(obj, 'data'), ...secretTypeErrors(obj)];
    case 'PodTemplate':
      return obj.template ? validatePodSpec(obj.template.spec, 'template.spec') : [fieldRequired('template')];
    default:
      return rbacErrors(obj);
  }
}

/** throws 422 Invalid when obj may not be created */
export function validateCreate(rt: ResourceType, obj: KubeObject): void {
  const errs = [...validateMeta(rt, obj), ...kindErrors(rt, obj)];
  if (errs.length) throw invalid(rt, obj.metadata?.name || obj.metadata?.generateName || '', errs);
}

/** throws 422 Invalid when old may not become obj */
export function validateUpdate(rt: ResourceType, old: KubeObject, obj: KubeObject): void {
  // ValidateConfigMapUpdate and ValidateSecretUpdate list their own rules before those of the new object
  const errs = [...metaUpdateErrors(old, obj), ...validateMeta(rt, obj), ...dataUpdateErrors(rt, old, obj), ...kindErrors(rt, obj), ...roleRefUpdateErrors(old, obj)];
  if (rt.kind === 'Pod') errs.push(...podSpecUpdateErrors(old.spec, obj.spec));
  if (rt.kind === 'Service' && old.spec?.clusterIP && obj.spec?.clusterIP !== old.spec.clusterIP) {
    errs.push(fieldInvalid('spec.clusterIPs[0]', obj.spec?.clusterIP ?? '', 'may not change once set'));
  }
  if (errs.length) throw invalid(rt, obj.metadata?.name ?? '', errs);
}

/** a Secret keeps its type; an immutable ConfigMap or Secret keeps its data and stays immutable */
function dataUpdateErrors(rt: ResourceType, old: KubeObject, obj: KubeObject): FieldError[] {
  if (rt.kind !== 'ConfigMap' && rt.kind !== 'Secret') return [];
  const errs: FieldError[] = [];
  if (rt.kind === 'Secret' && (obj.type ?? 'Opaque') !== (old.type ?? 'Opaque')) errs.push(fieldInvalid('type', obj.type ?? '', 'field is immutable'));
  if (old.immutable !== true) return errs;
  const frozen = 'field is immutable when `immutable` is set';
  if (obj.immutable !== true) errs.push(fieldForbidden('immutable', frozen));
  if (!deepEqual(old.data ?? {}, obj.data ?? {})) errs.push(fieldForbidden('data', frozen));
  if (rt.kind === 'ConfigMap' && !deepEqual(old.binaryData ?? {}, obj.binaryData ?? {})) errs.push(fieldForbidden('binaryData', frozen));
  return errs;
}

// ---- helpers ----

function stripUndefined(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v ?? null));
}

/** structural equality of JSON values (key order ignored) */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
