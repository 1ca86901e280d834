// Values of the wrong JSON type, as the real server's typed decoding refuses them (encoding/json's words).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { typeMismatch } from '../../../src/devcluster/api/field-types.js';

const text = (kind: string, obj: unknown): string | undefined => typeMismatch(kind, 'v1', obj)?.text;

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
