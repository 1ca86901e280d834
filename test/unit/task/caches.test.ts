import { test } from 'node:test';
import assert from 'node:assert/strict';
import { currentTarget, listCaches, removeCaches, useCaches, type CacheCluster } from '../../../src/task/cache-claims.js';
import {
  cacheClaimName,
  cacheSelector,
  cacheSettings,
  cacheTtl,
  checkCachePaths,
  labelValue,
  planCacheClaim,
  planStepIdentity,
  taskHash,
  taskLabel,
} from '../../../src/task/caches.js';
import { parseTaskConfig } from '../../../src/task/config.js';
import { layOut } from '../../../src/task/layout.js';
import { planTaskPod } from '../../../src/task/pod-plan.js';

const key = { task: '/home/me/repo/ci/unit-tests.yml', path: 'cache', target: 'kind-dev' };
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

test('claim name: one per (task, path, target), DNS-safe and at most 63 characters whatever the paths', () => {
  const name = cacheClaimName(key);
  assert.match(name, /^task-cache-unit-tests-[0-9a-f]{16}$/);
  assert.equal(cacheClaimName({ ...key }), name, 'the same key, the same claim');
  const others = [
    { ...key, task: '/home/me/other/ci/unit-tests.yml' },
    { ...key, path: 'cache2' },
    { ...key, target: 'prod' },
  ].map(cacheClaimName);
  assert.equal(new Set([name, ...others]).size, 4, 'a different task file, path or target: a different claim');
  for (const task of [`/x/${'Ü'.repeat(300)}.yml`, '/x/...yml', '/plan.yml#build step', '/', `/${'a'.repeat(500)}.yaml`]) {
    const n = cacheClaimName({ ...key, task });
    assert.ok(n.length <= 63 && DNS_LABEL.test(n), n);
  }
  assert.match(cacheClaimName({ ...key, task: planStepIdentity('/ci/pipeline.yml', 'unit') }), /^task-cache-pipeline-[0-9a-f]{16}$/);
});

test('labels: label-safe forms of the task, the path and the target; the exact values in annotations', () => {
  for (const text of ['cache', 'deps/.m2', '.gradle/', `${'x/'.repeat(60)}y`, 'ünïcode', '--', '']) {
    const v = labelValue(text);
    assert.ok(v.length <= 63 && LABEL_VALUE.test(v), `${text} → ${v}`);
  }
  assert.equal(labelValue('deps/.m2'), 'deps-.m2');
  assert.notEqual(labelValue(`${'a'.repeat(70)}1`), labelValue(`${'a'.repeat(70)}2`), 'long values stay apart');
  assert.equal(taskLabel('/home/me/ci/test.yml'), 'test.yml');
  assert.equal(taskLabel('/ci/pipeline.yml#unit'), 'pipeline.yml-unit');
  const pvc = planCacheClaim(
    { ...key, path: 'deps/.m2' },
    { namespace: 'ci', owner: 'me', now: new Date('2026-01-01T00:00:00Z'), settings: { size: '5Gi', storageClass: 'fast', ttlSeconds: 3600 } },
  );
  assert.deepEqual(pvc.metadata?.labels, {
    'app.kubernetes.io/managed-by': 'berth',
    'berth.dev/owner': 'me',
    'app.kubernetes.io/component': 'task-cache',
    'berth.dev/cache-task': 'unit-tests.yml',
    'berth.dev/cache-path': 'deps-.m2',
    'berth.dev/cache-of': taskHash(key.task),
    'berth.dev/target': 'kind-dev',
  });
  assert.equal(pvc.metadata?.annotations?.['berth.dev/cache-task'], key.task);
  assert.equal(pvc.metadata?.annotations?.['berth.dev/cache-path'], 'deps/.m2');
  assert.equal(pvc.metadata?.annotations?.['berth.dev/last-used'], '2026-01-01T00:00:00Z');
  assert.equal(pvc.metadata?.annotations?.['berth.dev/expires-at'], '2026-01-01T01:00:00Z');
  assert.deepEqual(pvc.spec, { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } }, storageClassName: 'fast' });
  assert.equal(
    cacheSelector('kind-dev', key.task),
    `app.kubernetes.io/managed-by=berth,app.kubernetes.io/component=task-cache,berth.dev/target=kind-dev,berth.dev/cache-of=${taskHash(key.task)}`,
  );
});

test('settings: 1Gi, the default class, 7 days; each overridable and checked', () => {
  assert.deepEqual(cacheSettings({}), { size: '1Gi', storageClass: undefined, ttlSeconds: 7 * 86400 });
  assert.deepEqual(cacheSettings({ BERTH_TASK_CACHE_SIZE: '512Mi', BERTH_TASK_CACHE_STORAGE_CLASS: 'local-path', BERTH_TASK_CACHE_TTL: '36h' }), {
    size: '512Mi',
    storageClass: 'local-path',
    ttlSeconds: 36 * 3600,
  });
  assert.equal(cacheTtl('2d'), 2 * 86400);
  assert.throws(() => cacheSettings({ BERTH_TASK_CACHE_SIZE: 'lots' }), /BERTH_TASK_CACHE_SIZE "lots" is not a storage size/);
  assert.throws(() => cacheSettings({ BERTH_TASK_CACHE_STORAGE_CLASS: 'Fast Disks' }), /not a storage class name/);
  assert.throws(() => cacheSettings({ BERTH_TASK_CACHE_TTL: 'forever' }), /BERTH_TASK_CACHE_TTL "forever" is not a duration/);
});

