import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extract } from 'tar-stream';
import { ArchiveError, goFileMode, linkStaysInside, safeEntryName, sanitizeArchive } from '../../../src/runtime/files.js';
import { planSandboxPod, sandboxPodName, SandboxPlanError, READY_FILE } from '../../../src/runtime/sandbox-plan.js';
import { podSettingsFrom } from '../../../src/runtime/sandbox-settings.js';
import { tarOf } from '../../util/tar.js';

const ctx = { namespace: 'ns', owner: 'inst1', now: new Date('2024-01-01T00:00:00Z'), ttlSeconds: 600 };

async function names(tar: Buffer): Promise<string[]> {
  const ex = extract();
  const out: string[] = [];
  ex.on('entry', (h, s, next) => {
    out.push(h.name);
    s.resume();
    s.on('end', next);
  });
  const done = new Promise<void>((r) => ex.on('finish', () => r()));
  ex.end(tar);
  await done;
  return out;
}

test('entry names are made relative; ../ that leaves the destination is refused', () => {
  assert.equal(safeEntryName('/a/b'), 'a/b');
  assert.equal(safeEntryName('./a/../b/'), 'b');
  assert.equal(safeEntryName('./'), '');
  assert.throws(() => safeEntryName('../x'), ArchiveError);
  assert.throws(() => safeEntryName('a/../../x'), ArchiveError);
  assert.equal(linkStaysInside('a/l', '../b', '/dest'), true);
  assert.equal(linkStaysInside('a/l', '../../b', '/dest'), false);
  assert.equal(linkStaysInside('a/l', '../../dest/b', '/dest'), true, 'out and back in');
  assert.equal(linkStaysInside('l', '/etc', '/dest'), true, 'absolute targets resolve inside the container');
  // testcontainers copies a folder with path=/ and its absolute links made relative: below / nothing leaves
  assert.equal(linkStaysInside('tmp/d1/abslink', '../../../../etc/passwd', '/'), true);
  assert.equal(linkStaysInside('d1/abslink', '../../../../etc/passwd', '/tmp'), false);
});

test('sanitizeArchive re-packs good archives and refuses bad ones whole', async () => {
  const good = await sanitizeArchive(
    await tarOf([
      { name: './', type: 'directory' },
      { name: './d/f.txt', content: 'x' },
      { name: 'l', type: 'symlink', linkname: 'd/f.txt' },
    ]),
    '/dest',
  );
  assert.deepEqual(await names(Buffer.concat(good.tar.pieces)), ['d/f.txt', 'l']);
  await assert.rejects(sanitizeArchive(await tarOf([{ name: 'ok' }, { name: '../../bad' }]), '/dest'), /outside the destination/);
  await assert.rejects(sanitizeArchive(await tarOf([{ name: 'l', type: 'symlink', linkname: '/etc' }, { name: 'l/passwd' }]), '/dest'), /through the link/);
  await assert.rejects(sanitizeArchive(Buffer.from('x'.repeat(1024)), '/dest'), ArchiveError);
  assert.equal((await sanitizeArchive(Buffer.alloc(0), '/dest')).entries, 0, 'an empty body is an empty archive');
});

test('a re-packed archive is held in pieces: large data as it came, small entries joined, bytes unchanged', async () => {
  const big = Buffer.alloc(1 << 20);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 251;
  const files = [{ name: 'big.bin', content: big }, ...Array.from({ length: 300 }, (_, i) => ({ name: `small/${i}.txt`, content: `file ${i}\n` }))];
  const input = await tarOf(files);
  const { tar, entries } = await sanitizeArchive(input, '/dest');
  assert.equal(entries, 301);
  assert.equal(
    tar.length,
    tar.pieces.reduce((n, p) => n + p.length, 0),
  );
  const joined = Buffer.concat(tar.pieces);
  assert.ok(joined.equals(input), 'a clean archive comes out as it went in');
  // 300 small files are 900 chunks of header, data and padding: joined into runs of about 64 KiB
  assert.ok(tar.pieces.length < 40, `${tar.pieces.length} pieces`);
  assert.deepEqual(
    await names(joined),
    files.map((f) => f.name),
  );
});

