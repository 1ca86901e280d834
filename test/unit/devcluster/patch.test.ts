import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ApiError } from '../../../src/devcluster/api/errors.js';
import { applyPatch } from '../../../src/devcluster/api/patch.js';
import type { KubeObject } from '../../../src/devcluster/types.js';
import { kubectl, startFakeApi } from './kubectl-fake-api.js';
import { thrownApiError } from '../../util/api-error.js';
import { scratchDir } from '../../util/scratch.js';

const SMP = 'application/strategic-merge-patch+json';
const MERGE = 'application/merge-patch+json';
const JSONP = 'application/json-patch+json';

function pod(): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', labels: { app: 'a', tier: 'x' }, finalizers: ['f1'], ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'u1' }] },
    spec: {
      containers: [
        { name: 'main', image: 'busybox:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [{ containerPort: 80, protocol: 'TCP' }], volumeMounts: [{ name: 'v', mountPath: '/data' }] },
        { name: 'side', image: 'busybox:1' },
      ],
      volumes: [{ name: 'v', emptyDir: {} }],
      tolerations: [{ key: 'a', operator: 'Exists' }],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }, { type: 'Initialized', status: 'True' }] },
  };
}

const rejects = (fn: () => unknown, code: number, reason: string): ApiError => thrownApiError(fn, { code, reason });

test('merge patch sets, replaces and deletes (null) and never mutates the input', () => {
  const current = pod();
  const before = structuredClone(current);
  const out = applyPatch(`${MERGE}; charset=utf-8`, current, { metadata: { labels: { app: 'b', tier: null, new: 'n' } }, spec: { tolerations: [] } });
  assert.deepEqual(out.metadata.labels, { app: 'b', new: 'n' });
  assert.deepEqual(out.spec.tolerations, []);
  assert.equal(out.spec.containers.length, 2, 'untouched fields stay');
  assert.deepEqual(current, before);
  rejects(() => applyPatch(MERGE, current, [1]), 400, 'BadRequest');
});

test('json patch: add, remove, replace, move, copy, test', () => {
  const out = applyPatch(JSONP, pod(), [
    { op: 'add', path: '/metadata/labels/new', value: 'n' },
    { op: 'add', path: '/spec/containers/-', value: { name: 'third', image: 'x' } },
    { op: 'remove', path: '/metadata/labels/tier' },
    { op: 'replace', path: '/spec/containers/0/image', value: 'busybox:2' },
    { op: 'move', from: '/metadata/labels/app', path: '/metadata/annotations' },
    { op: 'copy', from: '/spec/containers/0/name', path: '/metadata/labels/copied' },
    { op: 'test', path: '/spec/containers/0/image', value: 'busybox:2' },
    { op: 'test', path: '/metadata/absent', value: null },
    { op: 'add', path: '/metadata/labels/a~1b', value: 'escaped' },
  ]);
  assert.deepEqual(out.metadata.labels, { new: 'n', copied: 'main', 'a/b': 'escaped' });
  assert.equal(out.metadata.annotations, 'a');
  assert.equal(out.spec.containers[0].image, 'busybox:2');
  assert.equal(out.spec.containers[2].name, 'third');
});

test('json patch failures answer like the real server: 422 with the generic message, 400 for a non-list body', () => {
  const failed = rejects(() => applyPatch(JSONP, pod(), [{ op: 'test', path: '/metadata/name', value: 'other' }]), 422, 'Invalid');
  assert.deepEqual(failed.toStatus(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server rejected our request due to an error in our request',
    reason: 'Invalid',
    details: {},
    code: 422,
  });
  rejects(() => applyPatch(JSONP, pod(), [{ op: 'replace', path: '/spec/nothing', value: 1 }]), 422, 'Invalid');
  rejects(() => applyPatch(JSONP, pod(), [{ op: 'remove', path: '/metadata/labels/absent' }]), 422, 'Invalid');
  rejects(() => applyPatch(JSONP, pod(), [{ op: 'add', path: '/spec/missing/deeper', value: 1 }]), 422, 'Invalid');
  rejects(() => applyPatch(JSONP, pod(), [{ op: 'add', path: '/spec/containers/5', value: {} }]), 422, 'Invalid');
  rejects(() => applyPatch(JSONP, pod(), [{ op: 'frobnicate', path: '/spec' }]), 422, 'Invalid');
  rejects(() => applyPatch(JSONP, pod(), { op: 'add' }), 400, 'BadRequest');
  rejects(() => applyPatch(JSONP, pod(), '[{"op": "add",'), 400, 'BadRequest');
});

