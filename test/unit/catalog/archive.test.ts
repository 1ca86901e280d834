// Exec providers shipped as .tar.gz: verified by sha256 before unpacking, unpacked without any entry or
// link reaching outside the cache, the executable found by the catalog's `bin`, checked again before
// every use, and vendored by `catalog pull` as the archive itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureExecutable, ensureProvider, verifyExecutable } from '../../../src/catalog/exec.js';
import type { ExecPlatform } from '../../../src/catalog/model.js';
import { sha256Digest } from '../../../src/catalog/oci.js';
import { pullCatalogs } from '../../../src/catalog/pull.js';
import { tgz, type TgzEntry } from './tgz.js';
import { scratchDir } from '../../util/scratch.js';

const SCRIPT = '#!/bin/sh\ncat\n';

/** A folder holding `name` (the archive) and a cache; the catalog base is the folder. */
function place(data: Buffer, name = 'fn.tgz'): { dir: string; cacheDir: string; catalog: { base: string; name: string } } {
  const dir = scratchDir('berth-tgz-');
  writeFileSync(path.join(dir, name), data);
  return { dir, cacheDir: path.join(dir, 'cache'), catalog: { base: pathToFileURL(`${dir}/`).href, name: 'archives' } };
}

function platform(data: Buffer, bin: string, uri = 'fn.tgz'): ExecPlatform {
  return { bin, os: 'linux', arch: 'amd64', uri, sha256: sha256Digest(data) };
}

function cacheFiles(cacheDir: string): string[] {
  return existsSync(cacheDir) ? readdirSync(cacheDir, { recursive: true }).map(String) : [];
}

test('a .tgz whose sha256 matches: unpacked, the executable at bin found and runnable; one that does not match: refused, nothing cached', async () => {
  const data = await tgz([
    { name: 'kit/', type: 'directory', mode: 0o755 },
    { name: 'kit/README', body: 'read me' },
    { name: 'kit/bin/set-team', body: SCRIPT, mode: 0o755 },
  ]);
  const s = place(data);
  const file = await ensureExecutable(platform(data, 'kit/bin/set-team'), s.catalog, { cacheDir: s.cacheDir });
  assert.equal(readFileSync(file, 'utf8'), SCRIPT);
  assert.equal(path.basename(file), 'set-team');
  const bad = place(data);
  await assert.rejects(
    ensureExecutable({ ...platform(data, 'kit/bin/set-team'), sha256: 'c'.repeat(64) }, bad.catalog, { cacheDir: bad.cacheDir }),
    /sha256 mismatch for kit\/bin\/set-team .*catalog archives says sha256:c{64}, the download is sha256:[0-9a-f]{64}; refusing to run it/,
  );
  assert.deepEqual(cacheFiles(bad.cacheDir), []);
});

test('a cached provider changed after it was verified is refused: the unpacked executable, or the archive', async () => {
  const data = await tgz([{ name: 'set-team', body: SCRIPT, mode: 0o755 }]);
  const s = place(data);
  const p = platform(data, 'set-team');
  const cached = await ensureProvider(p, s.catalog, { cacheDir: s.cacheDir });
  writeFileSync(cached.executable, '#!/bin/sh\nrm -rf "$HOME"\n');
  await assert.rejects(ensureProvider(p, s.catalog, { cacheDir: s.cacheDir }), /sha256 mismatch for .*set-team: catalog archives says .*refusing to run it/);
  assert.throws(() => verifyExecutable(cached.executable, cached.executableSha256, 'archives'), /refusing to run it/);
  rmSync(path.dirname(cached.executable), { recursive: true });
  assert.equal(
    readFileSync((await ensureProvider(p, s.catalog, { cacheDir: s.cacheDir })).executable, 'utf8'),
    SCRIPT,
    'unpacked again from the verified archive',
  );
  writeFileSync(cached.artifact, Buffer.concat([data, Buffer.from('x')]));
  await assert.rejects(ensureProvider(p, s.catalog, { cacheDir: s.cacheDir }), /sha256 mismatch for .*provider\.tar\.gz/);
});

test('which file is the executable: bin as a path in the archive, else the one file named like bin, else the only executable; else refused naming the candidates', async () => {
  const byName = await tgz([
    { name: 'dist/linux/set-team', body: SCRIPT, mode: 0o755 },
    { name: 'dist/linux/helper', body: SCRIPT, mode: 0o755 },
  ]);
  let s = place(byName);
  assert.match(await ensureExecutable(platform(byName, 'set-team'), s.catalog, { cacheDir: s.cacheDir }), /dist\/linux\/set-team$/);
  const single = await tgz([
    { name: 'LICENSE', body: 'Apache' },
    { name: 'tool-v1.2', body: SCRIPT, mode: 0o755 },
  ]);
  s = place(single);
  assert.match(await ensureExecutable(platform(single, 'set-team'), s.catalog, { cacheDir: s.cacheDir }), /tool-v1\.2$/);
  const ambiguous = await tgz([
    { name: 'a', body: SCRIPT, mode: 0o755 },
    { name: 'b', body: SCRIPT, mode: 0o755 },
  ]);
  s = place(ambiguous);
  await assert.rejects(
    ensureExecutable(platform(ambiguous, 'set-team'), s.catalog, { cacheDir: s.cacheDir }),
    /has no file set-team and several candidates \(a, b\): the catalog's bin must name the executable's path in the archive/,
  );
});

