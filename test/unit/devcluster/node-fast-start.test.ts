// The pieces that make pods start fast: the run argv, the runtime-init check, the image cache's
// invalidation, the start-up gate and the sandbox pool's bookkeeping, without podman.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { containerRunArgs, type ContainerSpec } from '../../../src/devcluster/node/podman-args.js';
import { isRuntimeInit } from '../../../src/devcluster/node/attached-container.js';
import { ImageCache } from '../../../src/devcluster/node/images.js';
import { StartupGate } from '../../../src/devcluster/node/startup-gate.js';
import { poolSandboxArgs, SandboxPool } from '../../../src/devcluster/node/sandbox-pool.js';
import type { PodmanCli, PodmanResult } from '../../../src/devcluster/node/podman-cli.js';
import { securitySettings } from '../../../src/devcluster/node/security.js';
import { scratchDir } from '../../util/scratch.js';

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: {} };

/** a PodmanCli that answers from a function and records the calls */
function fakeCli(answer: (args: string[]) => PodmanResult): PodmanCli & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    calls,
    run: async (args: string[]) => {
      calls.push(args);
      return answer(args);
    },
  } as unknown as PodmanCli & { calls: string[][] };
}

const ok = (stdout = ''): PodmanResult => ({ code: 0, stdout, stderr: '' });

test('run argv: the create flags with --cidfile/--pidfile, and the hostname for a pooled sandbox', () => {
  const spec: ContainerSpec = { podName: 'pp', name: 'pp-c-0', labels: {}, image: 'img:1', command: ['sleep'], args: ['60'], env: [], security: securitySettings(pod, { name: 'c' }, ''), stdin: false, tty: false, mounts: [], hostname: 'web-0' };
  const args = containerRunArgs(spec, { cidFile: '/r/c.cid', pidFile: '/r/c.pid' });
  assert.deepEqual(args.slice(0, 5), ['run', '--cidfile', '/r/c.cid', '--pidfile', '/r/c.pid']);
  assert.ok(args.join(' ').includes('--pod pp --name pp-c-0 --pull never'));
  assert.ok(args.join(' ').includes('--hostname web-0'));
  assert.ok(!args.includes('-d') && !args.includes('--detach'), 'attached: the node holds the pipes');
  assert.deepEqual(args.slice(-2), ['img:1', '60']);
  const { hostname: _h, ...cold } = spec;
  assert.ok(!containerRunArgs(cold, { cidFile: 'a', pidFile: 'b' }).includes('--hostname'), 'a sandbox of its own carries the hostname');
});

test('a process waiting in the runtime init is not running yet; anything else is', () => {
  assert.equal(isRuntimeInit(['/usr/bin/runc', 'init', '']), true);
  assert.equal(isRuntimeInit(['runc', 'init']), true);
  assert.equal(isRuntimeInit(['/proc/self/exe', 'init']), true);
  assert.equal(isRuntimeInit(['sleep', '60', '']), false);
  assert.equal(isRuntimeInit(['/bin/init', 'init']), false);
});