test('Go FileMode bits for the archive stat header', () => {
  assert.equal(goFileMode(0o040755), (0x80000000 | 0o755) >>> 0);
  assert.equal(goFileMode(0o100644), 0o644);
  assert.equal(goFileMode(0o120777), (0x08000000 | 0o777) >>> 0);
});

test('the pod: labels, expiry, deadline, security, command and args', () => {
  const pod = planSandboxPod(
    {
      podName: 'p',
      shortId: 'abc',
      image: 'img',
      entrypoint: ['/e'],
      cmd: ['a', 'b'],
      env: ['A=1', 'B'],
      labels: { 'org.testcontainers': 'true', 'bad key!': 'v' },
      ports: [80, 80],
      user: '1000:2000',
    },
    ctx,
  );
  assert.equal(pod.metadata?.labels?.['app.kubernetes.io/managed-by'], 'berth');
  assert.equal(pod.metadata?.labels?.['berth.dev/owner'], 'inst1');
  assert.equal(pod.metadata?.labels?.['berth.dev/container'], 'abc');
  assert.equal(
    pod.metadata?.annotations?.['berth.dev/docker-labels'],
    '{"bad key!":"v"}',
    'labels whose keys no pod can carry are kept as JSON in one annotation',
  );
  assert.equal(pod.metadata?.annotations?.['berth.dev/expires-at'], '2024-01-01T00:10:00Z');
  assert.equal(pod.spec?.activeDeadlineSeconds, 600);
  assert.equal(pod.spec?.automountServiceAccountToken, false);
  assert.equal(pod.spec?.securityContext?.runAsUser, 1000);
  assert.equal(pod.spec?.securityContext?.runAsGroup, 2000);
  assert.equal(pod.spec?.securityContext?.runAsNonRoot, true, 'a non-root user is checked so by the kubelet');
  assert.equal(planSandboxPod({ podName: 'p', shortId: 'a', image: 'i', user: '0' }, ctx).spec?.securityContext?.runAsNonRoot, undefined);
  const main = pod.spec!.containers[0];
  assert.deepEqual(main.command, ['/e']);
  assert.deepEqual(main.args, ['a', 'b']);
  assert.deepEqual(main.env, [
    { name: 'A', value: '1' },
    { name: 'B', value: '' },
  ]);
  assert.deepEqual(main.ports, [{ containerPort: 80, protocol: 'TCP' }]);
  assert.equal(main.securityContext?.allowPrivilegeEscalation, false);
  assert.deepEqual(main.securityContext?.capabilities?.drop, ['ALL']);
  assert.throws(() => planSandboxPod({ podName: 'p', shortId: 'a', image: 'i', user: 'postgres' }, ctx), SandboxPlanError);
});

