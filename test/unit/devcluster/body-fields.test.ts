// A body against its kind's fields: unknown fields found as the real server's strict decoder names them, and
// dropped as its typed decoding drops them; values of the wrong JSON type refused in encoding/json's words.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dropUnknownFields, inspectBody } from '../../../src/devcluster/api/body-fields.js';

const unknownFields = (kind: string, version: string, obj: unknown) => inspectBody(kind, version, obj).unknown;
const text = (kind: string, obj: unknown): string | undefined => inspectBody(kind, 'v1', obj).mismatch?.text;

const pod = () => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', labels: { 'app.kubernetes.io/name': 'x' }, bogus: 1 },
  spec: {
    containers: [
      { name: 'a', image: 'i', ports: [{ containerPort: 80, protocol: 'TCP' }], resources: { limits: { cpu: '1' } } },
      { name: 'b', image: 'i', imagePullPolicyy: 'Never', securityContext: { runAsUser: 1, capabilitiez: {} } },
    ],
    volumes: [{ name: 'v', configMap: { name: 'cm', items: [{ key: 'k', path: 'p' }] } }],
  },
  status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' }] },
  extra: true,
});

test('unknown fields of a pod, with the strict decoder\'s paths, in document order', () => {
  const found = unknownFields('Pod', 'v1', pod());
  assert.deepEqual(found.map((f) => f.path), ['metadata.bogus', 'spec.containers[1].imagePullPolicyy', 'spec.containers[1].securityContext.capabilitiez', 'extra']);
});

test('dropping them leaves the known fields untouched', () => {
  const obj = pod();
  dropUnknownFields(unknownFields('Pod', 'v1', obj));
  assert.deepEqual(unknownFields('Pod', 'v1', obj), []);
  assert.deepEqual(obj.spec.containers[1], { name: 'b', image: 'i', securityContext: { runAsUser: 1 } });
  assert.deepEqual(obj.metadata, { name: 'p', labels: { 'app.kubernetes.io/name': 'x' } });
});

test('the other served kinds: core Event, RBAC, coordination, networking', () => {
  assert.deepEqual(unknownFields('Event', 'v1', { involvedObject: { kind: 'Pod' }, reason: 'x', nope: 1 }).map((f) => f.path), ['nope']);
  assert.deepEqual(unknownFields('RoleBinding', 'v1', { subjects: [{ kind: 'User', name: 'u', nmae: 'x' }], roleRef: { kind: 'Role', name: 'r' } }).map((f) => f.path), ['subjects[0].nmae']);
  assert.deepEqual(unknownFields('Lease', 'v1', { spec: { holderIdentity: 'h', renewTime: '2024-01-01T00:00:00.000000Z' } }), []);
  assert.deepEqual(unknownFields('NetworkPolicy', 'v1', { spec: { podSelector: {}, policyTypes: ['Ingress'], ingres: [] } }).map((f) => f.path), ['spec.ingres']);
  assert.deepEqual(unknownFields('NoSuchKind', 'v1', { anything: 1 }), [], 'a kind without a model is not checked');
});

test('a number, list or object where the kind has a string; a string where it has a list', () => {
  assert.equal(text('ConfigMap', { data: { a: 1 } }), 'cannot unmarshal number into Go struct field ConfigMap.data of type string');
  assert.equal(text('ConfigMap', { data: { a: [1, 2] } }), 'cannot unmarshal array into Go struct field ConfigMap.data of type string');
  assert.equal(text('ConfigMap', { metadata: { labels: { x: 1 } } }), 'cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string');
  assert.equal(text('Pod', { spec: { containers: [{ name: 'c', command: 'sleep 10' }] } }), 'cannot unmarshal string into Go struct field Container.spec.containers.command of type []string');
  assert.equal(text('Pod', { spec: { containers: 'c' } }), 'cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container');
  assert.equal(text('Pod', { spec: { containers: [{ name: 'c', env: [{ name: 'A', value: 1 }] }] } }), 'cannot unmarshal number into Go struct field EnvVar.spec.containers.env.value of type string');
  assert.equal(text('Pod', { spec: { terminationGracePeriodSeconds: '30' } }), 'cannot unmarshal string into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64');
  // the first in document order, as the decoder meets them
  assert.equal(text('ConfigMap', { metadata: { labels: { x: true } }, data: { a: 1 } }), 'cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string');
});

test('what Go decodes: null anywhere, quantities as numbers, int-or-string, timestamps, unknown fields (field validation reports those)', () => {
  assert.equal(text('ConfigMap', { data: { a: 'x' }, binaryData: null, metadata: { labels: null, creationTimestamp: '2024-01-01T00:00:00Z' } }), undefined);
  assert.equal(text('Pod', { spec: { containers: [{ name: 'c', resources: { limits: { cpu: 1, memory: '64Mi' }, requests: { cpu: 0.5 } }, ports: [{ containerPort: 80 }], livenessProbe: { httpGet: { port: 'http' } } }], volumes: [{ name: 'v', emptyDir: { sizeLimit: 1000 } }] } }), undefined);
  assert.equal(text('Pod', { spec: { nodeSelectorr: 3 } }), undefined);
  assert.equal(text('NoSuchKind', { data: 1 }), undefined);
});

test('one walk: the unknown fields come with the types, and a wrong type ends it', () => {
  const body = { metadata: { name: 'p', bogus: 1 }, spec: { containers: [{ name: 'c', imagee: 'x', command: ['a'] }] } };
  const found = inspectBody('Pod', 'v1', body);
  assert.equal(found.mismatch, undefined);
  assert.deepEqual(found.unknown.map((f) => f.path), ['metadata.bogus', 'spec.containers[0].imagee']);
  const wrong = inspectBody('Pod', 'v1', { metadata: { bogus: 1 }, spec: { containers: [{ name: 'c', command: 'a' }] }, extra: true });
  assert.equal(wrong.mismatch?.text, 'cannot unmarshal string into Go struct field Container.spec.containers.command of type []string');
  assert.deepEqual(wrong.unknown.map((f) => f.path), ['metadata.bogus'], 'nothing after the wrong type is looked at');
});
