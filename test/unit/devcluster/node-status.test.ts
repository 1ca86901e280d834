import { test } from 'node:test';
import assert from 'node:assert/strict';
import { composePodStatus, podPhase, type ContainerStatus } from '../../../src/devcluster/node/pod-status.js';
import { parseQuantity, qosClass } from '../../../src/devcluster/node/quantity.js';
import { checkFit } from '../../../src/devcluster/node/scheduler.js';
import { isFullyIsolated } from '../../../src/devcluster/node/network-policy.js';
import { hostsFileContent } from '../../../src/devcluster/node/hosts.js';

const cs = (name: string, state: any, lastState: any = {}): ContainerStatus => ({ name, image: 'i', imageID: '', ready: !!state.running, started: !!state.running, restartCount: 0, state, lastState });
const term = (exitCode: number) => ({ terminated: { exitCode, reason: exitCode ? 'Error' : 'Completed', startedAt: 't', finishedAt: 't' } });

test('phase follows the kubelet: waiting Pending, restarts Running, Never + failure Failed', () => {
  assert.equal(podPhase('Never', [], [cs('a', { waiting: { reason: 'ContainerCreating' } })]), 'Pending');
  assert.equal(podPhase('Never', [], [cs('a', { running: { startedAt: 't' } }), cs('b', term(1))]), 'Running');
  assert.equal(podPhase('Never', [], [cs('a', term(0)), cs('b', term(1))]), 'Failed');
  assert.equal(podPhase('OnFailure', [], [cs('a', term(0))]), 'Succeeded');
  assert.equal(podPhase('OnFailure', [], [cs('a', { waiting: { reason: 'CrashLoopBackOff' } }, term(1))]), 'Running');
  assert.equal(podPhase('Always', [], [cs('a', term(0))]), 'Running');
  assert.equal(podPhase('Never', [cs('i', term(2))], [cs('a', { waiting: { reason: 'PodInitializing' } })]), 'Failed');
  assert.equal(podPhase('Always', [cs('i', { running: { startedAt: 't' } })], [cs('a', { waiting: { reason: 'PodInitializing' } })]), 'Pending');
});

test('conditions keep lastTransitionTime while unchanged and name unready containers', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { restartPolicy: 'Never', containers: [{ name: 'a' }] } };
  const first = composePodStatus({ pod, previous: undefined, hostIP: 'h', sandboxReady: false, initStatuses: [], containerStatuses: [cs('a', { waiting: { reason: 'ContainerCreating' } })], now: 'T1' });
  const ready = first.conditions.find((c: any) => c.type === 'Ready');
  assert.deepEqual([ready.status, ready.reason, ready.message], ['False', 'ContainersNotReady', 'containers with unready status: [a]']);
  const second = composePodStatus({ pod, previous: first, hostIP: 'h', podIP: '10.88.0.2', sandboxReady: true, initStatuses: [], containerStatuses: [cs('a', { waiting: { reason: 'ContainerCreating' } })], now: 'T2' });
  assert.equal(second.conditions.find((c: any) => c.type === 'Ready').lastTransitionTime, 'T1');
  assert.equal(second.conditions.find((c: any) => c.type === 'PodReadyToStartContainers').lastTransitionTime, 'T2');
  assert.deepEqual(second.podIPs, [{ ip: '10.88.0.2' }]);
  const failed = composePodStatus({ pod, previous: second, hostIP: 'h', sandboxReady: true, initStatuses: [], containerStatuses: [cs('a', term(137))], failure: { reason: 'DeadlineExceeded', message: 'm' }, now: 'T3' });
  assert.deepEqual([failed.phase, failed.reason, failed.conditions.find((c: any) => c.type === 'Ready').reason], ['Failed', 'DeadlineExceeded', 'PodCompleted']);
  assert.equal(failed.qosClass, 'BestEffort');
});

test('quantities and QoS classes', () => {
  assert.equal(parseQuantity('100m'), 0.1);
  assert.equal(parseQuantity('64Mi'), 64 * 2 ** 20);
  assert.equal(parseQuantity('1e3'), 1000);
  assert.equal(parseQuantity('2G'), 2e9);
  assert.throws(() => parseQuantity('abc'));
  assert.equal(qosClass({ containers: [{ resources: { limits: { cpu: '1', memory: '1Gi' } } }] }), 'Guaranteed');
  assert.equal(qosClass({ containers: [{ resources: { requests: { cpu: '1' } } }] }), 'Burstable');
  assert.equal(qosClass({ containers: [{}] }), 'BestEffort');
});

