// conmon's exit files, watched as the node watches them: the code once the file holds one, also when it was
// written before the container's id was known; nothing for other ids, empty files or after the watch stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExitFiles, podmanExitsDir } from '../../../src/devcluster/node/exit-files.js';
import { scratchDir } from '../../util/scratch.js';

function exitOf(files: ExitFiles, id: string): Promise<number> {
  return new Promise((resolve) => files.onExit(id, resolve));
}

test('the code written for a container is reported once; other ids and empty files are not', async () => {
  const dir = scratchDir('berth-exits-');
  const files = new ExitFiles(dir);
  try {
    const seen: number[] = [];
    files.onExit('other', (c) => seen.push(c));
    const code = exitOf(files, 'abc');
    writeFileSync(join(dir, 'abc'), ''); // conmon may be seen between creating the file and writing it
    writeFileSync(join(dir, 'abc'), '137');
    assert.equal(await code, 137);
    writeFileSync(join(dir, 'abc'), '0'); // a second change of the same file is not a second exit
    const later = exitOf(files, 'def');
    writeFileSync(join(dir, 'def'), '3\n');
    assert.equal(await later, 3);
    assert.deepEqual(seen, []);
  } finally {
    files.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a file written before the id was known is read when the id is registered', async () => {
  const dir = scratchDir('berth-exits-');
  const files = new ExitFiles(dir);
  try {
    writeFileSync(join(dir, 'early'), '42');
    assert.equal(await exitOf(files, 'early'), 42);
  } finally {
    files.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without a directory nothing is watched and nothing is reported; the exits dir is found only where it exists', () => {
  const files = new ExitFiles(undefined);
  let called = false;
  files.onExit('x', () => (called = true))();
  assert.equal(called, false);
  const runtime = scratchDir('berth-xdg-');
  try {
    assert.equal(podmanExitsDir({ XDG_RUNTIME_DIR: runtime }, 1000), undefined);
    mkdirSync(join(runtime, 'libpod/tmp/exits'), { recursive: true });
    assert.equal(podmanExitsDir({ XDG_RUNTIME_DIR: runtime }, 1000), join(runtime, 'libpod/tmp/exits'));
    assert.equal(podmanExitsDir({}, 1000), undefined);
  } finally {
    rmSync(runtime, { recursive: true, force: true });
  }
});
