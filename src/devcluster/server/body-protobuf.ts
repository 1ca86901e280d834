// Request bodies in Kubernetes protobuf (`application/vnd.kubernetes.protobuf`), which kubectl's typed
// clients send for `kubectl create namespace|configmap|secret|serviceaccount|service|role...`,
// `kubectl debug --copy-to` (a Pod), `kubectl auth can-i` (also `--list`), `kubectl auth whoami` and `kubectl create token`. Decoded
// to the JSON the same object would have, for the kinds those commands create; field numbers are those of
// k8s.io/api's generated.proto files.
import { unsupportedMediaType } from '../api/errors.js';
import { f, LABEL_SELECTOR, OBJECT_META, OBJECT_REFERENCE, SELECTOR_REQUIREMENT, type Field, type Message } from './protobuf-schema.js';
import { POD } from './protobuf-pod.js';

const NAMESPACE: Message = {
  1: f('metadata', OBJECT_META),
  2: f('spec', { 1: f('finalizers', 'string', { repeated: true }) }),
  3: f('status', { 1: f('phase', 'string') }),
};
const CONFIG_MAP: Message = {
  1: f('metadata', OBJECT_META),
  2: f('data', { map: 'string' }),
  3: f('binaryData', { map: 'bytes' }),
  4: f('immutable', 'bool', { pointer: true }),
};
const SECRET: Message = {
  1: f('metadata', OBJECT_META),
  2: f('data', { map: 'bytes' }),
  3: f('type', 'string'),
  4: f('stringData', { map: 'string' }),
  5: f('immutable', 'bool', { pointer: true }),
};
const SERVICE_ACCOUNT: Message = {
  1: f('metadata', OBJECT_META),
  2: f('secrets', OBJECT_REFERENCE, { repeated: true }),
  3: f('imagePullSecrets', { 1: f('name', 'string') }, { repeated: true }),
  4: f('automountServiceAccountToken', 'bool', { pointer: true }),
};
const SERVICE_PORT: Message = {
  1: f('name', 'string'),
  2: f('protocol', 'string'),
  3: f('port', 'int'),
  4: f('targetPort', 'intstr'),
  5: f('nodePort', 'int'),
  6: f('appProtocol', 'string', { pointer: true }),
};
const SERVICE: Message = {
  1: f('metadata', OBJECT_META),
  2: f('spec', {
    1: f('ports', SERVICE_PORT, { repeated: true }),
    2: f('selector', { map: 'string' }),
    3: f('clusterIP', 'string'),
    4: f('type', 'string'),
    5: f('externalIPs', 'string', { repeated: true }),
    7: f('sessionAffinity', 'string'),
    8: f('loadBalancerIP', 'string'),
    9: f('loadBalancerSourceRanges', 'string', { repeated: true }),
    10: f('externalName', 'string'),
    11: f('externalTrafficPolicy', 'string'),
    12: f('healthCheckNodePort', 'int'),
    13: f('publishNotReadyAddresses', 'bool'),
    14: f('sessionAffinityConfig', { 1: f('clientIP', { 1: f('timeoutSeconds', 'int', { pointer: true }) }) }),
    17: f('ipFamilyPolicy', 'string', { pointer: true }),
    18: f('clusterIPs', 'string', { repeated: true }),
    19: f('ipFamilies', 'string', { repeated: true }),
    20: f('allocateLoadBalancerNodePorts', 'bool', { pointer: true }),
    21: f('loadBalancerClass', 'string', { pointer: true }),
    22: f('internalTrafficPolicy', 'string', { pointer: true }),
    23: f('trafficDistribution', 'string', { pointer: true }),
  }),
};
const POLICY_RULE: Message = {
  1: f('verbs', 'string', { repeated: true }),
  2: f('apiGroups', 'string', { repeated: true }),
  3: f('resources', 'string', { repeated: true }),
  4: f('resourceNames', 'string', { repeated: true }),
  5: f('nonResourceURLs', 'string', { repeated: true }),
};
const ROLE: Message = { 1: f('metadata', OBJECT_META), 2: f('rules', POLICY_RULE, { repeated: true }) };
const CLUSTER_ROLE: Message = { ...ROLE, 3: f('aggregationRule', { 1: f('clusterRoleSelectors', LABEL_SELECTOR, { repeated: true }) }) };
const BINDING: Message = {
  1: f('metadata', OBJECT_META),
  2: f('subjects', { 1: f('kind', 'string'), 2: f('apiGroup', 'string'), 3: f('name', 'string'), 4: f('namespace', 'string') }, { repeated: true }),
  3: f('roleRef', { 1: f('apiGroup', 'string'), 2: f('kind', 'string'), 3: f('name', 'string') }),
};
const SELECTOR_ATTRIBUTES: Message = { 1: f('rawSelector', 'string'), 2: f('requirements', SELECTOR_REQUIREMENT, { repeated: true }) };
const SELF_SUBJECT_ACCESS_REVIEW: Message = {
  1: f('metadata', OBJECT_META),
  2: f('spec', {
    1: f('resourceAttributes', {
      1: f('namespace', 'string'),
      2: f('verb', 'string'),
      3: f('group', 'string'),
      4: f('version', 'string'),
      5: f('resource', 'string'),
      6: f('subresource', 'string'),
      7: f('name', 'string'),
      8: f('fieldSelector', SELECTOR_ATTRIBUTES),
      9: f('labelSelector', SELECTOR_ATTRIBUTES),
    }),
    2: f('nonResourceAttributes', { 1: f('path', 'string'), 2: f('verb', 'string') }),
  }),
};