const UNSAFE: Array<{ what: string; entries: TgzEntry[]; error: RegExp }> = [
  {
    what: 'an absolute name',
    entries: [{ name: '/tmp/berth-escape', body: SCRIPT, mode: 0o755 }],
    error: /\/tmp\/berth-escape is an absolute path: refusing the archive/,
  },
  {
    what: 'a name with ..',
    entries: [{ name: 'kit/../../escape', body: SCRIPT, mode: 0o755 }],
    error: /kit\/\.\.\/\.\.\/escape climbs out with "\.\.": refusing the archive/,
  },
  {
    what: 'a symlink to an absolute path',
    entries: [{ name: 'set-team', type: 'symlink', linkname: '/bin/sh' }],
    error: /symlink set-team points to the absolute path \/bin\/sh/,
  },
  {
    what: 'a symlink out of the folder',
    entries: [{ name: 'kit/set-team', type: 'symlink', linkname: '../../../bin/sh' }],
    error: /symlink kit\/set-team -> \.\.\/\.\.\/\.\.\/bin\/sh points outside the archive/,
  },
  {
    what: 'a symlink that leaves through another symlink',
    entries: [
      { name: 'here', type: 'symlink', linkname: '.' },
      { name: 'set-team', type: 'symlink', linkname: 'here/../x' },
    ],
    error: /symlink set-team -> here\/\.\.\/x passes through the symlink here/,
  },
  {
    what: 'a file written through a symlink',
    entries: [
      { name: 'up', type: 'symlink', linkname: 'kit' },
      { name: 'up/set-team', body: SCRIPT, mode: 0o755 },
    ],
    error: /up\/set-team would be written through the symlink up/,
  },
  { what: 'a hardlink out of the folder', entries: [{ name: 'set-team', type: 'link', linkname: '../../etc/passwd' }], error: /climbs out with "\.\."/ },
  {
    what: 'a hardlink to nothing in the archive',
    entries: [{ name: 'set-team', type: 'link', linkname: 'etc/passwd' }],
    error: /hardlink set-team -> etc\/passwd names no file of the archive/,
  },
  {
    what: 'the executable twice (the second would replace the first)',
    entries: [
      { name: 'set-team', body: SCRIPT, mode: 0o755 },
      { name: './set-team', body: 'evil', mode: 0o755 },
    ],
    error: /set-team appears twice: refusing the archive/,
  },
  { what: 'a fifo', entries: [{ name: 'set-team', type: 'fifo' }], error: /set-team is a fifo: refusing the archive/ },
];

for (const u of UNSAFE) {
  test(`an archive with ${u.what} is refused after its sha256 matched; nothing is written`, async () => {
    const data = await tgz(u.entries);
    const s = place(data);
    await assert.rejects(ensureExecutable(platform(data, 'set-team'), s.catalog, { cacheDir: s.cacheDir }), u.error);
    assert.deepEqual(
      cacheFiles(s.cacheDir).filter((f) => !f.endsWith('exec')),
      [],
    );
    assert.equal(existsSync('/tmp/berth-escape'), false);
    assert.equal(existsSync(path.join(s.dir, 'escape')), false);
  });
}

test('a symlink inside the archive is followed to its file; a hardlink is a copy of its file', async () => {
  const data = await tgz([
    { name: 'kit/set-team-1.0', body: SCRIPT, mode: 0o755 },
    { name: 'kit/set-team', type: 'symlink', linkname: 'set-team-1.0' },
    { name: 'kit/copy', type: 'link', linkname: 'kit/set-team-1.0' },
  ]);
  const s = place(data);
  assert.match(await ensureExecutable(platform(data, 'kit/set-team'), s.catalog, { cacheDir: s.cacheDir }), /kit\/set-team-1\.0$/);
  const h = place(data);
  assert.equal(readFileSync(await ensureExecutable(platform(data, 'kit/copy'), h.catalog, { cacheDir: h.cacheDir }), 'utf8'), SCRIPT);
});

test('catalog pull vendors the archive itself; the vendored catalog resolves offline to the same executable', async () => {
  const data = await tgz([{ name: 'set-team', body: SCRIPT, mode: 0o755 }]);
  const s = place(data, 'set-team-linux-amd64.tgz');
  writeFileSync(
    path.join(s.dir, 'catalog.yaml'),
    `apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata: {name: archives}\nspec:\n  krmFunctions:\n  - group: fn.example.org\n    names: {kind: SetTeam}\n    description: d\n    publisher: p\n    versions:\n    - name: v1\n      runtime:\n        exec:\n          platforms:\n          - {bin: set-team, os: linux, arch: amd64, uri: set-team-linux-amd64.tgz, sha256: "${sha256Digest(data).slice(7)}"}\n`,
  );
  const out = path.join(s.dir, 'vendor');
  const [pulled] = await pullCatalogs([path.join(s.dir, 'catalog.yaml')], out, { cacheDir: s.cacheDir });
  assert.equal(pulled.executables.length, 1);
  assert.deepEqual(readFileSync(path.join(out, pulled.executables[0])), data);
  const fresh = path.join(s.dir, 'cache2');
  const file = await ensureExecutable(
    { ...platform(data, 'set-team'), uri: pulled.executables[0] },
    { base: pathToFileURL(`${out}/`).href, name: 'archives' },
    { cacheDir: fresh },
  );
  assert.equal(readFileSync(file, 'utf8'), SCRIPT);
});
