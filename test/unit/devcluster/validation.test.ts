import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyCreateDefaults, defaultPullPolicy } from '../../../src/devcluster/api/defaults.js';
import { ApiError, type StatusCause } from '../../../src/devcluster/api/errors.js';
import { resourceByKind } from '../../../src/devcluster/api/resources.js';
import { validateCreate, validateUpdate } from '../../../src/devcluster/api/validation.js';
import type { KubeObject } from '../../../src/devcluster/types.js';
import { thrownApiError } from '../../util/api-error.js';

const POD = resourceByKind('Pod');

const invalidError = (fn: () => void): ApiError => thrownApiError(fn, { code: 422, reason: 'Invalid' });

const causes = (e: ApiError): StatusCause[] => e.details!.causes!;

function pod(spec: any, name = 'p'): KubeObject {
  const p: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec };
  applyCreateDefaults(POD, p, { allocateClusterIp: () => '10.96.0.2' });
  return p;
}

test('metadata.name must be a DNS-1123 subdomain, with the real sentence', () => {
  const e = invalidError(() => validateCreate(POD, pod({ containers: [{ name: 'c', image: 'i' }] }, 'Bad_Name')));
  assert.equal(
    e.message,
    `Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
  );
  assert.deepEqual(causes(e)[0]!.reason, 'FieldValueInvalid');
  assert.equal(causes(e)[0]!.field, 'metadata.name');
  assert.equal(e.details!.kind, 'Pod');
});

test('namespaces are DNS-1123 labels, services DNS-1035 labels', () => {
  const ns = invalidError(() => validateCreate(resourceByKind('Namespace'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a.b' } }));
  assert.match(ns.message, /a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character \(e\.g\. 'my-name', {2}or '123-abc', regex used/);
  const svc = invalidError(() =>
    validateCreate(resourceByKind('Service'), { apiVersion: 'v1', kind: 'Service', metadata: { name: '1abc' }, spec: { ports: [{ port: 80 }] } }),
  );
  assert.match(svc.message, /a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character/);
});

test('pod spec: containers and images required', () => {
  const none = invalidError(() => validateCreate(POD, pod({})));
  assert.equal(none.message, 'Pod "p" is invalid: spec.containers: Required value');
  assert.equal(causes(none)[0]!.reason, 'FieldValueRequired');
  const noImage = invalidError(() => validateCreate(POD, pod({ containers: [{ name: 'c' }] })));
  assert.equal(noImage.message, 'Pod "p" is invalid: spec.containers[0].image: Required value');
});

test('pod spec: duplicate names across init and regular containers, bad names, missing volumes', () => {
  const dup = invalidError(() => validateCreate(POD, pod({ containers: [{ name: 'x', image: 'i' }, { name: 'x', image: 'i' }] })));
  assert.equal(dup.message, 'Pod "p" is invalid: spec.containers[1].name: Duplicate value: "x"');
  assert.equal(causes(dup)[0]!.reason, 'FieldValueDuplicate');
  const initDup = invalidError(() => validateCreate(POD, pod({ initContainers: [{ name: 'x', image: 'i' }], containers: [{ name: 'x', image: 'i' }] })));
  assert.equal(causes(initDup)[0]!.field, 'spec.initContainers[0].name');
  const badName = invalidError(() => validateCreate(POD, pod({ containers: [{ name: 'Main', image: 'i' }] })));
  assert.match(badName.message, /spec\.containers\[0\]\.name: Invalid value: "Main": a lowercase RFC 1123 label/);
  const vol = invalidError(() => validateCreate(POD, pod({ containers: [{ name: 'c', image: 'i', volumeMounts: [{ name: 'v', mountPath: '/x' }] }] })));
  assert.equal(vol.message, 'Pod "p" is invalid: spec.containers[0].volumeMounts[0].name: Not found: "v"');
  assert.equal(causes(vol)[0]!.reason, 'FieldValueNotFound');
});

test('pod spec: restartPolicy must be supported; several errors are listed together', () => {
  const e = invalidError(() => validateCreate(POD, pod({ restartPolicy: 'Sometimes', containers: [{ name: 'c' }] })));
  assert.equal(
    e.message,
    'Pod "p" is invalid: [spec.containers[0].image: Required value, spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"]',
  );
  assert.deepEqual(
    causes(e).map((c) => c.reason),
    ['FieldValueRequired', 'FieldValueNotSupported'],
  );
});

test('labels: keys and values are validated at metadata.labels', () => {
  const p = pod({ containers: [{ name: 'c', image: 'i' }] });
  p.metadata.labels = { 'bad key': 'ok', good: 'bad value' };
  const e = invalidError(() => validateCreate(POD, p));
  assert.deepEqual(
    causes(e).map((c) => c.field),
    ['metadata.labels', 'metadata.labels'],
  );
  assert.match(causes(e)[0]!.message!, /^Invalid value: "bad key": name part must consist of alphanumeric characters/);
  assert.match(causes(e)[1]!.message!, /^Invalid value: "bad value": a valid label must be an empty string or consist of/);
});

test('pod updates may change only images, activeDeadlineSeconds, grace and added tolerations', () => {
  const old = pod({ containers: [{ name: 'c', image: 'i:1' }] });
  const imageOnly = structuredClone(old);
  imageOnly.spec.containers[0].image = 'i:2';
  imageOnly.spec.activeDeadlineSeconds = 30;
  imageOnly.spec.tolerations.push({ key: 'k', operator: 'Exists' });
  validateUpdate(POD, old, imageOnly);
  const other = structuredClone(old);
  other.spec.containers[0].command = ['sh'];
  const e = invalidError(() => validateUpdate(POD, old, other));
  assert.match(e.message, /^Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than `spec\.containers\[\*\]\.image`/);
  assert.equal(causes(e)[0]!.reason, 'FieldValueForbidden');
});

test('config maps and secrets are limited to 1 MiB of data', () => {
  const big = 'x'.repeat(1024 * 1024 + 1);
  const cm = invalidError(() => validateCreate(resourceByKind('ConfigMap'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: big } }));
  assert.match(cm.message, /Too long: must have at most 1048576 bytes$/);
  const secret = invalidError(() =>
    validateCreate(resourceByKind('Secret'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: Buffer.from(big).toString('base64') } }),
  );
  assert.equal(secret.message, 'Secret "s" is invalid: data: Too long: must have at most 1048576 bytes');
  validateCreate(resourceByKind('ConfigMap'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'small' } });
});

test('pod defaults are those of the real server', () => {
  const p = pod({ containers: [{ name: 'a', image: 'busybox' }, { name: 'b', image: 'busybox:1.36', ports: [{ containerPort: 80 }] }] });
  assert.equal(p.spec.restartPolicy, 'Always');
  assert.equal(p.spec.dnsPolicy, 'ClusterFirst');
  assert.equal(p.spec.terminationGracePeriodSeconds, 30);
  assert.equal(p.spec.serviceAccountName, 'default');
  assert.equal(p.spec.schedulerName, 'default-scheduler');
  assert.equal(p.spec.enableServiceLinks, true);
  assert.equal(p.spec.containers[0].imagePullPolicy, 'Always');
  assert.equal(p.spec.containers[1].imagePullPolicy, 'IfNotPresent');
  assert.equal(p.spec.containers[1].ports[0].protocol, 'TCP');
  assert.equal(p.spec.containers[0].terminationMessagePath, '/dev/termination-log');
  assert.deepEqual(p.status, { phase: 'Pending', qosClass: 'BestEffort' });
  assert.equal(defaultPullPolicy('localhost:5000/x'), 'Always');
  assert.equal(defaultPullPolicy('x:latest'), 'Always');
  assert.equal(defaultPullPolicy('x@sha256:abc'), 'IfNotPresent');
  const g = pod({ containers: [{ name: 'a', image: 'i:1', resources: { limits: { cpu: '1', memory: '1Gi' } } }] });
  assert.equal(g.status.qosClass, 'Guaranteed');
  assert.deepEqual(g.spec.containers[0].resources.requests, { cpu: '1', memory: '1Gi' });
});

test('service defaults: allocated clusterIP, TCP, targetPort = port', () => {
  const svc: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80 }] } };
  applyCreateDefaults(resourceByKind('Service'), svc, { allocateClusterIp: () => '10.96.3.4' });
  assert.equal(svc.spec.clusterIP, '10.96.3.4');
  assert.deepEqual(svc.spec.clusterIPs, ['10.96.3.4']);
  assert.equal(svc.spec.type, 'ClusterIP');
  assert.equal(svc.spec.sessionAffinity, 'None');
  assert.deepEqual(svc.spec.ports[0], { port: 80, protocol: 'TCP', targetPort: 80 });
  const headless: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'h' }, spec: { clusterIP: 'None' } };
  applyCreateDefaults(resourceByKind('Service'), headless, { allocateClusterIp: () => assert.fail('no allocation for headless') });
  assert.equal(headless.spec.clusterIP, 'None');
});
