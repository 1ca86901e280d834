// The served kinds' fields and their types, from @kubernetes/client-node's generated models, which are generated
// from the Kubernetes OpenAPI spec (attributeTypeMap: the JSON name and type of every field). Field validation
// (body-fields.ts) and the OpenAPI schemas kubectl explain walks (server/openapi-schemas.ts) both read them.
// The build writes them into model-types.json beside this module (scripts/model-types.mjs): the package itself is
// 826 modules whose source text stayed in the heap, which every full collection marked again.
import { existsSync, readFileSync } from 'node:fs';

export interface Attribute {
  baseName: string;
  type: string;
  format: string;
}

/** model name → [baseName, type, format] of each field, in declared order */
type ModelTable = Record<string, Array<[string, string, string]>>;

const TABLE_FILE = new URL('./model-types.json', import.meta.url);

/** the build's table; the package's own models when the build did not write it (tsc alone) */
async function loadTable(): Promise<ModelTable> {
  if (existsSync(TABLE_FILE)) return JSON.parse(readFileSync(TABLE_FILE, 'utf8')) as ModelTable;
  const models = (await import('@kubernetes/client-node')) as unknown as Record<string, { attributeTypeMap?: Attribute[] } | undefined>;
  const table: ModelTable = {};
  for (const [name, model] of Object.entries(models)) {
    if (Array.isArray(model?.attributeTypeMap)) table[name] = model.attributeTypeMap.map((a) => [a.baseName, a.type, a.format]);
  }
  return table;
}

const TABLE = await loadTable();

/** client-node's type of a list: `Array<V1Container>` */
export const ARRAY = /^Array<(.+)>$/;
/** client-node's type of a map: `{ [key: string]: string; }` */
export const MAP = /^\{ \[key: string\]: (.+); \}$/;

const attributes = new Map<string, Attribute[] | undefined>();
const byName = new Map<string, Map<string, Attribute> | undefined>();

/** the fields of a client-node model (V1PodSpec, ...) in its declared order; undefined for scalars */
export function modelAttributes(typeName: string): Attribute[] | undefined {
  if (!attributes.has(typeName)) {
    const fields = Object.hasOwn(TABLE, typeName) ? TABLE[typeName] : undefined;
    attributes.set(typeName, fields?.map(([baseName, type, format]) => ({ baseName, type, format })));
  }
  return attributes.get(typeName);
}

/** a model's fields by their JSON names; undefined for scalars */
export function modelFields(typeName: string): Map<string, Attribute> | undefined {
  if (!byName.has(typeName)) {
    const list = modelAttributes(typeName);
    byName.set(typeName, list && new Map(list.map((a) => [a.baseName, a])));
  }
  return byName.get(typeName);
}

/** the model of a served kind: V1Pod, V1Lease, ... (core Event is CoreV1Event) */
export function modelOfKind(kind: string, version: string): string | undefined {
  const prefix = version.charAt(0).toUpperCase() + version.slice(1);
  return [`${prefix}${kind}`, `Core${prefix}${kind}`].find((name) => modelAttributes(name) !== undefined);
}