test("files copied before start: the entrypoint waits for berth's marker", () => {
  const pod = planSandboxPod({ podName: 'p', shortId: 'a', image: 'i', cmd: ['cat', '/x'], waitForFiles: true }, ctx);
  const main = pod.spec!.containers[0];
  assert.equal(main.command?.[0], '/bin/sh');
  assert.match(main.command?.[2] ?? '', new RegExp(READY_FILE.replace(/\//g, '\\/')));
  assert.deepEqual(main.command?.slice(3), ['berth-wait', 'cat', '/x']);
  assert.throws(() => planSandboxPod({ podName: 'p', shortId: 'a', image: 'i', waitForFiles: true }, ctx), /needs its command/);
});

test('volumes, tmpfs, limits and pod names', () => {
  const pod = planSandboxPod(
    {
      podName: 'p',
      shortId: 'a',
      image: 'i',
      volumes: [
        { claim: 'c1', target: '/d', readOnly: true },
        { target: '/t', readOnly: false, memory: true },
      ],
      memory: 64 * 1024 * 1024,
      nanoCpus: 1.5e9,
    },
    ctx,
  );
  assert.deepEqual(pod.spec?.volumes, [
    { name: 'v0', persistentVolumeClaim: { claimName: 'c1' } },
    { name: 'v1', emptyDir: { medium: 'Memory' } },
  ]);
  assert.deepEqual(pod.spec!.containers[0].resources?.limits, { memory: String(64 * 1024 * 1024), cpu: '1500m' });
  assert.equal(sandboxPodName('My_Container.1', 'abc'), 'my-container-1-abc');
  assert.match(sandboxPodName('x'.repeat(100), 'abc-1'), /^x{40}-abc-1$/);
});

test('pod settings: a container label replaces the operator flag of the same key', () => {
  const flags = {
    'berth.dev/request-cpu': '100m',
    'berth.dev/limit-memory': '1Gi',
    'berth.dev/pull-policy': 'always',
    'berth.dev/node-selector': 'pool=ci, zone=a',
  };
  const settings = podSettingsFrom(flags, { 'berth.dev/limit-memory': '64Mi', 'berth.dev/request-ephemeral-storage': '2Gi', other: 'ignored' });
  assert.deepEqual(settings, {
    requests: { cpu: '100m', 'ephemeral-storage': '2Gi' },
    limits: { memory: '64Mi' },
    nodeSelector: { pool: 'ci', zone: 'a' },
    pullPolicy: 'Always',
  });
  assert.deepEqual(podSettingsFrom(undefined, null), {});
});

test('pod settings: bad values are refused with the key named', () => {
  assert.throws(
    () => podSettingsFrom({ 'berth.dev/request-cpu': 'lots' }),
    (e: Error) => e instanceof SandboxPlanError && /request-cpu="lots"/.test(e.message),
  );
  assert.throws(() => podSettingsFrom({ 'berth.dev/pull-policy': 'Sometimes' }), SandboxPlanError);
  assert.throws(() => podSettingsFrom({ 'berth.dev/node-selector': 'pool' }), /not k=v/);
  assert.throws(() => podSettingsFrom({ 'berth.dev/service-account': 'Bad_Name' }), SandboxPlanError);
  assert.throws(() => podSettingsFrom({ 'berth.dev/name-prefix': 'UPPER' }), SandboxPlanError);
});

test('pod settings in the pod: resources, selector, account, pull policy, labels; HostConfig limits win', () => {
  const settings = podSettingsFrom({
    'berth.dev/request-cpu': '50m',
    'berth.dev/request-memory': '32Mi',
    'berth.dev/limit-cpu': '2',
    'berth.dev/limit-ephemeral-storage': '1Gi',
    'berth.dev/node-selector': 'pool=ci',
    'berth.dev/service-account': 'puller',
    'berth.dev/pull-policy': 'Never',
    'berth.dev/pod-labels': 'team=qa,berth.dev/owner=thief',
    'berth.dev/pod-annotations': 'note=x',
  });
  const pod = planSandboxPod({ podName: 'p', shortId: 'abc', image: 'img', memory: 64 * 1024 * 1024, settings }, ctx);
  const main = pod.spec!.containers[0];
  assert.deepEqual(main.resources, {
    requests: { cpu: '50m', memory: '32Mi' },
    limits: { cpu: '2', 'ephemeral-storage': '1Gi', memory: String(64 * 1024 * 1024) },
  });
  assert.equal(main.imagePullPolicy, 'Never');
  assert.deepEqual(pod.spec!.nodeSelector, { pool: 'ci' });
  assert.equal(pod.spec!.serviceAccountName, 'puller');
  assert.equal(pod.spec!.automountServiceAccountToken, false);
  assert.equal(pod.metadata!.labels!.team, 'qa');
  assert.equal(pod.metadata!.labels!['berth.dev/owner'], 'inst1', 'settings cannot change the owner label');
  assert.equal(pod.metadata!.annotations!.note, 'x');
  const nano = planSandboxPod({ podName: 'p', shortId: 'abc', image: 'img', nanoCpus: 5e8, settings }, ctx);
  assert.equal(nano.spec!.containers[0].resources!.limits!.cpu, '500m');
  const bare = planSandboxPod({ podName: 'p', shortId: 'abc', image: 'img' }, ctx);
  assert.equal(bare.spec!.containers[0].resources, undefined);
  assert.equal(bare.spec!.nodeSelector, undefined);
});

test('pod name prefix keeps names valid DNS labels', () => {
  assert.equal(sandboxPodName('web', 'abc123-1', 'ci'), 'ci-web-abc123-1');
  const long = sandboxPodName('x'.repeat(80), 'abcdef123456-12', 'p'.repeat(20));
  assert.ok(long.length <= 63, long);
  assert.match(long, /^p{20}-x+-abcdef123456-12$/);
});
