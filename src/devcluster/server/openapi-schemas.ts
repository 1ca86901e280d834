// OpenAPI v3 component schemas for the kinds a group/version serves, so that `kubectl explain pod.spec` can walk
// them. Built from the same client-node models as field validation (api/models.ts): every field with its
// type, nested kinds as $refs named as the real spec names them (io.k8s.api.core.v1.PodSpec). The models carry
// no descriptions, so the schemas have none.
import { ARRAY, MAP, modelAttributes, modelOfKind } from '../api/models.js';
import type { ResourceType } from '../types.js';

const META_PACKAGE = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const META_MODELS = new Set(['V1ObjectMeta', 'V1OwnerReference', 'V1ManagedFieldsEntry', 'V1LabelSelector', 'V1LabelSelectorRequirement', 'V1ListMeta', 'V1Condition']);

/** io.k8s.api.<package>.<version> for a group: "" is core, "rbac.authorization.k8s.io" is rbac */
function apiPackage(group: string, version: string): string {
  return `io.k8s.api.${group === '' ? 'core' : group.split('.')[0]}.${version}`;
}

/** V1PodSpec → PodSpec, CoreV1Event → Event, RbacV1Subject → Subject */
const shortName = (model: string) => model.replace(/^[A-Z][a-z]*V\d+(?:(?:alpha|beta)\d+)?(?=[A-Z])|^V\d+(?:(?:alpha|beta)\d+)?(?=[A-Z])/, '');

type Schema = Record<string, unknown>;

class SchemaBuilder {
  readonly schemas: Record<string, Schema> = {};

  constructor(private readonly pkg: string) {}

  nameOf(model: string): string {
    return `${META_MODELS.has(model) ? META_PACKAGE : this.pkg}.${shortName(model)}`;
  }

  /** the schema of a field's type, adding the models it refers to */
  typeSchema(type: string, format: string): Schema {
    const array = ARRAY.exec(type);
    if (array) return { type: 'array', items: this.typeSchema(array[1]!, '') };
    const map = MAP.exec(type);
    if (map) return { type: 'object', additionalProperties: this.typeSchema(map[1]!, '') };
    switch (type) {
      case 'string':
        return format === 'byte' ? { type: 'string', format: 'byte' } : { type: 'string' };
      case 'number':
        return format === 'int32' || format === 'int64' ? { type: 'integer', format } : { type: 'number', format: format || 'double' };
      case 'boolean':
        return { type: 'boolean' };
      case 'Date':
        return { type: 'string', format: 'date-time' };
      case 'V1MicroTime':
        return { type: 'string', format: 'date-time' };
      case 'IntOrString':
        return this.named('io.k8s.apimachinery.pkg.util.intstr.IntOrString', { type: 'string', format: 'int-or-string' });
      case 'any':
      case 'object':
        return { type: 'object' };
    }
    if (!modelAttributes(type)) return { type: 'object' };
    this.addModel(type);
    return { allOf: [{ $ref: `#/components/schemas/${this.nameOf(type)}` }], default: {} };
  }

  /** a $ref to a schema of its own, as the real spec names IntOrString (kubectl explain shows <IntOrString>) */
  private named(name: string, schema: Schema): Schema {
    this.schemas[name] ??= schema;
    return { allOf: [{ $ref: `#/components/schemas/${name}` }] };
  }

  addModel(model: string, gvk?: { group: string; version: string; kind: string }): void {
    const name = this.nameOf(model);
    if (this.schemas[name]) return;
    const schema: Schema = { type: 'object', properties: {} };
    this.schemas[name] = schema; // before the fields: a model may refer to itself
    const properties: Record<string, Schema> = {};
    for (const a of modelAttributes(model) ?? []) properties[a.baseName] = this.typeSchema(a.type, a.format);
    schema.properties = properties;
    if (gvk) schema['x-kubernetes-group-version-kind'] = [gvk];
  }
}

/** components.schemas of /openapi/v3/<group version>: the served kinds and everything they refer to */
export function componentSchemas(resources: readonly ResourceType[], group: string, version: string): Record<string, Schema> {
  const builder = new SchemaBuilder(apiPackage(group, version));
  for (const rt of resources) {
    const model = modelOfKind(rt.kind, rt.version);
    if (model) builder.addModel(model, { group: rt.group, version: rt.version, kind: rt.kind });
  }
  return builder.schemas;
}
