// The JSON types of a body's fields, as the real server's typed decoding takes them: a number where the kind has a
// string (`data: {a: 1}` in a ConfigMap), a string where it has a list (`command: "sleep 1"`), is the decoder's
// `json: cannot unmarshal number into Go struct field ConfigMap.data of type string`, and nothing is stored. This
// module knows Go's view of client-node's types; body-fields.ts walks a body through them.
import { ARRAY, MAP, modelAttributes, type Attribute } from './models.js';

/** a value of the wrong type, in the words of Go's encoding/json */
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
export function structName(model: string): string {
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

/**
 * `value` (not null) against the type `type` of field `goPath` of the Go struct `struct`, this level only: what
 * is inside a list, map or model is checked as the walk reaches it. A list's items and a map's values are named
 * by their field, as Go names them (`Container.spec.containers.command`).
 */
export function wrongType(value: unknown, type: string, format: string, struct: string, goPath: string): TypeMismatch | undefined {
  const kinds = allowed(type);
  const kind = jsonKind(value);
  if (kinds && !kinds.includes(kind)) return { text: `cannot unmarshal ${kind} into Go struct field ${struct}.${goPath} of type ${goType(type, format)}` };
  return undefined;
}

/**
 * Fields whose values are resource.Quantity, which client-node types as strings but Go decodes from a number
 * too (`cpu: 1`): known by their field names.
 */
const QUANTITY_MAPS = new Set(['limits', 'requests', 'capacity', 'allocatable', 'hard', 'used', 'overhead']);
const QUANTITIES = new Set(['sizeLimit']);

/** the type Go decodes field `key` as: client-node's, except for quantities */
export function decodedType(key: string, attr: Attribute): string {
  if (QUANTITIES.has(key)) return 'any';
  if (QUANTITY_MAPS.has(key) && MAP.test(attr.type)) return '{ [key: string]: any; }';
  return attr.type;
}
