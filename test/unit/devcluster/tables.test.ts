import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resourceByKind } from '../../../src/devcluster/api/resources.js';
import { humanDuration, toTable } from '../../../src/devcluster/api/tables.js';
import type { KubeObject } from '../../../src/devcluster/types.js';
import { kubectl, startFakeApi } from './kubectl-fake-api.js';

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

function pod(name: string, status: any, extra: { spec?: any; metadata?: any } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', creationTimestamp: ago(65), ...extra.metadata },
    spec: { containers: [{ name: 'c', image: 'i' }], nodeName: 'berth', ...extra.spec },
    status,
  };
}

const cellsOf = (obj: KubeObject, kind = obj.kind) => (toTable(resourceByKind(kind), [obj], {}).rows as any[])[0].cells;

test('humanDuration matches apimachinery duration.HumanDuration', () => {
  const s = 1000;
  const cases: [number, string][] = [
    [-3 * s, '<invalid>'],
    [-1 * s, '0s'],
    [5 * s, '5s'],
    [119 * s, '119s'],
    [182 * s, '3m2s'],
    [240 * s, '4m'],
    [45 * 60 * s, '45m'],
    [200 * 60 * s, '3h20m'],
    [10 * 3600 * s, '10h'],
    [50 * 3600 * s, '2d2h'],
    [48 * 3600 * s, '2d'],
    [30 * 86400 * s, '30d'],
    [(3 * 365 + 5) * 86400 * s, '3y5d'],
    [9 * 365 * 86400 * s, '9y'],
  ];
  for (const [ms, text] of cases) assert.equal(humanDuration(ms), text, `${ms} ms`);
});

test('pod table: columns, wide cells and Metadata rows by default', () => {
  const running = pod('web', { phase: 'Running', podIP: '10.88.0.5', podIPs: [{ ip: '10.88.0.5' }], containerStatuses: [{ name: 'c', ready: true, restartCount: 0, state: { running: { startedAt: ago(60) } } }] });
  const table = toTable(resourceByKind('Pod'), [running], { resourceVersion: '42', continue: 'tok', remainingItemCount: 3 });
  assert.equal(table.kind, 'Table');
  assert.equal(table.apiVersion, 'meta.k8s.io/v1');
  assert.deepEqual(table.metadata, { resourceVersion: '42', continue: 'tok', remainingItemCount: 3 });
  assert.deepEqual(
    table.columnDefinitions.map((c: any) => [c.name, c.priority]),
    [['Name', 0], ['Ready', 0], ['Status', 0], ['Restarts', 0], ['Age', 0], ['IP', 1], ['Node', 1], ['Nominated Node', 1], ['Readiness Gates', 1]],
  );
  assert.equal(table.columnDefinitions[0].format, 'name');
  const row = table.rows[0];
  assert.deepEqual(row.cells, ['web', '1/1', 'Running', '0', '65s', '10.88.0.5', 'berth', '<none>', '<none>']);
  assert.deepEqual(row.object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: running.metadata });
  assert.deepEqual(toTable(resourceByKind('Pod'), [running], {}, 'Object').rows[0].object, running);
  assert.equal('object' in toTable(resourceByKind('Pod'), [running], {}, 'None').rows[0], false);
});