test('image cache: found images are kept until the image store file changes; missing ones never', async () => {
  const dir = scratchDir('berth-imgcache-');
  try {
    const storeFile = join(dir, 'images.json');
    writeFileSync(storeFile, '[1]');
    let present = true;
    const cli = fakeCli(() => (present ? ok(JSON.stringify([{ Id: 'abc', Config: { User: 'nobody' } }])) : { code: 125, stdout: '', stderr: 'Error: img: image not known' }));
    const cache = new ImageCache(cli, storeFile);
    const first = await cache.lookup('img:1');
    assert.deepEqual(first, { found: true, image: { id: 'abc', user: 'nobody', imageRef: 'sha256:abc' } });
    assert.deepEqual(await cache.lookup('img:1'), first);
    assert.equal(cli.calls.length, 1, 'the second lookup comes from the cache');

    // an image removed: the store file is rewritten, the next lookup asks podman again
    present = false;
    writeFileSync(storeFile, '[]');
    const gone = await cache.lookup('img:1');
    assert.deepEqual(gone, { found: false, message: 'img: image not known' });
    assert.equal(cli.calls.length, 2);
    await cache.lookup('img:1');
    assert.equal(cli.calls.length, 3, 'a missing image is looked up every time');

    // forget: podman could not use what was cached
    present = true;
    await cache.lookup('img:1');
    cache.forget('img:1');
    await cache.lookup('img:1');
    assert.equal(cli.calls.length, 5);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('image cache without a store file to watch caches nothing', async () => {
  const cli = fakeCli(() => ok(JSON.stringify([{ Id: 'abc' }])));
  const cache = new ImageCache(cli, '/nonexistent/images.json');
  await cache.lookup('img:1');
  await cache.lookup('img:1');
  assert.equal(cli.calls.length, 2);
});

test('image cache: lookups of one image made together share one podman call, also a failing one', async () => {
  let present = true;
  const cli = fakeCli(() => (present ? ok(JSON.stringify([{ Id: 'abc' }])) : { code: 125, stdout: '', stderr: 'Error: img: image not known' }));
  const cache = new ImageCache(cli, '/nonexistent/images.json');
  const together = await Promise.all(Array.from({ length: 5 }, () => cache.lookup('img:1')));
  assert.equal(cli.calls.length, 1);
  assert.ok(together.every((r) => r.found));
  await Promise.all([cache.lookup('img:1'), cache.lookup('img:2')]);
  assert.equal(cli.calls.length, 3, 'each image is its own lookup, and one that ended is not reused');
  present = false;
  const missing = await Promise.all([cache.lookup('img:1'), cache.lookup('img:1')]);
  assert.equal(cli.calls.length, 4);
  assert.deepEqual(missing, [{ found: false, message: 'img: image not known' }, { found: false, message: 'img: image not known' }]);
});

test('start-up gate: idle waits for starting pods, ends are idempotent, and a stuck pod holds it only so long', async () => {
  const gate = new StartupGate(100);
  await gate.idle();
  const endA = gate.begin();
  const endB = gate.begin();
  let released = false;
  const waiting = gate.idle().then(() => (released = true));
  endA();
  endA();
  await new Promise((r) => setImmediate(r));
  assert.equal(released, false, 'one pod still starting');
  assert.equal(gate.busy, true);
  endB();
  await waiting;
  assert.equal(gate.busy, false);

  gate.begin(); // never ends
  const t = performance.now();
  await gate.idle();
  assert.ok(performance.now() - t >= 90, 'waited for the cap');
});

test('sandbox pool: fills to size when idle, hands sandboxes out, refills, removes what is left on stop', async () => {
  let n = 0;
  const cli = fakeCli((args) => {
    if (args[0] === 'inspect') return ok(`${100 + n++} 10.88.0.${n}\n`);
    return ok();
  });
  let allowIdle!: () => void;
  let idleGate = new Promise<void>((r) => (allowIdle = r));
  const pool = new SandboxPool(cli, 'cid', 2, () => idleGate);
  pool.fill();
  await new Promise((r) => setImmediate(r));
  assert.equal(pool.take(), undefined, 'nothing made while pods are starting');
  allowIdle();
  for (let i = 0; i < 50 && cli.calls.filter((c) => c[0] === 'inspect').length < 2; i++) await new Promise((r) => setImmediate(r));
  const creates = cli.calls.filter((c) => c[0] === 'pod' && c[1] === 'create');
  assert.equal(creates.length, 2);
  assert.ok(creates.every((c) => c.includes('io.berth.dev-cluster=cid')), 'cleanup by cluster id finds pool sandboxes');
  await new Promise((r) => setImmediate(r));
  idleGate = new Promise<void>(() => undefined); // busy again: the refill waits
  const taken = pool.take();
  assert.ok(taken && taken.infraPid >= 100 && taken.ip.startsWith('10.88.0.'), JSON.stringify(taken));
  await new Promise((r) => setImmediate(r));
  assert.equal(cli.calls.filter((c) => c[0] === 'pod' && c[1] === 'create').length, 2, 'no refill while busy');
  await pool.stop();
  const removed = cli.calls.filter((c) => c[0] === 'pod' && c[1] === 'rm').flatMap((c) => c.slice(5));
  assert.equal(removed.length, 1, 'the one sandbox left is removed');
  assert.ok(!removed.includes(taken.name), 'the taken sandbox belongs to its pod');
  assert.equal(pool.take(), undefined);
});

test('pool sandboxes share the network and IPC (a /dev/shm of 64 MiB) but not the UTS namespace, and carry the cluster label', () => {
  const args = poolSandboxArgs('c1', 'c1-sandbox-x');
  assert.equal(args[args.indexOf('--share') + 1], 'ipc,net');
  assert.equal(args[args.indexOf('--shm-size') + 1], String(64 * 1024 * 1024));
  assert.ok(args.includes('io.berth.dev-cluster=c1'));
  assert.deepEqual(args.slice(-2), ['--network', 'podman']);
});

test('the pool for isolated pods makes sandboxes without a network', () => {
  const args = poolSandboxArgs('c1', 'c1-sandbox-y', 'none');
  assert.deepEqual(args.slice(-2), ['--network', 'none']);
  assert.ok(args.includes('io.berth.sandbox-pool=true'));
});
