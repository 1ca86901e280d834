// The fields each served kind has, for server-side field validation (`fieldValidation=Strict|Warn|Ignore`):
// which fields of a request body the real server's strict decoder would call unknown, with its paths
// (`spec.containers[0].imagePullPolicyy`). The field lists come from @kubernetes/client-node's generated models,
// which are generated from the Kubernetes OpenAPI spec (attributeTypeMap: JSON name and type of every field).
import * as models from '@kubernetes/client-node';

export interface Attribute {
  baseName: string;
  type: string;
  format: string;
}
type Model = { attributeTypeMap?: Attribute[] };

const MODELS = models as unknown as Record<string, Model | undefined>;
export const ARRAY = /^Array<(.+)>$/;
export const MAP = /^\{ \[key: string\]: (.+); \}$/;

/** the fields of a client-node model (V1PodSpec, ...) in its declared order; undefined for scalars */
export function modelAttributes(typeName: string): Attribute[] | undefined {
  const map = MODELS[typeName]?.attributeTypeMap;
  return Array.isArray(map) ? map : undefined;
}

function attributesOf(typeName: string): Map<string, string> | undefined {
  const map = MODELS[typeName]?.attributeTypeMap;
  if (!Array.isArray(map)) return undefined;
  return new Map(map.map((a) => [a.baseName, a.type]));
}

const cache = new Map<string, Map<string, string> | undefined>();
function fieldsOf(typeName: string): Map<string, string> | undefined {
  if (!cache.has(typeName)) cache.set(typeName, attributesOf(typeName));
  return cache.get(typeName);
}

/** the model of a served kind: V1Pod, V1Lease, ... (core Event is CoreV1Event) */
export function modelOfKind(kind: string, version: string): string | undefined {
  const prefix = version.charAt(0).toUpperCase() + version.slice(1);
  return [`${prefix}${kind}`, `Core${prefix}${kind}`].find((name) => fieldsOf(name) !== undefined);
}

/** a field the kind does not have: its path as the strict decoder writes it, and where it sits */
export interface UnknownField {
  path: string;
  holder: Record<string, unknown>;
  key: string;
}

function walk(value: unknown, type: string, path: string, out: UnknownField[]): void {
  if (value === null || value === undefined) return;
  const array = ARRAY.exec(type);
  if (array) {
    if (Array.isArray(value)) value.forEach((item, i) => walk(item, array[1]!, `${path}[${i}]`, out));
    return;
  }
  const map = MAP.exec(type);
  if (map) {
    if (typeof value === 'object' && !Array.isArray(value)) for (const [k, v] of Object.entries(value)) walk(v, map[1]!, `${path}.${k}`, out);
    return;
  }
  const fields = fieldsOf(type);
  // scalars, IntOrString, Date, any: nothing below them to check
  if (!fields || typeof value !== 'object' || Array.isArray(value)) return;
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const childPath = path ? `${path}.${key}` : key;
    const childType = fields.get(key);
    if (childType === undefined) out.push({ path: childPath, holder: value as Record<string, unknown>, key });
    else walk(child, childType, childPath, out);
  }
}

/**
 * The fields of `obj` that its kind does not have, in document order; none when the kind's model is unknown
 * (nothing is refused that cannot be checked).
 */
export function unknownFields(kind: string, version: string, obj: unknown): UnknownField[] {
  const model = modelOfKind(kind, version);
  if (!model) return [];
  const out: UnknownField[] = [];
  walk(obj, model, '', out);
  return out;
}

/** removes them, as the real decoder drops what it does not know */
export function dropUnknownFields(fields: UnknownField[]): void {
  for (const f of fields) delete f.holder[f.key];
}
