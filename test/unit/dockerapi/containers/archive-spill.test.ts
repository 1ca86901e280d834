// Large archives kept for a restart go to a private folder on disk, and go away with their container, at
// shutdown, and (for a berth serve that was killed) at the next one's first spill.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { Readable } from 'node:stream';
import { ArchiveSpill, tarPieces, type KeptTar } from '../../../../src/dockerapi/containers/archive-spill.js';
import { heldTar } from '../../../../src/runtime/files.js';
import { scratchDir } from '../../../util/scratch.js';

function scratch(): string {
  return scratchDir('spill-test-');
}

const bytesOf = (tar: KeptTar): Promise<Buffer> => buffer(Readable.from(tarPieces(tar)));

test('a large archive moves to a 0600 file in a 0700 folder and reads back the same; a small one stays in memory', async () => {
  const root = scratch();
  try {
    const spill = new ArchiveSpill(root, 1024);
    const data = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
    const large = { tar: { pieces: [data.subarray(0, 1000), data.subarray(1000)], length: data.length } as KeptTar };
    const small = { tar: heldTar(Buffer.from('tiny')) as KeptTar };
    await spill.spill(large);
    await spill.spill(small);
    assert.ok('file' in large.tar, 'the large one is on disk');
    assert.ok('pieces' in small.tar, 'the small one is not');
    const file = (large.tar as { file: string }).file;
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(file, '..')).mode & 0o777, 0o700);
    assert.ok((await bytesOf(large.tar)).equals(data));
    spill.drop([large]);
    assert.equal(existsSync(file), false, 'gone with its container');
    spill.close();
    assert.deepEqual(readdirSync(root), [], 'the folder is gone at shutdown');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('an archive dropped while its file is written leaves no file', async () => {
  const root = scratch();
  try {
    const spill = new ArchiveSpill(root, 1);
    const entry = { tar: heldTar(Buffer.alloc(4096, 1)) as KeptTar };
    const writing = spill.spill(entry);
    spill.drop([entry]);
    await writing;
    assert.ok('pieces' in entry.tar);
    const [folder] = readdirSync(root);
    assert.deepEqual(readdirSync(join(root, folder!)), []);
    spill.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a killed berth serve's folder is removed by the next one; a running one's is left", async () => {
  const root = scratch();
  try {
    const ended = spawnSync(process.execPath, ['-e', '0']).pid!;
    mkdirSync(join(root, `berth-serve-${ended}-abc`));
    mkdirSync(join(root, `berth-serve-${process.ppid}-def`));
    const spill = new ArchiveSpill(root, 1);
    await spill.spill({ tar: heldTar(Buffer.alloc(10)) });
    const left = readdirSync(root);
    assert.ok(!left.includes(`berth-serve-${ended}-abc`), `${left.join(' ')}`);
    assert.ok(left.includes(`berth-serve-${process.ppid}-def`));
    spill.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
