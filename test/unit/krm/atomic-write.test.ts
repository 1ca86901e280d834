// Package writes are all or none: a write that fails midway leaves every file as it was (no temp files
// either); a successful one replaces files whole, keeps their permissions and deletes last.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { writeFilesAtomically, PackageWriteError } from '../../../src/files/atomic-write.js';
import { evalFunction } from '../../../src/krm/eval.js';
import { renderPackage } from '../../../src/krm/render.js';
import { tree } from './fn-scripts.js';
import { hashTree, printingFunction } from './package-tree.js';

const NO_CATALOGS = { trusted: [], untrusted: [], unreadable: [] };

const FILES = {
  Kptfile: 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: shop\n',
  'service.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: cart\n',
  'apps/deploy.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cart\n',
  // Not a resource file (no .yaml), so not part of the package, but it is where a function puts a folder.
  blocked: 'a file, not a folder\n',
};

/** Changes the two resources, drops the Kptfile, and adds one under `blocked/`, which cannot be a folder. */
const OUTPUT = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: cart
    annotations: {internal.config.kubernetes.io/path: service.yaml, changed: "yes"}
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: cart
    annotations: {internal.config.kubernetes.io/path: apps/deploy.yaml, changed: "yes"}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: new
    annotations: {internal.config.kubernetes.io/path: blocked/new.yaml}
`;

test('fn eval: a write that fails after other files were staged changes nothing (no deletion, no temp file)', async () => {
  const dir = tree(FILES);
  const before = hashTree(dir);
  const fn = printingFunction(OUTPUT);
  await assert.rejects(
    evalFunction(dir, { catalogs: NO_CATALOGS, exec: fn, report: new PassThrough(), stdin: new PassThrough(), stdout: new PassThrough() }),
    (err: unknown) =>
      err instanceof PackageWriteError &&
      /cannot make the folder of blocked\/new\.yaml \(.*blocked is a file, not a folder\); nothing was changed/.test(err.message),
  );
  assert.deepEqual(hashTree(dir), before);
});

test('fn render: the same failing write leaves the package as it was', async () => {
  const fn = printingFunction(OUTPUT);
  const dir = tree({ ...FILES, Kptfile: `${FILES.Kptfile}pipeline:\n  mutators:\n  - exec: ${fn}\n` });
  const before = hashTree(dir);
  await assert.rejects(renderPackage(dir, { catalogs: NO_CATALOGS, report: new PassThrough() }), PackageWriteError);
  assert.deepEqual(hashTree(dir), before);
});

test('writeFilesAtomically: a folder in the way of the last file, or a read-only folder: nothing changed, made folders removed', () => {
  const dir = tree({ 'a.yaml': 'a\n', 'sub/b.yaml': 'b\n', 'taken.yaml/keep': 'x\n' });
  const before = hashTree(dir);
  const changes = new Map<string, string | null>([
    ['a.yaml', 'A\n'],
    ['new/deeper/c.yaml', 'C\n'],
    ['sub/b.yaml', null],
    ['taken.yaml', 'T\n'],
  ]);
  assert.throws(() => writeFilesAtomically(dir, changes), /cannot write taken\.yaml: a folder of that name is in the way; nothing was changed/);
  assert.deepEqual(hashTree(dir), before);

  // As root a read-only folder is still writable; the folder-in-the-way case above covers root.
  if (process.getuid?.() !== 0) {
    chmodSync(path.join(dir, 'sub'), 0o555);
    try {
      assert.throws(
        () =>
          writeFilesAtomically(
            dir,
            new Map([
              ['a.yaml', 'A\n'],
              ['sub/b.yaml', 'B\n'],
            ]),
          ),
        /cannot write sub\/b\.yaml: .*nothing was changed/,
      );
    } finally {
      chmodSync(path.join(dir, 'sub'), 0o755);
    }
    assert.deepEqual(hashTree(dir), before);
  }
});

test('writeFilesAtomically: files replaced whole with their permissions, new folders made, deletions done', () => {
  const dir = tree({ 'a.yaml': 'a\n', 'sub/b.yaml': 'b\n', 'run.yaml': 'r\n' });
  chmodSync(path.join(dir, 'run.yaml'), 0o640);
  writeFilesAtomically(
    dir,
    new Map<string, string | null>([
      ['a.yaml', 'A\n'],
      ['run.yaml', 'R\n'],
      ['new/c.yaml', 'C\n'],
      ['sub/b.yaml', null],
    ]),
  );
  assert.equal(readFileSync(path.join(dir, 'a.yaml'), 'utf8'), 'A\n');
  assert.equal(readFileSync(path.join(dir, 'run.yaml'), 'utf8'), 'R\n');
  assert.equal(statSync(path.join(dir, 'run.yaml')).mode & 0o777, 0o640);
  assert.equal(readFileSync(path.join(dir, 'new/c.yaml'), 'utf8'), 'C\n');
  assert.deepEqual(Object.keys(hashTree(dir)), ['a.yaml', 'new', 'new/c.yaml', 'run.yaml', 'sub']);
});
