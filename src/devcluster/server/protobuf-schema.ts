// The shape of Kubernetes protobuf messages as body-protobuf.ts reads them (field number → JSON name and type),
// and the apimachinery messages every kind embeds. Field numbers are those of k8s.io's generated.proto files.
/** `quantity`: resource.Quantity, a message whose field 1 is the string JSON shows */
export type Scalar = 'string' | 'bytes' | 'bool' | 'int' | 'time' | 'intstr' | 'quantity';
export interface Field {
  name: string;
  type: Scalar | Message | { map: 'string' | 'bytes' | 'quantity' };
  repeated?: boolean;
  /** a Go pointer field: present means set, so a zero value is kept */
  pointer?: boolean;
  /** a Go embedded struct (`json:",inline"`): its fields appear in the parent's JSON */
  inline?: boolean;
}
export type Message = Record<number, Field>;

export const f = (name: string, type: Field['type'], opts: Partial<Field> = {}): Field => ({ name, type, ...opts });

export const OWNER_REFERENCE: Message = {
  1: f('kind', 'string'),
  3: f('name', 'string'),
  4: f('uid', 'string'),
  5: f('apiVersion', 'string'),
  6: f('controller', 'bool', { pointer: true }),
  7: f('blockOwnerDeletion', 'bool', { pointer: true }),
};
export const OBJECT_META: Message = {
  1: f('name', 'string'),
  2: f('generateName', 'string'),
  3: f('namespace', 'string'),
  5: f('uid', 'string'),
  6: f('resourceVersion', 'string'),
  7: f('generation', 'int'),
  8: f('creationTimestamp', 'time'),
  9: f('deletionTimestamp', 'time'),
  10: f('deletionGracePeriodSeconds', 'int', { pointer: true }),
  11: f('labels', { map: 'string' }),
  12: f('annotations', { map: 'string' }),
  13: f('ownerReferences', OWNER_REFERENCE, { repeated: true }),
  14: f('finalizers', 'string', { repeated: true }),
};
export const SELECTOR_REQUIREMENT: Message = { 1: f('key', 'string'), 2: f('operator', 'string'), 3: f('values', 'string', { repeated: true }) };
export const LABEL_SELECTOR: Message = { 1: f('matchLabels', { map: 'string' }), 2: f('matchExpressions', SELECTOR_REQUIREMENT, { repeated: true }) };
export const OBJECT_REFERENCE: Message = {
  1: f('kind', 'string'),
  2: f('namespace', 'string'),
  3: f('name', 'string'),
  4: f('uid', 'string'),
  5: f('apiVersion', 'string'),
  6: f('resourceVersion', 'string'),
  7: f('fieldPath', 'string'),
};

