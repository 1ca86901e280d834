// The served kinds' fields and their types, from @kubernetes/client-node's generated models, which are generated
// from the Kubernetes OpenAPI spec (attributeTypeMap: the JSON name and type of every field). Field validation
// (body-fields.ts) and the OpenAPI schemas kubectl explain walks (server/openapi-schemas.ts) both read them.
import * as models from '@kubernetes/client-node';

export interface Attribute {
  baseName: string;
  type: string;
  format: string;
}
type Model = { attributeTypeMap?: Attribute[] };

const MODELS = models as unknown as Record<string, Model | undefined>;
/** client-node's type of a list: `Array<V1Container>` */
export const ARRAY = /^Array<(.+)>$/;
/** client-node's type of a map: `{ [key: string]: string; }` */
export const MAP = /^\{ \[key: string\]: (.+); \}$/;

/** the fields of a client-node model (V1PodSpec, ...) in its declared order; undefined for scalars */
export function modelAttributes(typeName: string): Attribute[] | undefined {
  const map = MODELS[typeName]?.attributeTypeMap;
  return Array.isArray(map) ? map : undefined;
}

const byName = new Map<string, Map<string, Attribute> | undefined>();

/** a model's fields by their JSON names; undefined for scalars */
export function modelFields(typeName: string): Map<string, Attribute> | undefined {
  if (!byName.has(typeName)) byName.set(typeName, modelAttributes(typeName) && new Map(modelAttributes(typeName)!.map((a) => [a.baseName, a])));
  return byName.get(typeName);
}

/** the model of a served kind: V1Pod, V1Lease, ... (core Event is CoreV1Event) */
export function modelOfKind(kind: string, version: string): string | undefined {
  const prefix = version.charAt(0).toUpperCase() + version.slice(1);
  return [`${prefix}${kind}`, `Core${prefix}${kind}`].find((name) => modelAttributes(name) !== undefined);
}
