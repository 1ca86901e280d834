// PATCH bodies applied the way kube-apiserver applies them: JSON merge patch (RFC 7386), JSON patch
// (RFC 6902) and strategic merge patch for the built-in kinds the dev cluster serves.
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '../types.js';
import { ApiError, badRequest, unsupportedMediaType } from './errors.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonMap = { [key: string]: Json };

const MERGE_PATCH = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';
const PATCH_TYPES = [JSON_PATCH, MERGE_PATCH, APPLY_PATCH, STRATEGIC_PATCH];

/**
 * Returns the patched object; `current` is left untouched. Throws ApiError as the real server answers.
 *
 * Server-side apply (`application/apply-patch+yaml`) is approximated: without managed-fields bookkeeping the
 * applied configuration is merged like a strategic merge patch, so it sets and merges fields but never removes
 * fields an earlier apply set and this one leaves out.
 */
export function applyPatch(contentType: string, current: KubeObject, patch: unknown): KubeObject {
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  if (!PATCH_TYPES.includes(mediaType)) {
    throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`);
  }
  const body = parseBody(patch, mediaType === APPLY_PATCH);
  const doc = structuredClone(current) as unknown as JsonMap;
  let result: Json;
  if (mediaType === MERGE_PATCH) result = applyMergePatch(doc, body);
  else if (mediaType === JSON_PATCH) result = applyJsonPatch(doc, body);
  else result = applyStrategicPatch(doc, body, schemaForKind(current.kind));
  if (!isMap(result)) throw patchRejected();
  return result as unknown as KubeObject;
}

/** The HTTP layer may hand over the raw body; accept it in any of the shapes it could have. */
function parseBody(patch: unknown, yaml: boolean): Json {
  if (typeof patch === 'string' || patch instanceof Uint8Array) {
    const text = typeof patch === 'string' ? patch : Buffer.from(patch).toString('utf8');
    try {
      return (yaml ? parseYaml(text) : JSON.parse(text)) as Json;
    } catch (err) {
      throw badRequest(`error decoding patch: ${(err as Error).message}`);
    }
  }
  return structuredClone(patch) as Json;
}

/**
 * What the server answers when a JSON patch cannot be applied (a failed `test`, a missing path): a 422 whose
 * message hides the cause (apiserver uses NewGenericServerResponse without the server message).
 */
function patchRejected(): ApiError {
  return new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
}

function isMap(v: unknown): v is JsonMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

// ---- RFC 7386 ----

function applyMergePatch(doc: JsonMap, patch: Json): Json {
  if (!isMap(patch)) throw badRequest('Invalid JSON Patch');
  return mergePatchValue(doc, patch);
}

function mergePatchValue(target: Json | undefined, patch: Json): Json {
  if (!isMap(patch)) return patch;
  const result: JsonMap = isMap(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatchValue(result[key], value);
  }
  return result;
}

// ---- RFC 6902 ----

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: Json;
  hasValue: boolean;
}

function applyJsonPatch(doc: JsonMap, patch: Json): Json {
  if (!Array.isArray(patch)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  const ops = patch.map(toOperation);
  if (ops.length > 10000) throw new ApiError(413, 'RequestEntityTooLarge', `The allowed maximum operations in a JSON patch is 10000, got ${ops.length}`);
  let root: Json = doc;
  for (const op of ops) root = applyOperation(root, op);
  return root;
}

function toOperation(raw: Json): Operation {
  if (!isMap(raw)) throw badRequest('json: cannot unmarshal array into Go value of type jsonpatch.Operation');
  const str = (v: Json | undefined) => (typeof v === 'string' ? v : undefined);
  // a missing "path" is an apply-time failure in the real server: a pointer without a leading "/" gets the same 422
  const op: Operation = { op: str(raw.op) ?? '', path: str(raw.path) ?? 'missing', hasValue: Object.hasOwn(raw, 'value') };
  if (op.hasValue) op.value = raw.value;
  const from = str(raw.from);
  if (from !== undefined) op.from = from;
  return op;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw patchRejected();
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The container of the last token and that token; throws when an intermediate node is missing. */
function locate(root: Json, tokens: string[]): { parent: Json; key: string } {
  let node: Json = root;
  for (const token of tokens.slice(0, -1)) {
    const next = child(node, token);
    if (next === undefined) throw patchRejected();
    node = next;
  }
  return { parent: node, key: tokens[tokens.length - 1]! };
}

function arrayIndex(arr: Json[], token: string, allowEnd: boolean): number {
  if (token === '-' && allowEnd) return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw patchRejected();
  const i = Number(token);
  if (i > arr.length || (!allowEnd && i === arr.length)) throw patchRejected();
  return i;
}

function child(node: Json, token: string): Json | undefined {
  if (Array.isArray(node)) {
    if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
    return node[Number(token)];
  }
  if (isMap(node)) return Object.hasOwn(node, token) ? node[token] : undefined;
  return undefined;
}

function getAt(root: Json, pointer: string): Json | undefined {
  let node: Json | undefined = root;
  for (const token of parsePointer(pointer)) {
    if (node === undefined) return undefined;
    node = child(node, token);
  }
  return node;
}

function addAt(root: Json, pointer: string, value: Json): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const { parent, key } = locate(root, tokens);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true), 0, value);
  else if (isMap(parent)) parent[key] = value;
  else throw patchRejected();
  return root;
}

function removeAt(root: Json, pointer: string): { root: Json; removed: Json } {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw patchRejected();
  const { parent, key } = locate(root, tokens);
  if (Array.isArray(parent)) {
    const i = arrayIndex(parent, key, false);
    return { root, removed: parent.splice(i, 1)[0]! };
  }
  if (isMap(parent) && Object.hasOwn(parent, key)) {
    const removed = parent[key]!;
    delete parent[key];
    return { root, removed };
  }
  throw patchRejected();
}

function applyOperation(root: Json, op: Operation): Json {
  switch (op.op) {
    case 'add':
      if (!op.hasValue) throw patchRejected();
      return addAt(root, op.path, structuredClone(op.value!));
    case 'remove':
      return removeAt(root, op.path).root;
    case 'replace': {
      if (!op.hasValue) throw patchRejected();
      if (op.path === '') return structuredClone(op.value!);
      const { root: without } = removeAt(root, op.path);
      return addAt(without, op.path, structuredClone(op.value!));
    }
    case 'move': {
      if (op.from === undefined) throw patchRejected();
      if (op.from === op.path) return root;
      if (op.path.startsWith(`${op.from}/`)) throw patchRejected();
      const { root: without, removed } = removeAt(root, op.from);
      return addAt(without, op.path, removed);
    }
    case 'copy': {
      if (op.from === undefined) throw patchRejected();
      const value = getAt(root, op.from);
      if (value === undefined) throw patchRejected();
      return addAt(root, op.path, structuredClone(value));
    }
    case 'test': {
      const actual = getAt(root, op.path);
      // evanphx/json-patch: testing an absent member against null succeeds
      if (actual === undefined) {
        if (!op.hasValue || op.value === null) return root;
        throw patchRejected();
      }
      if (!deepEqual(actual, op.hasValue ? op.value : null)) throw patchRejected();
      return root;
    }
    default:
      throw patchRejected();
  }
}

// ---- strategic merge patch ----

/** How a field merges: `merge` lists are merged (by `key`, or as a set of primitives without one). */
interface FieldStrategy {
  merge?: { key?: string };
  /** the element type (lists) or the nested type (maps) */
  type?: TypeSchema;
}
type TypeSchema = Record<string, FieldStrategy>;

const objectMeta: TypeSchema = {
  finalizers: { merge: {} },
  ownerReferences: { merge: { key: 'uid' } },
};

const container: TypeSchema = {
  ports: { merge: { key: 'containerPort' } },
  env: { merge: { key: 'name' } },
  volumeMounts: { merge: { key: 'mountPath' } },
  volumeDevices: { merge: { key: 'devicePath' } },
};

const podSpec: TypeSchema = {
  volumes: { merge: { key: 'name' } },
  initContainers: { merge: { key: 'name' }, type: container },
  containers: { merge: { key: 'name' }, type: container },
  ephemeralContainers: { merge: { key: 'name' }, type: container },
  imagePullSecrets: { merge: { key: 'name' } },
  hostAliases: { merge: { key: 'ip' } },
  topologySpreadConstraints: { merge: { key: 'topologyKey' } },
  schedulingGates: { merge: { key: 'name' } },
  resourceClaims: { merge: { key: 'name' } },
};

const conditionsByType: TypeSchema = { conditions: { merge: { key: 'type' } } };

const podStatus: TypeSchema = {
  ...conditionsByType,
  podIPs: { merge: { key: 'ip' } },
  hostIPs: { merge: { key: 'ip' } },
  resourceClaimStatuses: { merge: { key: 'name' } },
};

const KIND_SCHEMAS: Record<string, TypeSchema> = {
  Pod: { metadata: { type: objectMeta }, spec: { type: podSpec }, status: { type: podStatus } },
  PodTemplate: { metadata: { type: objectMeta }, template: { type: { metadata: { type: objectMeta }, spec: { type: podSpec } } } },
  Service: { metadata: { type: objectMeta }, spec: { type: { ports: { merge: { key: 'port' } } } }, status: { type: conditionsByType } },
  ServiceAccount: { metadata: { type: objectMeta }, secrets: { merge: { key: 'name' } }, imagePullSecrets: { merge: { key: 'name' } } },
  Node: {
    metadata: { type: objectMeta },
    spec: { type: { podCIDRs: { merge: {} } } },
    status: { type: { conditions: { merge: { key: 'type' } }, addresses: { merge: { key: 'type' } } } },
  },
  Namespace: { metadata: { type: objectMeta }, status: { type: conditionsByType } },
  PersistentVolumeClaim: { metadata: { type: objectMeta }, status: { type: conditionsByType } },
};

function schemaForKind(kind: string): TypeSchema {
  return KIND_SCHEMAS[kind] ?? { metadata: { type: objectMeta } };
}

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

function applyStrategicPatch(doc: JsonMap, patch: Json, schema: TypeSchema): Json {
  if (!isMap(patch)) throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
  return mergeMap(doc, patch, schema);
}

function isDirectiveKey(key: string): boolean {
  return key === DIRECTIVE || key === RETAIN_KEYS || key.startsWith(DELETE_FROM_PRIMITIVE_LIST) || key.startsWith(SET_ELEMENT_ORDER);
}

function mergeMap(original: JsonMap, patch: JsonMap, schema: TypeSchema): JsonMap {
  const directive = patch[DIRECTIVE];
  if (directive !== undefined) {
    if (directive === 'delete') return {};
    if (directive === 'replace') {
      const { [DIRECTIVE]: _ignored, ...rest } = patch;
      return mergeMap({}, rest, schema);
    }
    if (directive !== 'merge') throw badRequest(`Unsupported strategic merge patch format: unknown patch type: ${String(directive)}`);
  }

  let result: JsonMap = { ...original };
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain) || !retain.every((k) => typeof k === 'string')) throw badRequest('invalid patch format of retainKeys');
    const allowed = new Set(retain as string[]);
    for (const key of Object.keys(patch)) {
      if (!isDirectiveKey(key) && !allowed.has(key)) {
        throw new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
      }
    }
    result = Object.fromEntries(Object.entries(result).filter(([k]) => allowed.has(k)));
  }

  for (const [key, value] of Object.entries(patch)) {
    if (isDirectiveKey(key)) continue;
    const field = schema[key] ?? {};
    if (value === null) {
      delete result[key];
    } else if (!Object.hasOwn(result, key) || result[key] === null) {
      result[key] = fresh(value, field);
    } else if (isMap(value) && isMap(result[key])) {
      result[key] = mergeMap(result[key] as JsonMap, value, field.type ?? {});
    } else if (Array.isArray(value) && Array.isArray(result[key])) {
      result[key] = mergeList(result[key] as Json[], value, field);
    } else {
      result[key] = fresh(value, field);
    }
  }

  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
    if (!Array.isArray(value)) throw badRequest('invalid patch format of primitive list');
    const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
    const list = result[field];
    if (Array.isArray(list)) result[field] = list.filter((item) => !value.some((d) => deepEqual(d, item)));
  }

  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!Array.isArray(value)) throw badRequest('invalid patch format of setElementOrder list');
    const field = key.slice(SET_ELEMENT_ORDER.length);
    const list = result[field];
    if (Array.isArray(list)) result[field] = orderElements(list, value, original[field], schema[field]?.merge?.key);
  }
  return result;
}

/** A value new to the object: directives inside it still apply (against nothing) and are removed. */
function fresh(value: Json, field: FieldStrategy): Json {
  if (isMap(value)) return mergeMap({}, value, field.type ?? {});
  if (Array.isArray(value)) return mergeList([], value, field);
  return value;
}

function mergeList(original: Json[], patch: Json[], field: FieldStrategy): Json[] {
  const elementFresh = (v: Json) => (isMap(v) ? mergeMap({}, v, field.type ?? {}) : v);
  const replaceMarker = patch.findIndex((e) => isMap(e) && e[DIRECTIVE] === 'replace' && Object.keys(e).length === 1);
  if (!field.merge) return patch.map(elementFresh);
  if (replaceMarker >= 0) return patch.filter((_, i) => i !== replaceMarker).map(elementFresh);

  const key = field.merge.key;
  if (key === undefined) {
    if (patch.some((e) => isMap(e) || Array.isArray(e))) throw badRequest('invalid patch format of primitive list');
    const result = [...original];
    for (const item of patch) if (!result.some((x) => deepEqual(x, item))) result.push(item);
    return result;
  }

  const result = original.map((x) => x);
  for (const item of patch) {
    if (!isMap(item)) throw badRequest(`Unsupported strategic merge patch format: list element ${JSON.stringify(item)} is not a map with merge key ${key}`);
    if (!Object.hasOwn(item, key)) throw badRequest(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    const matches = (x: Json) => isMap(x) && deepEqual(x[key], item[key]);
    if (item[DIRECTIVE] === 'delete') {
      for (let i = result.length - 1; i >= 0; i--) if (matches(result[i]!)) result.splice(i, 1);
      continue;
    }
    const at = result.findIndex(matches);
    if (at >= 0) result[at] = mergeMap(result[at] as JsonMap, item, field.type ?? {});
    else result.push(mergeMap({}, item, field.type ?? {}));
  }
  return result;
}

/**
 * `$setElementOrder`: elements named in the order list come in that order; elements only the server knows
 * keep their place relative to them by their position in the live list (apimachinery normalizeElementOrder).
 */
function orderElements(merged: Json[], order: Json[], liveValue: Json | undefined, key: string | undefined): Json[] {
  const identity = (x: Json): Json | undefined => (key === undefined ? x : isMap(x) ? x[key] : undefined);
  const indexIn = (list: Json[], x: Json) => list.findIndex((y) => deepEqual(identity(y), identity(x)));
  const orderIds = order.map((o) => (key === undefined ? o : isMap(o) ? o[key] : undefined));
  const orderIndex = (x: Json) => orderIds.findIndex((id) => deepEqual(id, identity(x)));
  const live = Array.isArray(liveValue) ? liveValue : [];

  const inPatch = merged.filter((x) => orderIndex(x) >= 0).sort((a, b) => orderIndex(a) - orderIndex(b));
  const serverOnly = merged.filter((x) => orderIndex(x) < 0);
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < inPatch.length) {
    if (i >= serverOnly.length) out.push(inPatch[j++]!);
    else if (j >= inPatch.length) out.push(serverOnly[i++]!);
    else {
      const li = indexIn(live, serverOnly[i]!);
      const ri = indexIn(live, inPatch[j]!);
      if (li >= 0 && ri >= 0 && li < ri) out.push(serverOnly[i++]!);
      else out.push(inPatch[j++]!);
    }
  }
  return out;
}