test('unknown content types are 415', () => {
  const err = rejects(() => applyPatch('application/json', pod(), {}), 415, 'UnsupportedMediaType');
  assert.match(err.message, /strategic-merge-patch\+json/);
});

test('strategic merge: containers, env, ports and volumeMounts merge by key; tolerations are replaced', () => {
  const out = applyPatch(SMP, pod(), {
    spec: {
      containers: [{ name: 'main', image: 'busybox:2', env: [{ name: 'B', value: '3' }, { name: 'C', value: '4' }], ports: [{ containerPort: 8080 }], volumeMounts: [{ mountPath: '/data', readOnly: true }] }],
      tolerations: [{ key: 'b', operator: 'Exists' }],
    },
  });
  const [main, side] = out.spec.containers;
  assert.equal(main.image, 'busybox:2');
  assert.deepEqual(main.env, [{ name: 'A', value: '1' }, { name: 'B', value: '3' }, { name: 'C', value: '4' }]);
  assert.deepEqual(main.ports.map((p: any) => p.containerPort), [80, 8080]);
  assert.deepEqual(main.volumeMounts, [{ name: 'v', mountPath: '/data', readOnly: true }]);
  assert.equal(side.name, 'side', 'containers not in the patch stay');
  assert.deepEqual(out.spec.tolerations, [{ key: 'b', operator: 'Exists' }]);
});

test('strategic merge directives: $patch delete/replace, null, $deleteFromPrimitiveList, finalizer union, $retainKeys', () => {
  const out = applyPatch(SMP, pod(), {
    metadata: { finalizers: ['f2', 'f1'], ownerReferences: [{ uid: 'u1', $patch: 'delete' }] },
    spec: {
      containers: [{ name: 'side', $patch: 'delete' }],
      volumes: [{ name: 'v', $retainKeys: ['configMap', 'name'], configMap: { name: 'cm' } }],
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
  assert.deepEqual(out.metadata.finalizers, ['f1', 'f2']);
  assert.deepEqual(out.metadata.ownerReferences, []);
  assert.deepEqual(out.spec.containers.map((c: any) => c.name), ['main']);
  assert.deepEqual(out.spec.volumes, [{ name: 'v', configMap: { name: 'cm' } }], '$retainKeys drops emptyDir');
  assert.deepEqual(out.status.conditions, [{ type: 'Ready', status: 'True' }, { type: 'Initialized', status: 'True' }]);

  const removed = applyPatch(SMP, pod(), { metadata: { '$deleteFromPrimitiveList/finalizers': ['f1'], labels: { tier: null } } });
  assert.deepEqual(removed.metadata.finalizers, []);
  assert.deepEqual(removed.metadata.labels, { app: 'a' });

  const replaced = applyPatch(SMP, pod(), { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'x' }] } });
  assert.deepEqual(replaced.spec.containers, [{ name: 'only', image: 'x' }]);

  const mapReplaced = applyPatch(SMP, pod(), { metadata: { labels: { $patch: 'replace', fresh: 'y' } } });
  assert.deepEqual(mapReplaced.metadata.labels, { fresh: 'y' });

  rejects(() => applyPatch(SMP, pod(), { spec: { volumes: [{ name: 'v', $retainKeys: ['name'], hostPath: { path: '/' } }] } }), 422, 'Invalid');
  rejects(() => applyPatch(SMP, pod(), { spec: { containers: [{ image: 'no-name' }] } }), 400, 'BadRequest');
  rejects(() => applyPatch(SMP, pod(), [{ spec: {} }]), 400, 'BadRequest');
});