test('cache paths: folders below the working directory, apart from inputs and outputs', () => {
  const check = (yaml: string) => checkCachePaths(parseTaskConfig(`platform: linux\nrun: {path: ls}\n${yaml}`, 't.yml'));
  check('caches: [{path: cache}, {path: ./deps/m2/}]\ninputs: [{name: repo}]\noutputs: [{name: out}]\n');
  assert.throws(() => check('caches: [{path: /root/.m2}]\n'), /path "\/root\/.m2" must be a folder below the working directory/);
  assert.throws(() => check('caches: [{path: ./}]\n'), /must be a folder below/);
  assert.throws(() => check('caches: [{path: ../up}]\n'), /must be a folder below/);
  assert.throws(() => check('caches: [{path: c}, {path: ./c/}]\n'), /path "\.\/c\/" is listed twice/);
  assert.throws(() => check('caches: [{path: repo/node_modules}]\ninputs: [{name: repo}]\n'), /overlaps the input `repo`/);
  assert.throws(() => check('caches: [{path: build}]\noutputs: [{name: o, path: build/out}]\n'), /overlaps the output `o`/);
});

test('the pod mounts each cache claim at its path below the working directory, in the copy and the task containers', () => {
  const config = parseTaskConfig('platform: linux\nrun: {path: ls}\ncaches: [{path: cache}]\n', 't.yml');
  const layout = layOut(config, { inputs: [], outputs: [], args: [], workDir: '/tmp/build/0a1b2c3d', cwd: '/here' });
  const ctx = {
    namespace: 'ci',
    owner: 'me',
    runId: 'abcd1234',
    now: new Date(),
    ttlSeconds: 600,
    image: 'busybox:1',
    helperImage: 'helper:1',
    caches: [{ path: 'cache', claim: 'task-cache-t-0123456789abcdef' }],
  };
  const pod = planTaskPod(config, layout, {}, ctx);
  assert.deepEqual(pod.spec?.volumes?.[1], { name: 'cache-0', persistentVolumeClaim: { claimName: 'task-cache-t-0123456789abcdef' } });
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    assert.deepEqual(c.volumeMounts?.[1], { name: 'cache-0', mountPath: '/tmp/build/0a1b2c3d/cache' }, c.name);
  }
  assert.match(pod.spec!.initContainers![0].command![2], /-path '\/tmp\/build\/0a1b2c3d\/cache' \\\) -prune/, "the copy does not open up the cache's files");
});

/** A cluster in memory: claims by name, pods as given. */
function fakeCluster(pods: Array<{ name: string; claim: string; phase: string }> = []): CacheCluster & { claims: Map<string, any> } {
  const claims = new Map<string, any>();
  const notFound = () => Object.assign(new Error('not found'), { code: 404 });
  return {
    namespace: 'ci',
    claims,
    readClaim: async (n) => {
      if (!claims.has(n)) throw notFound();
      return structuredClone(claims.get(n));
    },
    createClaim: async (pvc) => {
      if (claims.has(pvc.metadata!.name!)) throw Object.assign(new Error('exists'), { code: 409 });
      claims.set(pvc.metadata!.name!, structuredClone(pvc));
      return pvc;
    },
    annotateClaim: async (n, a) => void Object.assign(claims.get(n).metadata.annotations, a),
    deleteClaim: async (n) => void claims.delete(n),
    listClaims: async () => [...claims.values()],
    listPods: async () =>
      pods.map((p) => ({
        metadata: { name: p.name },
        spec: { containers: [], volumes: [{ name: 'c', persistentVolumeClaim: { claimName: p.claim } }] },
        status: { phase: p.phase },
      })),
  };
}

test('use: made on first use, its last use and expiry pushed on by the next; rm selects by task and path and refuses one in use', async () => {
  const settings = { size: '1Gi', ttlSeconds: 3600 };
  const kube = fakeCluster();
  const [m] = await useCaches(kube, [key], { owner: 'me', now: new Date('2026-01-01T00:00:00Z'), settings });
  assert.deepEqual(m, { path: 'cache', claim: cacheClaimName(key) });
  await useCaches(kube, [key, { ...key, task: '/other.yml' }], { owner: 'me', now: new Date('2026-01-02T00:00:00Z'), settings });
  assert.equal(kube.claims.get(m.claim).metadata.annotations['berth.dev/expires-at'], '2026-01-02T01:00:00Z');
  assert.deepEqual(
    (await listCaches(kube, 'kind-dev')).map((e) => [e.task, e.path, e.lastUsed]),
    [
      ['/home/me/repo/ci/unit-tests.yml', 'cache', '2026-01-02T00:00:00Z'],
      ['/other.yml', 'cache', '2026-01-02T00:00:00Z'],
    ],
  );
  assert.deepEqual(await listCaches(kube, 'prod'), [], 'another target has none');
  await assert.rejects(removeCaches(kube, 'kind-dev', { path: 'nope' }), /no cache of path nope on target kind-dev/);
  const removed = await removeCaches(kube, 'kind-dev', { task: '/other.yml', path: './cache/' });
  assert.deepEqual(
    removed.map((e) => e.task),
    ['/other.yml'],
  );
  assert.equal(kube.claims.size, 1);
  const busy = fakeCluster([
    { name: 'task-1', claim: m.claim, phase: 'Running' },
    { name: 'task-0', claim: m.claim, phase: 'Succeeded' },
  ]);
  await useCaches(busy, [key], { owner: 'me', now: new Date(), settings });
  await assert.rejects(removeCaches(busy, 'kind-dev', {}), /in use by pod task-1: nothing was deleted/);
  assert.equal(busy.claims.size, 1);
});

test('the target is the kubeconfig context', () => {
  assert.equal(currentTarget({ getCurrentContext: () => 'kind-dev' }), 'kind-dev');
});
