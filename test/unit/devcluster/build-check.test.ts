// `scripts/upstream/build.sh --check`: what the demo and a user ask before a first run, so that a 22-minute build is
// announced, not sprung on them. It must answer from the cache alone: no go command, no folder made.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { scratchDir } from '../../util/scratch.js';

const script = fileURLToPath(new URL('../../../../scripts/upstream/build.sh', import.meta.url));
const check = (cache: string) => spawnSync('bash', [script, '--check'], { env: { ...process.env, BERTH_K8S_CACHE: cache }, encoding: 'utf8' });

test('an empty cache: exit 1, every part named with its version, nothing created', (t) => {
  const dir = scratchDir('berth-build-check-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'cache');
  const r = check(cache);
  assert.equal(r.status, 1, r.stderr);
  assert.match(
    r.stdout,
    /^not built yet in .*cache: kubernetes v1\.36\.\d+, etcd v3\.6\.\d+, containerd v2\.\d+\.\d+, coredns v\S+, kube-router v\S+, local-path v\S+\n$/,
  );
  assert.equal(existsSync(cache), false);
});

test('a cache with every part marked built: exit 0 and no output; one part missing: that part only', (t) => {
  const dir = scratchDir('berth-build-check-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const missing = check(dir).stdout;
  const parts = [...missing.matchAll(/(kubernetes|etcd|containerd|coredns|kube-router|local-path) (v\S+?)(?:,|\n)/g)].map((m) => `${m[1]}-${m[2]}`);
  assert.equal(parts.length, 6, missing);
  for (const part of parts) {
    mkdirSync(join(dir, part, 'bin'), { recursive: true });
    writeFileSync(join(dir, part, 'bin', '.done'), '');
  }
  assert.deepEqual([check(dir).status, check(dir).stdout], [0, '']);
  rmSync(join(dir, parts[2]!, 'bin', '.done'));
  assert.match(check(dir).stdout, /: containerd v\S+\n$/);
});