test('scheduling: selector mismatch and insufficient resources read like the default scheduler', () => {
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', labels: { 'kubernetes.io/os': 'linux' } }, status: { allocatable: { cpu: '2', memory: '1Gi', pods: '110' } } };
  const pod = (spec: any) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec });
  assert.deepEqual(checkFit(pod({ nodeSelector: { 'kubernetes.io/os': 'linux' }, containers: [{}] }), node, []), { fits: true });
  const miss = checkFit(pod({ nodeSelector: { disk: 'ssd' }, containers: [{}] }), node, []);
  assert.equal(!miss.fits && miss.message, "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
  const big = checkFit(pod({ containers: [{ resources: { requests: { cpu: '3' } } }] }), node, []);
  assert.match(!big.fits ? big.message : '', /^0\/1 nodes are available: 1 Insufficient cpu\./);
  const crowded = checkFit(pod({ containers: [{ resources: { requests: { memory: '600Mi' } } }] }), node, [pod({ containers: [{ resources: { requests: { memory: '600Mi' } } }] })]);
  assert.match(!crowded.fits ? crowded.message : '', /Insufficient memory/);
});

test('only a policy denying both directions isolates a pod', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', labels: { app: 'x' } } };
  const pol = (spec: any, ns = 'ns') => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'n', namespace: ns }, spec });
  assert.equal(isFullyIsolated(pod, [pol({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] })]), true);
  assert.equal(isFullyIsolated(pod, [pol({ podSelector: { matchLabels: { app: 'y' } }, policyTypes: ['Ingress', 'Egress'] })]), false);
  assert.equal(isFullyIsolated(pod, [pol({ podSelector: {} })]), false);
  assert.equal(isFullyIsolated(pod, [pol({ podSelector: {}, policyTypes: ['Ingress', 'Egress'], egress: [{}] })]), false);
  assert.equal(isFullyIsolated(pod, [pol({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] }, 'other')]), false);
});

test('hosts file: own name, Service names to a running selected pod, short names in the own namespace only', () => {
  const mk = (name: string, ns: string, labels: any, ip?: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, uid: name, labels, creationTimestamp: '2025-01-01T00:00:00Z' }, spec: {}, status: ip ? { phase: 'Running', podIP: ip } : { phase: 'Pending' } });
  const svc = (name: string, ns: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec: { selector: { app: name } } });
  const me = mk('client', 'a', {});
  const content = hostsFileContent(me, '10.88.0.9', [svc('web', 'a'), svc('db', 'b'), svc('idle', 'a')], [mk('web-1', 'a', { app: 'web' }, '10.88.0.5'), mk('db-1', 'b', { app: 'db' }, '10.88.0.6'), mk('idle-1', 'a', { app: 'idle' })]);
  const lines = content.split('\n');
  assert.ok(lines.includes('10.88.0.9\tclient'));
  assert.ok(lines.includes('10.88.0.5\tweb.a.svc.cluster.local web.a.svc web.a web'));
  assert.ok(lines.includes('10.88.0.6\tdb.b.svc.cluster.local db.b.svc db.b'));
  assert.ok(!content.includes('idle'));
});

test('hosts file: spec.hostAliases follow the pod\'s own entry, as the kubelet writes them', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'client', namespace: 'a', uid: 'u' }, spec: { hostAliases: [{ ip: '10.88.0.7', hostnames: ['db', 'db.local'] }, { ip: '1.2.3.4', hostnames: [] }] } };
  const lines = hostsFileContent(pod, '10.88.0.9', [], []).split('\n');
  const own = lines.indexOf('10.88.0.9\tclient');
  assert.ok(own >= 0);
  assert.deepEqual(lines.slice(own + 1, own + 4), ['', '# Entries added by HostAliases.', '10.88.0.7\tdb\tdb.local']);
  assert.ok(!lines.some((l) => l.startsWith('1.2.3.4')), 'an alias without hostnames adds nothing');
});
