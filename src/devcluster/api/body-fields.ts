// A request body against its kind's fields, in one walk as the real server's decoding meets them: the first value
// of the wrong JSON type (a 400 whatever field validation asks for, field-types.ts), and the fields the kind does
// not have, with the paths the strict decoder writes (`spec.containers[0].imagePullPolicyy`), for field
// validation (`fieldValidation=Strict|Warn|Ignore`, server/field-validation.ts).
import { decodedType, structName, wrongType, type TypeMismatch } from './field-types.js';
import { ARRAY, MAP, modelFields, modelOfKind } from './models.js';

/** a field the kind does not have: its path as the strict decoder writes it, and where it sits */
export interface UnknownField {
  path: string;
  holder: Record<string, unknown>;
  key: string;
}

export interface BodyFields {
  /** the first value of the wrong type, in document order; the walk stops there */
  mismatch?: TypeMismatch;
  /** in document order (all of them when there is no mismatch) */
  unknown: UnknownField[];
}

/** where the walk is: the path with list indices (strict decoding's) and without (encoding/json's), and its struct */
interface Place {
  path: string;
  goPath: string;
  struct: string;
}

class BodyWalk implements BodyFields {
  mismatch?: TypeMismatch;
  readonly unknown: UnknownField[] = [];

  /** false once a mismatch is found: the body will not be decoded, so nothing more matters */
  value(value: unknown, type: string, format: string, at: Place): boolean {
    // null is every type's zero value to Go's decoder
    if (value === null || value === undefined) return true;
    this.mismatch = wrongType(value, type, format, at.struct, at.goPath);
    if (this.mismatch) return false;
    const array = ARRAY.exec(type);
    if (array) return (value as unknown[]).every((item, i) => this.value(item, array[1]!, '', { ...at, path: `${at.path}[${i}]` }));
    const map = MAP.exec(type);
    if (map) return Object.entries(value as Record<string, unknown>).every(([k, v]) => this.value(v, map[1]!, '', { ...at, path: `${at.path}.${k}` }));
    // scalars, IntOrString, Date, any: nothing below them to check
    return modelFields(type) ? this.object(value as Record<string, unknown>, type, at) : true;
  }

  /** the object's fields in document order, as the decoder meets them */
  object(obj: Record<string, unknown>, model: string, at: Place): boolean {
    const fields = modelFields(model)!;
    const struct = structName(model);
    for (const [key, child] of Object.entries(obj)) {
      const path = at.path ? `${at.path}.${key}` : key;
      const attr = fields.get(key);
      if (!attr) this.unknown.push({ path, holder: obj, key });
      else if (!this.value(child, decodedType(key, attr), attr.format, { path, goPath: at.goPath ? `${at.goPath}.${key}` : key, struct })) return false;
    }
    return true;
  }
}

/** `obj`'s wrong types and unknown fields; none when the kind's model is unknown (nothing is refused that cannot be checked) */
export function inspectBody(kind: string, version: string, obj: unknown): BodyFields {
  const walk = new BodyWalk();
  const model = modelOfKind(kind, version);
  if (model && obj !== null && typeof obj === 'object' && !Array.isArray(obj)) walk.object(obj as Record<string, unknown>, model, { path: '', goPath: '', struct: structName(model) });
  return walk;
}

/** removes them, as the real decoder drops what it does not know */
export function dropUnknownFields(fields: UnknownField[]): void {
  for (const f of fields) delete f.holder[f.key];
}
