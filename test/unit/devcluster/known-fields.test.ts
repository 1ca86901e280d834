// Unknown fields found as the real server's strict decoder names them, and dropped as its typed decoding drops them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dropUnknownFields, unknownFields } from '../../../src/devcluster/api/known-fields.js';

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