const SELF_SUBJECT_RULES_REVIEW: Message = { 1: f('metadata', OBJECT_META), 2: f('spec', { 1: f('namespace', 'string') }) };
const SELF_SUBJECT_REVIEW: Message = { 1: f('metadata', OBJECT_META) };
const TOKEN_REQUEST: Message = {
  1: f('metadata', OBJECT_META),
  2: f('spec', {
    1: f('audiences', 'string', { repeated: true }),
    3: f('boundObjectRef', { 1: f('kind', 'string'), 2: f('apiVersion', 'string'), 3: f('name', 'string'), 4: f('uid', 'string') }, { pointer: true }),
    4: f('expirationSeconds', 'int', { pointer: true }),
  }),
};

/** "apiVersion/kind" → schema */
const SCHEMAS: Record<string, Message> = {
  'v1/Namespace': NAMESPACE,
  'v1/ConfigMap': CONFIG_MAP,
  'v1/Secret': SECRET,
  'v1/ServiceAccount': SERVICE_ACCOUNT,
  'v1/Service': SERVICE,
  'v1/Pod': POD,
  'rbac.authorization.k8s.io/v1/Role': ROLE,
  'rbac.authorization.k8s.io/v1/ClusterRole': CLUSTER_ROLE,
  'rbac.authorization.k8s.io/v1/RoleBinding': BINDING,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': BINDING,
  'authorization.k8s.io/v1/SelfSubjectAccessReview': SELF_SUBJECT_ACCESS_REVIEW,
  'authorization.k8s.io/v1/SelfSubjectRulesReview': SELF_SUBJECT_RULES_REVIEW,
  'authentication.k8s.io/v1/SelfSubjectReview': SELF_SUBJECT_REVIEW,
  'authentication.k8s.io/v1/TokenRequest': TOKEN_REQUEST,
};

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
      if (shift > 70n) throw new Error('varint too long');
    }
  }
  bytes(): Buffer {
    const len = Number(this.varint());
    if (this.pos + len > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
  }
}

/** each field of a message as (number, wire type, raw value) */
function* fields(buf: Buffer): Generator<{ num: number; wire: number; value: bigint | Buffer }> {
  const r = new Reader(buf);
  while (!r.done) {
    const key = Number(r.varint());
    const num = key >>> 3;
    const wire = key & 7;
    if (wire === 0) yield { num, wire, value: r.varint() };
    else if (wire === 2) yield { num, wire, value: r.bytes() };
    else r.skip(wire);
  }
}

const int64 = (v: bigint) => Number(BigInt.asIntN(64, v));

function decodeMessage(buf: Buffer, schema: Message): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { num, value } of fields(buf)) {
    const field = schema[num];
    if (!field) continue;
    const v = decodeValue(value, field);
    if (v === undefined) continue;
    if (field.inline) Object.assign(out, v);
    else if (field.repeated) ((out[field.name] ??= []) as unknown[]).push(v);
    else if (typeof field.type === 'object' && 'map' in field.type) Object.assign((out[field.name] ??= {}) as object, v);
    else out[field.name] = v;
  }
  return out;
}

/** resource.Quantity: its field 1 is the canonical string ("100m", "1Gi") that JSON shows */
function quantity(buf: Buffer): string {
  let text = '';
  for (const e of fields(buf)) if (e.num === 1 && Buffer.isBuffer(e.value)) text = e.value.toString('utf8');
  return text;
}

