// The JSON types of a body's fields, checked as the real server's typed decoding checks them: a number where the
// kind has a string (`data: {a: 1}` in a ConfigMap), a string where it has a list (`command: "sleep 1"`), is the
// decoder's `json: cannot unmarshal number into Go struct field ConfigMap.data of type string`, and nothing is
// stored. The types come from @kubernetes/client-node's generated models, as the field lists do (known-fields.ts).
import { ARRAY, MAP, modelAttributes, modelOfKind, type Attribute } from './known-fields.js';

/** where the first value of the wrong type sits, in the words of Go's encoding/json */
export interface TypeMismatch {
  /** `cannot unmarshal number into Go struct field ConfigMap.data of type string` */
  text: string;
}

type JsonKind = 'string' | 'number' | 'bool' | 'array' | 'object';

function jsonKind(value: unknown): JsonKind {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'string') return 'string';
  return 'object';
}

/** the Go struct a client-node model is (V1ObjectMeta → ObjectMeta, CoreV1Event → Event) */
function structName(model: string): string {
  return model.replace(/^(Core)?V\d+((alpha|beta)\d+)?/, '');
}

/** the Go type Go's message names for a field of client-node type `type` */
function goType(type: string, format: string): string {
  const array = ARRAY.exec(type);
  if (array) return `[]${goType(array[1]!, '')}`;
  const map = MAP.exec(type);
  if (map) return `map[string]${goType(map[1]!, '')}`;
  if (type === 'string') return 'string';
  if (type === 'boolean') return 'bool';
  if (type === 'number') return format === 'int32' || format === 'int64' ? format : format === 'double' ? 'float64' : 'int';
  return `v1.${structName(type)}`;
}

/** the JSON kinds a value of client-node type `type` may have; undefined: anything (IntOrString, Date, any, object) */
function allowed(type: string): JsonKind[] | undefined {
  if (ARRAY.test(type)) return ['array'];
  if (MAP.test(type)) return ['object'];
  if (type === 'string') return ['string'];
  if (type === 'boolean') return ['bool'];
  if (type === 'number') return ['number'];
  if (modelAttributes(type)) return ['object'];
  return undefined;
}

function check(value: unknown, attr: Attribute, struct: string, path: string): TypeMismatch | undefined {
  // null is every type's zero value to Go's decoder
  if (value === null || value === undefined) return undefined;
  const kinds = allowed(attr.type);
  const kind = jsonKind(value);
  if (kinds && !kinds.includes(kind)) return { text: `cannot unmarshal ${kind} into Go struct field ${struct}.${path} of type ${goType(attr.type, attr.format)}` };
  const array = ARRAY.exec(attr.type);
  if (array && Array.isArray(value)) {
    for (const item of value) {
      const found = check(item, { ...attr, type: array[1]!, format: '' }, struct, path);
      if (found) return found;
    }
    return undefined;
  }
  const map = MAP.exec(attr.type);
  if (map && kind === 'object') {
    for (const item of Object.values(value as Record<string, unknown>)) {
      const found = check(item, { ...attr, type: map[1]!, format: '' }, struct, path);
      if (found) return found;
    }
    return undefined;
  }
  const fields = modelAttributes(attr.type);
  return fields && kind === 'object' ? checkObject(value as Record<string, unknown>, attr.type, path) : undefined;
}

/**
 * Fields whose values are resource.Quantity, which client-node types as strings but Go decodes from a number
 * too (`cpu: 1`): known by their field names.
 */
const QUANTITY_MAPS = new Set(['limits', 'requests', 'capacity', 'allocatable', 'hard', 'used', 'overhead']);
const QUANTITIES = new Set(['sizeLimit']);

/** the object's fields in document order, as the decoder meets them (it reports the first wrong one) */
function checkObject(obj: Record<string, unknown>, model: string, path: string): TypeMismatch | undefined {
  const struct = structName(model);
  const attrs = new Map((modelAttributes(model) ?? []).map((a) => [a.baseName, a]));
  for (const [key, value] of Object.entries(obj)) {
    let attr = attrs.get(key);
    if (!attr) continue; // an unknown field: field validation's to report
    if (QUANTITIES.has(key) || (QUANTITY_MAPS.has(key) && MAP.test(attr.type))) attr = { ...attr, type: MAP.test(attr.type) ? '{ [key: string]: any; }' : 'any' };
    const found = check(value, attr, struct, path ? `${path}.${key}` : key);
    if (found) return found;
  }
  return undefined;
}

/** The first field of `obj` whose JSON type its kind cannot take; none when the kind's model is unknown. */
export function typeMismatch(kind: string, version: string, obj: unknown): TypeMismatch | undefined {
  const model = modelOfKind(kind, version);
  if (!model || obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  return checkObject(obj as Record<string, unknown>, model, '');
}