test('pod STATUS is computed like the real printer', () => {
  const waiting = pod('w', { phase: 'Pending', containerStatuses: [{ name: 'c', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] });
  assert.equal(cellsOf(waiting)[2], 'ContainerCreating');

  const crash = pod('cr', {
    phase: 'Running',
    containerStatuses: [{ name: 'c', ready: false, restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, finishedAt: ago(30) } } }],
  });
  assert.deepEqual(cellsOf(crash).slice(1, 4), ['0/1', 'CrashLoopBackOff', '3 (30s ago)']);

  const done = pod('d', { phase: 'Succeeded', containerStatuses: [{ name: 'c', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } }] });
  assert.equal(cellsOf(done)[2], 'Completed');
  assert.deepEqual((toTable(resourceByKind('Pod'), [done], {}).rows as any[])[0].conditions, [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }]);

  const noReason = pod('e', { phase: 'Failed', containerStatuses: [{ name: 'c', restartCount: 0, state: { terminated: { exitCode: 3 } } }] });
  assert.equal(cellsOf(noReason)[2], 'ExitCode:3');

  const init = { spec: { initContainers: [{ name: 'i', image: 'x' }], containers: [{ name: 'c', image: 'i' }] } };
  const initRunning = pod('i1', { phase: 'Pending', initContainerStatuses: [{ name: 'i', restartCount: 0, state: { running: {} } }], containerStatuses: [{ name: 'c', state: { waiting: { reason: 'PodInitializing' } } }] }, init);
  assert.equal(cellsOf(initRunning)[2], 'Init:0/1');
  const initFailed = pod('i2', { phase: 'Pending', initContainerStatuses: [{ name: 'i', restartCount: 0, state: { terminated: { exitCode: 2, reason: 'Error' } } }] }, init);
  assert.equal(cellsOf(initFailed)[2], 'Init:Error');
  const initDone = pod('i3', {
    phase: 'Pending',
    conditions: [{ type: 'Initialized', status: 'True' }],
    initContainerStatuses: [{ name: 'i', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } }],
    containerStatuses: [{ name: 'c', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }],
  }, init);
  assert.equal(cellsOf(initDone)[2], 'PodInitializing');

  const terminating = pod('t', { phase: 'Running', containerStatuses: [{ name: 'c', ready: true, state: { running: {} } }] }, { metadata: { deletionTimestamp: ago(1) } });
  assert.equal(cellsOf(terminating)[2], 'Terminating');
  const terminatingDone = pod('t2', { phase: 'Succeeded', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }, { metadata: { deletionTimestamp: ago(1) } });
  assert.equal(cellsOf(terminatingDone)[2], 'Completed', 'a terminal pod is not shown as Terminating');

  const sidecarDone = pod('s', {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'False' }],
    containerStatuses: [
      { name: 'c', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
      { name: 'side', ready: true, state: { running: {} } },
    ],
  }, { spec: { containers: [{ name: 'c' }, { name: 'side' }] } });
  assert.deepEqual(cellsOf(sidecarDone).slice(1, 3), ['1/2', 'NotReady']);
});

