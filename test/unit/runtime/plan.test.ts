import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, rmSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { planWorkload, PlanError, podNameFor, splitLabels, LABEL_RUN, FILES_CONTAINER, type PlanContext } from '../../../src/runtime/plan.js';
import { ISOLATION_CONTAINER } from '../../../src/runtime/isolation-gate.js';
import { snapshotMounts, MountError } from '../../../src/runtime/mounts.js';
import type { Workload } from '../../../src/runtime/workload.js';
import { scratchDir } from '../../util/scratch.js';

const ctx: PlanContext = { namespace: 'ci', owner: 'shim-host', now: new Date('2025-01-02T03:04:05.678Z'), ttlSeconds: 600, runId: 'abc12345' };

test('secure defaults, ownership labels, expiry and stdin settings', () => {
  const { pod, configMaps, networkPolicy } = planWorkload({ image: 'ghcr.io/acme/fn:v1', stdin: true, user: { uid: 65534 } }, ctx);
  assert.equal(pod.metadata?.name, 'fn-abc12345');
  assert.equal(pod.metadata?.namespace, 'ci');
  assert.deepEqual(pod.metadata?.labels, { 'app.kubernetes.io/managed-by': 'berth', 'berth.dev/owner': 'shim-host', [LABEL_RUN]: 'abc12345' });
  assert.equal(pod.metadata?.annotations?.['berth.dev/expires-at'], '2025-01-02T03:14:05Z');
  const spec = pod.spec!;
  assert.equal(spec.automountServiceAccountToken, false);
  assert.equal(spec.restartPolicy, 'Never');
  assert.equal(spec.activeDeadlineSeconds, 600);
  assert.equal(spec.terminationGracePeriodSeconds, 10, "docker stop's 10 s, as berth task's pods");
  assert.deepEqual(spec.securityContext, { seccompProfile: { type: 'RuntimeDefault' }, runAsUser: 65534, runAsNonRoot: true });
  const c = spec.containers[0];
  assert.deepEqual(c.securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
  assert.equal(c.stdin, true);
  assert.equal(c.stdinOnce, true);
  assert.equal(c.tty, false);
  assert.equal(c.imagePullPolicy, 'IfNotPresent');
  assert.equal(spec.volumes, undefined);
  assert.deepEqual(configMaps, []);
  assert.equal(networkPolicy, undefined);
});

test('root user gets no runAsNonRoot; docker flags map to container fields', () => {
  const w: Workload = {
    image: 'busybox',
    user: { uid: 0, gid: 0 },
    command: ['sh'],
    args: ['-c', 'id'],
    env: [{ name: 'A', value: '1' }],
    workingDir: '/w',
    resources: { memory: '64Mi', cpus: '500m' },
    pullPolicy: 'Never',
    deadlineSeconds: 30,
    serviceAccount: 'fn',
  };
  const { pod } = planWorkload(w, ctx);
  assert.equal(pod.spec?.securityContext?.runAsNonRoot, undefined);
  assert.equal(pod.spec?.securityContext?.runAsGroup, 0);
  assert.equal(pod.spec?.activeDeadlineSeconds, 30);
  assert.equal(pod.spec?.serviceAccountName, 'fn');
  const c = pod.spec!.containers[0];
  assert.deepEqual([c.command, c.args, c.workingDir, c.imagePullPolicy], [['sh'], ['-c', 'id'], '/w', 'Never']);
  assert.deepEqual(c.env, [{ name: 'A', value: '1' }]);
  assert.deepEqual(c.resources, { limits: { memory: '64Mi', cpu: '500m' } });
});

test('--network none plans a deny-all policy selecting exactly this pod; host uses hostNetwork', () => {
  const none = planWorkload({ image: 'x', network: 'none' }, ctx);
  assert.deepEqual(none.networkPolicy?.spec, { podSelector: { matchLabels: { [LABEL_RUN]: 'abc12345' } }, policyTypes: ['Ingress', 'Egress'] });
  assert.equal(none.networkPolicy?.metadata?.labels?.['app.kubernetes.io/managed-by'], 'berth');
  assert.equal(none.pod.metadata?.labels?.[LABEL_RUN], 'abc12345');
  const host = planWorkload({ image: 'x', network: 'host' }, ctx);
  assert.equal(host.pod.spec?.hostNetwork, true);
  assert.equal(host.networkPolicy, undefined);
});

test('--network none holds the main container behind the isolation gate, last of the init containers, in the helper image', () => {
  const none = planWorkload({ image: 'x', network: 'none', stdin: true, command: ['cat'] }, { ...ctx, helperImage: 'local/helper:1', stdinAsFile: true });
  const inits = none.pod.spec?.initContainers ?? [];
  assert.deepEqual(
    inits.map((c) => c.name),
    [FILES_CONTAINER, ISOLATION_CONTAINER],
  );
  const gate = inits[1]!;
  assert.equal(gate.image, 'local/helper:1');
  assert.equal(gate.terminationMessagePolicy, 'FallbackToLogsOnError', 'its reason for failing becomes the status message');
  assert.deepEqual(gate.securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
  assert.match(gate.command!.join(' '), /KUBERNETES_SERVICE_HOST/);
  for (const network of ['bridge', 'host', undefined]) {
    const other = planWorkload({ image: 'x', network }, ctx);
    assert.equal(other.pod.spec?.initContainers, undefined, `network ${network}: no gate`);
  }
});

test('a pod template keeps its fields and may loosen defaults; berth fills the container', () => {
  const w: Workload = {
    image: 'fn:1',
    labels: { team: 'web', 'not a label': 'x y' },
    podTemplate: {
      origin: 'test',
      template: {
        metadata: { labels: { tier: 'krm', [LABEL_RUN]: 'spoof' }, annotations: { note: 'n' } },
        spec: {
          nodeSelector: { pool: 'fn' },
          tolerations: [{ key: 'fn', operator: 'Exists' }],
          volumes: [{ name: 'cache', emptyDir: {} }],
          securityContext: { runAsNonRoot: false },
          automountServiceAccountToken: true,
          containers: [{ name: 'ignored', image: 'ignored', resources: { requests: { cpu: '100m' } }, volumeMounts: [{ name: 'cache', mountPath: '/cache' }] }],
        },
      },
    },
  };
  const { pod } = planWorkload(w, ctx);
  assert.equal(pod.metadata?.labels?.tier, 'krm');
  assert.equal(pod.metadata?.labels?.team, 'web');
  assert.equal(pod.metadata?.labels?.[LABEL_RUN], 'abc12345');
  // no pod can carry that key, not even as an annotation: it is kept in berth's JSON annotation
  assert.equal(pod.metadata?.annotations?.['berth.dev/docker-labels'], '{"not a label":"x y"}');
  assert.equal(pod.metadata?.annotations?.note, 'n');
  assert.deepEqual(pod.spec?.nodeSelector, { pool: 'fn' });
  assert.equal(pod.spec?.tolerations?.length, 1);
  assert.equal(pod.spec?.securityContext?.runAsNonRoot, false);
  assert.equal(pod.spec?.automountServiceAccountToken, true);
  assert.equal(pod.spec?.containers.length, 1);
  const c = pod.spec!.containers[0];
  assert.equal(c.name, 'main');
  assert.equal(c.image, 'fn:1');
  assert.deepEqual(c.resources, { requests: { cpu: '100m' } });
  assert.deepEqual(c.volumeMounts, [{ name: 'cache', mountPath: '/cache' }]);
});

test('small read-only mounts become one ConfigMap with nested items; rw or large ones go through tar', async (t) => {
  const dir = scratchDir('berth-plan-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'tree/sub'), { recursive: true });
  writeFileSync(path.join(dir, 'tree/a.yaml'), 'a: 1\n');
  writeFileSync(path.join(dir, 'tree/sub/b.sh'), '#!/bin/sh\n');
  chmodSync(path.join(dir, 'tree/sub/b.sh'), 0o755);
  writeFileSync(path.join(dir, 'one.txt'), 'hello');
  writeFileSync(path.join(dir, 'big.bin'), Buffer.alloc(600 * 1024, 1));
  const mounts = [
    { source: path.join(dir, 'tree'), target: '/schemas', readOnly: true },
    { source: path.join(dir, 'one.txt'), target: '/etc/one.txt', readOnly: true },
    { source: path.join(dir, 'one.txt'), target: '/rw/one.txt', readOnly: false },
    { source: path.join(dir, 'big.bin'), target: '/big.bin', readOnly: true },
  ];
  const snaps = await snapshotMounts(mounts);
  const plan = planWorkload({ image: 'x', mounts, user: { uid: 65534 } }, { ...ctx, mounts: snaps, helperImage: 'localhost/berth/busybox:1' });
  assert.equal(plan.configMaps.length, 1);
  const cm = plan.configMaps[0];
  assert.equal(cm.metadata?.name, 'x-abc12345-files');
  assert.equal(Buffer.from(cm.binaryData!['m0.f1'], 'base64').toString(), 'a: 1\n');
  const vols = plan.pod.spec!.volumes!;
  const m0 = vols.find((v) => v.name === 'berth-m0')!;
  const aMode = snaps[0].entries.find((e) => e.path === 'a.yaml')!.mode & 0o777;
  assert.deepEqual(m0.configMap?.items, [
    { key: 'm0.f1', path: 'a.yaml', mode: aMode },
    { key: 'm0.f3', path: 'sub/b.sh', mode: 0o755 },
  ]);
  const mountsOf = plan.pod.spec!.containers[0].volumeMounts!;
  assert.deepEqual(
    mountsOf.find((m) => m.mountPath === '/schemas'),
    { name: 'berth-m0', mountPath: '/schemas', readOnly: true },
  );
  assert.deepEqual(
    mountsOf.find((m) => m.mountPath === '/etc/one.txt'),
    { name: 'berth-m1', mountPath: '/etc/one.txt', readOnly: true, subPath: 'file' },
  );
  assert.deepEqual(
    mountsOf.find((m) => m.mountPath === '/rw/one.txt'),
    { name: 'berth-files', mountPath: '/rw/one.txt', subPath: 'm2', readOnly: false },
  );
  assert.deepEqual(
    mountsOf.find((m) => m.mountPath === '/big.bin'),
    { name: 'berth-files', mountPath: '/big.bin', subPath: 'm3', readOnly: true },
  );
  assert.equal(plan.mountData.feed?.container, FILES_CONTAINER);
  assert.deepEqual(
    plan.mountData.entries.map((e) => e.name),
    ['m2', 'm3'],
  );
  const init = plan.pod.spec!.initContainers![0];
  assert.equal(init.image, 'localhost/berth/busybox:1');
  assert.equal(init.stdin, true);
  assert.equal(init.securityContext?.runAsUser, 65534);
  // tar extracts, and the copy only counts when the archive's final marker arrived
  assert.match(init.command?.[2] ?? '', /^tar -x -o -f - -C \/berth && test -e \/berth\/\.berth-complete \|\|/);
});

test('mount size limit and missing sources give clear errors', async (t) => {
  const dir = scratchDir('berth-plan-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'f'), Buffer.alloc(2048));
  await assert.rejects(
    snapshotMounts([{ source: path.join(dir, 'f'), target: '/f', readOnly: true }], 1024),
    (e: unknown) => e instanceof MountError && /exceed berth's limit of 1 KiB/.test(e.message),
  );
  await assert.rejects(snapshotMounts([{ source: path.join(dir, 'nope'), target: '/f', readOnly: true }]), /bind source path does not exist/);
  assert.throws(() => planWorkload({ image: 'x', mounts: [{ source: '/a', target: '/a', readOnly: true }] }, ctx), PlanError);
});

test('stdin as a file (no v5) needs the entrypoint and wraps it in sh', () => {
  assert.throws(() => planWorkload({ image: 'x', stdin: true }, { ...ctx, stdinAsFile: true }), /pass --entrypoint/);
  const plan = planWorkload({ image: 'x', stdin: true, command: ['/fn'], args: ['a'] }, { ...ctx, stdinAsFile: true });
  const c = plan.pod.spec!.containers[0];
  assert.deepEqual(c.command, ['/bin/sh', '-c', 'exec "$@" < /berth/stdin', 'berth-stdin', '/fn']);
  assert.deepEqual(c.args, ['a']);
  assert.equal(c.stdin, false);
  assert.equal(plan.mountData.stdinEntry, 'stdin/stdin');
  assert.equal(plan.mountData.feed?.container, FILES_CONTAINER);
});

test('pod names are DNS labels; invalid docker labels move to annotations', () => {
  assert.equal(podNameFor({ image: 'ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1.5' }, 'r1'), 'set-labels-r1');
  assert.equal(podNameFor({ image: 'x@sha256:abc', name: 'My_Fn' }, 'r1'), 'my-fn-r1');
  assert.ok(podNameFor({ image: 'a'.repeat(100) }, 'r1').length <= 63);
  assert.deepEqual(splitLabels({ 'a.b/c': 'd', 'bad key': 'v', ok: 'spaces are bad' }), {
    labels: { 'a.b/c': 'd' },
    annotations: { ok: 'spaces are bad', 'berth.dev/docker-labels': '{"bad key":"v"}' },
  });
  // keys no pod can carry (not even as annotations) are kept together, as JSON
  assert.deepEqual(splitLabels({ été: '1', 'a/b/c': '2', [`${'n'.repeat(64)}`]: '3' }).annotations, {
    'berth.dev/docker-labels': JSON.stringify({ été: '1', 'a/b/c': '2', ['n'.repeat(64)]: '3' }),
  });
});