function decodeValue(value: bigint | Buffer, field: Field): unknown {
  const t = field.type;
  if (typeof t === 'object' && 'map' in t) {
    if (!Buffer.isBuffer(value)) return undefined;
    let key = '';
    let val: unknown = '';
    for (const e of fields(value)) {
      if (e.num === 1 && Buffer.isBuffer(e.value)) key = e.value.toString('utf8');
      if (e.num === 2 && Buffer.isBuffer(e.value)) val = t.map === 'bytes' ? e.value.toString('base64') : t.map === 'quantity' ? quantity(e.value) : e.value.toString('utf8');
    }
    return { [key]: val };
  }
  if (typeof t === 'object') return Buffer.isBuffer(value) ? decodeMessage(value, t) : undefined;
  switch (t) {
    case 'string':
      return Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
    case 'bytes':
      return Buffer.isBuffer(value) ? value.toString('base64') : undefined;
    case 'bool':
      return typeof value === 'bigint' ? value !== 0n : undefined;
    case 'int':
      return typeof value === 'bigint' ? int64(value) : undefined;
    case 'quantity':
      return Buffer.isBuffer(value) ? quantity(value) : undefined;
    case 'time': {
      if (!Buffer.isBuffer(value)) return undefined;
      let seconds = 0;
      for (const e of fields(value)) if (e.num === 1 && typeof e.value === 'bigint') seconds = int64(e.value);
      return seconds === 0 ? undefined : new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    }
    case 'intstr': {
      if (!Buffer.isBuffer(value)) return undefined;
      let type = 0;
      let intVal = 0;
      let strVal = '';
      for (const e of fields(value)) {
        if (e.num === 1 && typeof e.value === 'bigint') type = int64(e.value);
        if (e.num === 2 && typeof e.value === 'bigint') intVal = int64(e.value);
        if (e.num === 3 && Buffer.isBuffer(e.value)) strVal = e.value.toString('utf8');
      }
      return type === 1 ? strVal : intVal;
    }
  }
}

/**
 * Go's protobuf encoding writes every non-pointer field, zero or not, where its JSON encoding omits
 * empty ones: drop the zero values that were not pointers, so the object reads as its JSON would.
 */
function omitEmpty(obj: Record<string, unknown>, schema: Message): void {
  for (const field of Object.values(schema)) {
    // an embedded struct's fields sit in this object itself
    if (field.inline && typeof field.type === 'object' && !('map' in field.type)) {
      omitEmpty(obj, field.type);
      continue;
    }
    const v = obj[field.name];
    if (v === undefined) continue;
    if (typeof field.type === 'object' && !('map' in field.type) && v && typeof v === 'object') {
      for (const item of Array.isArray(v) ? v : [v]) omitEmpty(item as Record<string, unknown>, field.type);
    }
    if (field.pointer) continue;
    const empty =
      v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);
    if (empty && field.name !== 'metadata') delete obj[field.name];
  }
}

/** decodes a `k8s\0`-prefixed runtime.Unknown envelope into a JSON object with apiVersion and kind */
export function decodeProtobufObject(buf: Buffer): Record<string, unknown> {
  if (buf.length < 4 || !buf.subarray(0, 4).equals(MAGIC)) throw unsupportedMediaType('the protobuf body does not start with the Kubernetes magic number');
  let apiVersion = '';
  let kind = '';
  let raw: Buffer | undefined;
  try {
    for (const e of fields(buf.subarray(4))) {
      if (e.num === 1 && Buffer.isBuffer(e.value)) {
        for (const t of fields(e.value)) {
          if (t.num === 1 && Buffer.isBuffer(t.value)) apiVersion = t.value.toString('utf8');
          if (t.num === 2 && Buffer.isBuffer(t.value)) kind = t.value.toString('utf8');
        }
      }
      if (e.num === 2 && Buffer.isBuffer(e.value)) raw = e.value;
    }
  } catch (err) {
    throw unsupportedMediaType(`malformed protobuf body: ${(err as Error).message}`);
  }
  const schema = SCHEMAS[`${apiVersion}/${kind}`];
  if (!schema) {
    throw unsupportedMediaType(`the dev cluster reads protobuf bodies only for ${Object.keys(SCHEMAS).join(', ')}; send ${apiVersion}/${kind} as application/json`);
  }
  let obj: Record<string, unknown>;
  try {
    obj = decodeMessage(raw ?? Buffer.alloc(0), schema);
  } catch (err) {
    throw unsupportedMediaType(`malformed protobuf body: ${(err as Error).message}`);
  }
  omitEmpty(obj, schema);
  return { apiVersion, kind, ...obj };
}
