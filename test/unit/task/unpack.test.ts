// Outputs unpacked as they stream: every kind of entry, a cut archive refused, a finished folder merged into one already there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pack } from 'tar-stream';
import { moveInto, unpackStream, unpackTar } from '../../../src/task/unpack.js';

function tarOf(
  entries: Array<{ name: string; type?: 'file' | 'directory' | 'symlink' | 'link'; body?: string; linkname?: string; mode?: number }>,
): Promise<Buffer> {
  const p = pack();
  for (const e of entries)
    p.entry({ name: e.name, type: e.type ?? 'file', linkname: e.linkname, mode: e.mode ?? (e.type === 'directory' ? 0o755 : 0o644) }, e.body ?? '');
  p.finalize();
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    p.on('data', (c: unknown) => void chunks.push(c as Buffer));
    p.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

const temp = (): string => mkdtempSync(join(tmpdir(), 'berth-unpack-'));

test('files (with their modes), folders, symlinks and hard links', async () => {
  const dir = temp();
  try {
    await unpackTar(
      await tarOf([
        { name: './d', type: 'directory' },
        { name: './d/a', body: 'one', mode: 0o755 },
        { name: './b', type: 'link', linkname: './d/a' },
        { name: './s', type: 'symlink', linkname: 'd/a' },
      ]),
      join(dir, 'out'),
    );
    assert.equal(readFileSync(join(dir, 'out/d/a'), 'utf8'), 'one');
    assert.equal(lstatSync(join(dir, 'out/d/a')).mode & 0o111, 0o111);
    assert.equal(lstatSync(join(dir, 'out/b')).ino, lstatSync(join(dir, 'out/d/a')).ino);
    assert.equal(readlinkSync(join(dir, 'out/s')), 'd/a');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a cut archive is refused; entries may not leave the folder', async () => {
  const dir = temp();
  try {
    const whole = await tarOf([{ name: 'a', body: 'x'.repeat(5000) }]);
    const stream = new PassThrough();
    const unpacked = unpackStream(stream, join(dir, 'cut'));
    stream.end(whole.subarray(0, 1024));
    await assert.rejects(unpacked, /Unexpected end of data/);
    await assert.rejects(unpackTar(await tarOf([{ name: '../escape', body: 'x' }]), join(dir, 'o')), /outside/);
    await assert.rejects(unpackTar(await tarOf([{ name: 'l', type: 'link', linkname: '../../etc/passwd' }]), join(dir, 'o2')), /outside/);
    assert.equal(existsSync(join(dir, 'escape')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('moveInto: a new folder is renamed into place; into one already there, names are replaced, folders merged, the rest kept', async () => {
  const dir = temp();
  try {
    mkdirSync(join(dir, 'from/sub'), { recursive: true });
    writeFileSync(join(dir, 'from/sub/new'), 'new');
    writeFileSync(join(dir, 'from/f'), 'from');
    writeFileSync(join(dir, 'from/was-dir'), 'now a file');
    mkdirSync(join(dir, 'to/sub'), { recursive: true });
    mkdirSync(join(dir, 'to/was-dir/deep'), { recursive: true });
    writeFileSync(join(dir, 'to/sub/old'), 'old');
    writeFileSync(join(dir, 'to/f'), 'to');
    writeFileSync(join(dir, 'to/keep'), 'keep');
    await moveInto(join(dir, 'from'), join(dir, 'to'));
    assert.equal(readFileSync(join(dir, 'to/f'), 'utf8'), 'from');
    assert.equal(readFileSync(join(dir, 'to/sub/new'), 'utf8'), 'new');
    assert.equal(readFileSync(join(dir, 'to/sub/old'), 'utf8'), 'old');
    assert.equal(readFileSync(join(dir, 'to/keep'), 'utf8'), 'keep');
    assert.equal(readFileSync(join(dir, 'to/was-dir'), 'utf8'), 'now a file');
    assert.equal(existsSync(join(dir, 'from')), false);
    mkdirSync(join(dir, 'again'));
    writeFileSync(join(dir, 'again/x'), 'x');
    await moveInto(join(dir, 'again'), join(dir, 'made/below'));
    assert.equal(readFileSync(join(dir, 'made/below/x'), 'utf8'), 'x');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