test('strategic merge $setElementOrder orders patched elements and keeps server-only ones in place', () => {
  const current = pod();
  current.spec.containers.push({ name: 'third', image: 'x' });
  const out = applyPatch(SMP, current, {
    spec: { '$setElementOrder/containers': [{ name: 'third' }, { name: 'main' }], containers: [{ name: 'main', image: 'busybox:3' }] },
  });
  // apimachinery mergeSortedSlice: a server-only element goes before a patch element that comes later in the
  // live list (side is live #1, third live #2), and the patch elements keep the order the patch asks for
  assert.deepEqual(out.spec.containers.map((c: any) => c.name), ['side', 'third', 'main']);
  assert.equal(out.spec.containers[2].image, 'busybox:3');
  const reordered = applyPatch(SMP, current, { spec: { '$setElementOrder/containers': [{ name: 'side' }, { name: 'main' }, { name: 'third' }] } });
  assert.deepEqual(reordered.spec.containers.map((c: any) => c.name), ['side', 'main', 'third']);
});

test('strategic merge uses the right merge key per kind: Service ports by port', () => {
  const svc: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] } };
  const out = applyPatch(SMP, svc, { spec: { ports: [{ port: 80, targetPort: 9090 }] } });
  assert.deepEqual(out.spec.ports, [{ port: 80, targetPort: 9090 }, { port: 443 }]);
  const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1', b: '2' } };
  assert.deepEqual(applyPatch(SMP, cm, { data: { a: null, c: '3' } }).data, { b: '2', c: '3' });
});

test('server-side apply bodies (YAML) merge into the object', () => {
  const out = applyPatch('application/apply-patch+yaml', pod(), 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {applied: "yes"}\n');
  assert.equal(out.metadata.labels!.applied, 'yes');
  assert.equal(out.metadata.labels!.app, 'a');
});

test('what kubectl 1.32 sends for apply, label, annotate and patch works', async (t) => {
  const api = await startFakeApi();
  const dir = scratchDir('berth-patch-test-');
  t.after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const manifest = (value: string, extraEnv = '') =>
    `apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: {a: "1"}}\nspec:\n  containers:\n  - name: c\n    image: busybox\n    env: [{name: A, value: "${value}"}${extraEnv}]\n  - name: d\n    image: busybox\n`;
  const file = join(dir, 'pod.yaml');
  writeFileSync(file, manifest('1', ', {name: B, value: "b"}'));
  const run = async (args: string[]) => {
    const r = await kubectl(api, args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r;
  };
  await run(['apply', '-f', file]);
  writeFileSync(file, manifest('2'));
  await run(['apply', '-f', file]);
  await run(['label', 'pod', 'p', '-n', 'ns', 'b=2']);
  await run(['annotate', 'pod', 'p', '-n', 'ns', 'note=yes']);
  await run(['patch', 'pod', 'p', '-n', 'ns', '-p', '{"spec":{"containers":[{"name":"c","image":"busybox:2"}]}}']);
  await run(['patch', 'pod', 'p', '-n', 'ns', '--type', 'json', '-p', '[{"op":"test","path":"/metadata/labels/b","value":"2"},{"op":"add","path":"/metadata/labels/j","value":"p"}]']);
  await run(['label', 'pod', 'p', '-n', 'ns', 'a-']);

  const patches = api.requests.filter((r) => r.method === 'PATCH');
  assert.deepEqual(
    patches.map((r) => r.contentType),
    [SMP, MERGE, MERGE, SMP, JSONP, MERGE],
  );
  assert.match(patches[0]!.body, /\$setElementOrder\/containers/);

  const stored = api.objects.get('ns/pods/p')!;
  assert.deepEqual(stored.metadata.labels, { b: '2', j: 'p' });
  assert.equal(stored.metadata.annotations?.note, 'yes');
  assert.deepEqual(stored.spec.containers.map((c: any) => [c.name, c.image]), [['c', 'busybox:2'], ['d', 'busybox']]);
  assert.deepEqual(stored.spec.containers[0].env, [{ name: 'A', value: '2' }], 'apply removed env B and changed A');

  const failed = await kubectl(api, ['patch', 'pod', 'p', '-n', 'ns', '--type', 'json', '-p', '[{"op":"test","path":"/metadata/name","value":"q"}]']);
  assert.notEqual(failed.code, 0);
  assert.match(failed.stderr, /the server rejected our request due to an error in our request/);
});
