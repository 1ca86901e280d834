// Layers from folders: the same tree is the same layer digest (mtimes fixed, entries sorted), whatever
// the folder is called and whenever its files were written; mode, owner, symlinks, hard links, empty
// folders and unicode names survive; digest and diff id are the sha256 of the gzip and of the tar.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { extract, type Header } from 'tar-stream';
import { folderLayer } from '../../../src/registry/layer-blob.js';
import { scratchDir } from '../../util/scratch.js';
import { writeTree } from './image-fixtures.js';

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

async function entriesOf(tar: Buffer): Promise<Array<Header & { content: string }>> {
  const out: Array<Header & { content: string }> = [];
  const ex = extract();
  Readable.from([tar]).pipe(ex as unknown as NodeJS.WritableStream);
  for await (const entry of ex) {
    const chunks: Buffer[] = [];
    for await (const c of entry) chunks.push(c as Buffer);
    out.push({ ...entry.header, content: Buffer.concat(chunks).toString() });
  }
  return out;
}

function sampleTree(): string {
  const root = scratchDir('berth-tree-');
  writeTree(root, { 'bin/tool': '#!/bin/sh\necho hi\n', 'etc/app.conf': 'a=1\n', 'übung/日本語.txt': 'unicode\n', 'z-last': 'z\n' });
  chmodSync(path.join(root, 'bin/tool'), 0o751);
  chmodSync(path.join(root, 'etc/app.conf'), 0o600);
  writeFileSync(path.join(root, 'locked'), 'nobody may read me\n');
  chmodSync(path.join(root, 'locked'), 0o000);
  mkdirSync(path.join(root, 'empty'));
  chmodSync(path.join(root, 'empty'), 0o700);
  symlinkSync('/bin/tool', path.join(root, 'abs-link'));
  symlinkSync('../etc/app.conf', path.join(root, 'bin/rel-link'));
  linkSync(path.join(root, 'etc/app.conf'), path.join(root, 'etc/hard'));
  return root;
}

test('the same folder gives the same layer twice; a changed byte does not', async () => {
  const root = sampleTree();
  const out = scratchDir('berth-blobs-');
  const first = (await folderLayer(root, out)).layer;
  const again = (await folderLayer(root, out)).layer;
  assert.equal(again.digest, first.digest);
  assert.equal(again.diffId, first.diffId);
  writeFileSync(path.join(root, 'z-last'), 'Z\n');
  const changed = (await folderLayer(root, out)).layer;
  assert.notEqual(changed.diffId, first.diffId);
  assert.notEqual(changed.digest, first.digest);
});

test('a folder copied with its links and new mtimes is the same layer', async () => {
  const root = scratchDir('berth-tree-');
  writeTree(root, { 'a/b.txt': 'b', 'c.txt': 'c' });
  symlinkSync('c.txt', path.join(root, 'link'));
  const copy = scratchDir('berth-copy-');
  writeTree(copy, { 'c.txt': 'c', 'a/b.txt': 'b' });
  symlinkSync('c.txt', path.join(copy, 'link'));
  utimesSync(path.join(copy, 'c.txt'), new Date('2031-01-01'), new Date('2031-01-01'));
  for (const dir of [root, copy]) for (const rel of ['a', 'a/b.txt', 'c.txt']) chmodSync(path.join(dir, rel), statSync(path.join(root, rel)).mode & 0o7777);
  const out = scratchDir('berth-blobs-');
  assert.equal((await folderLayer(copy, out)).layer.digest, (await folderLayer(root, out)).layer.digest);
});

test('the layer keeps modes (also 000), owners, symlinks, hard links, empty folders and unicode names; sorted, relative, mtime 0', async () => {
  const root = sampleTree();
  const sock = path.join(root, 'app.sock');
  const server = createServer().listen(sock);
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const { layer, skipped } = await folderLayer(root, scratchDir('berth-blobs-'));
    assert.deepEqual(skipped, ['app.sock']);
    const gz = readFileSync(layer.file);
    assert.equal(layer.digest, sha256(gz));
    assert.equal(layer.size, gz.length);
    const tar = gunzipSync(gz);
    assert.equal(layer.diffId, sha256(tar));
    const entries = await entriesOf(tar);
    const names = entries.map((e) => e.name.replace(/\/$/, ''));
    assert.deepEqual(names, [
      'abs-link',
      'bin',
      'bin/rel-link',
      'bin/tool',
      'empty',
      'etc',
      'etc/app.conf',
      'etc/hard',
      'locked',
      'z-last',
      'übung',
      'übung/日本語.txt',
    ]);
    const byName = new Map(entries.map((e) => [e.name.replace(/\/$/, ''), e]));
    assert.equal(byName.get('bin/tool')!.mode, 0o751);
    assert.equal(byName.get('etc/app.conf')!.mode, 0o600);
    assert.equal(byName.get('locked')!.mode, 0o000);
    assert.equal(byName.get('empty')!.type, 'directory');
    assert.equal(byName.get('empty')!.mode, 0o700);
    assert.deepEqual([byName.get('abs-link')!.type, byName.get('abs-link')!.linkname], ['symlink', '/bin/tool']);
    assert.deepEqual([byName.get('bin/rel-link')!.type, byName.get('bin/rel-link')!.linkname], ['symlink', '../etc/app.conf']);
    assert.deepEqual([byName.get('etc/hard')!.type, byName.get('etc/hard')!.linkname], ['link', 'etc/app.conf']);
    assert.equal(byName.get('übung/日本語.txt')!.content, 'unicode\n');
    assert.equal(byName.get('bin/tool')!.content, '#!/bin/sh\necho hi\n');
    for (const e of entries) {
      assert.equal(e.mtime?.getTime(), 0, e.name);
      assert.equal(e.uid, process.getuid!(), e.name);
      assert.ok(!e.name.startsWith('/') && !e.name.startsWith('./'), e.name);
    }
    const owned = await folderLayer(root, scratchDir('berth-blobs-'), { owner: { uid: 1234, gid: 5678 } });
    for (const e of await entriesOf(gunzipSync(readFileSync(owned.layer.file)))) assert.deepEqual([e.uid, e.gid], [1234, 5678], e.name);
  } finally {
    server.close();
  }
});

test('a large file is streamed into the layer whole', async () => {
  const root = scratchDir('berth-tree-');
  const big = Buffer.alloc(12 * 1024 * 1024);
  for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE(Math.imul(i, 2654435761) >>> 0, i);
  writeFileSync(path.join(root, 'big.bin'), big);
  const { layer } = await folderLayer(root, scratchDir('berth-blobs-'));
  const [entry] = await entriesOf(gunzipSync(readFileSync(layer.file)));
  assert.equal(entry.size, big.length);
  assert.equal(layer.diffId, sha256(gunzipSync(readFileSync(layer.file))));
});

test('a folder that cannot be read is refused naming it', async () => {
  await assert.rejects(folderLayer('/nonexistent/berth-rootfs', scratchDir('berth-blobs-')), /cannot read \/nonexistent\/berth-rootfs into a layer: .*ENOENT/);
});