test('the other kinds print the real columns', () => {
  const names = (kind: string) => toTable(resourceByKind(kind), [], {}).columnDefinitions.filter((c: any) => c.priority === 0).map((c: any) => c.name);
  assert.deepEqual(names('Namespace'), ['Name', 'Status', 'Age']);
  assert.deepEqual(names('Service'), ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age']);
  assert.deepEqual(names('ConfigMap'), ['Name', 'Data', 'Age']);
  assert.deepEqual(names('Secret'), ['Name', 'Type', 'Data', 'Age']);
  assert.deepEqual(names('Event'), ['Last Seen', 'Type', 'Reason', 'Object', 'Message']);
  assert.deepEqual(names('ServiceAccount'), ['Name', 'Secrets', 'Age']);
  assert.deepEqual(names('Node'), ['Name', 'Status', 'Roles', 'Age', 'Version']);
  assert.deepEqual(names('PersistentVolumeClaim'), ['Name', 'Status', 'Volume', 'Capacity', 'Access Modes', 'StorageClass', 'VolumeAttributesClass', 'Age']);
  assert.deepEqual(names('Role'), ['Name', 'Created At']);

  const created = '2024-05-01T10:00:00Z';
  const meta = (name: string) => ({ name, namespace: 'ns', creationTimestamp: created });
  assert.deepEqual(cellsOf({ apiVersion: 'v1', kind: 'Service', metadata: meta('s'), spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP', nodePort: 30053 }], selector: { app: 'x' } } }).filter((_: unknown, i: number) => i !== 5), ['s', 'ClusterIP', '10.96.0.10', '<none>', '80/TCP,53:30053/UDP', 'app=x']);
  assert.deepEqual(cellsOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('c'), data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }).slice(0, 2), ['c', 3]);
  assert.deepEqual(cellsOf({ apiVersion: 'v1', kind: 'Secret', metadata: meta('sec'), type: 'Opaque', data: { a: 'MQ==' } }).slice(0, 3), ['sec', 'Opaque', 1]);
  assert.deepEqual(cellsOf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', creationTimestamp: created }, status: { phase: 'Active' } }).slice(0, 2), ['ns', 'Active']);
  const ev = cellsOf({ apiVersion: 'v1', kind: 'Event', metadata: meta('e1'), type: 'Warning', reason: 'BackOff', message: ' pulling \n', involvedObject: { kind: 'Pod', name: 'p', fieldPath: 'spec.containers{c}' }, source: { component: 'kubelet', host: 'berth' }, count: 4, firstTimestamp: ago(300), lastTimestamp: ago(10) });
  assert.deepEqual(ev, ['10s', 'Warning', 'BackOff', 'pod/p', 'spec.containers{c}', 'kubelet, berth', 'pulling', '5m', 4, 'e1']);
  const node = cellsOf({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'berth', creationTimestamp: created, labels: { 'node-role.kubernetes.io/control-plane': '' } }, status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.32.0-berth' }, addresses: [{ type: 'InternalIP', address: '10.88.0.1' }] } });
  assert.deepEqual(node.filter((_: unknown, i: number) => i !== 3), ['berth', 'Ready', 'control-plane', 'v1.32.0-berth', '10.88.0.1', '<none>', '<unknown>', '<unknown>', '<unknown>']);
  const pvc = cellsOf({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('data'), spec: { volumeName: 'pv-1', storageClassName: 'local', volumeMode: 'Filesystem' }, status: { phase: 'Bound', accessModes: ['ReadWriteMany', 'ReadWriteOnce'], capacity: { storage: '1Gi' } } });
  assert.deepEqual(pvc.filter((_: unknown, i: number) => i !== 7), ['data', 'Bound', 'pv-1', '1Gi', 'RWO,RWX', 'local', '<unset>', 'Filesystem']);
  assert.deepEqual(cellsOf({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta('r') }), ['r', created]);
  assert.deepEqual(cellsOf({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta('rb'), roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'u' }, { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' }] }).filter((_: unknown, i: number) => i !== 2), ['rb', 'Role/r', 'u', '', 'ns/sa']);
});

test('kubectl get renders the server-side table', async (t) => {
  const api = await startFakeApi();
  t.after(() => api.close());
  api.objects.set('ns/pods/web', pod('web', { phase: 'Running', podIPs: [{ ip: '10.88.0.7' }], containerStatuses: [{ name: 'c', ready: true, restartCount: 0, state: { running: {} } }] }));
  api.objects.set('ns/pods/job', pod('job', { phase: 'Pending', containerStatuses: [{ name: 'c', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull' } } }] }));
  const plain = await kubectl(api, ['get', 'pods', '-n', 'ns']);
  assert.equal(plain.code, 0, plain.stderr);
  const lines = plain.stdout.trim().split('\n').map((l) => l.split(/\s{2,}/));
  assert.deepEqual(lines[0], ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
  assert.deepEqual(lines.slice(1).map((l) => l.slice(0, 4)).sort(), [['job', '0/1', 'ErrImagePull', '0'], ['web', '1/1', 'Running', '0']]);
  const wide = await kubectl(api, ['get', 'pods', '-n', 'ns', '-o', 'wide', '--show-labels']);
  assert.equal(wide.code, 0, wide.stderr);
  assert.match(wide.stdout.split('\n')[0]!, /NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES\s+LABELS/);
  assert.match(wide.stdout, /10\.88\.0\.7\s+berth/);
  const sorted = await kubectl(api, ['get', 'pods', '-n', 'ns', '--sort-by', '.metadata.name']);
  assert.equal(sorted.code, 0, sorted.stderr);
  assert.ok(api.requests.some((r) => r.path.includes('includeObject=Object')), 'kubectl asks for full objects to sort');
  assert.match(sorted.stdout, /job[\s\S]*web/);
});
