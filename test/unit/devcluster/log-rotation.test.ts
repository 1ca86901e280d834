// A container's log rotated as a kubelet rotates it: at containerLogMaxSize, looked at every containerLogCheckMs,
// four rotated files kept, the current file begun anew, and a follower given every record across rotations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContainerLog } from '../../../src/devcluster/node/container-log.js';

function withDir(body: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'berth-logrot-'));
  try {
    body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const lines = (from: number, to: number): Buffer => Buffer.from(Array.from({ length: to - from }, (_, i) => `${from + i}\n`).join(''));

test('a log past containerLogMaxSize is rotated at each look; four rotated files are kept; a follower sees every record', () =>
  withDir((dir) => {
    const file = join(dir, '0.log');
    const settings = { containerLogMaxBytes: 4096, containerLogCheckMs: 0 };
    const log = new ContainerLog(file, settings);
    let followed = 0;
    log.subscribe((block) => void (block && (followed += block.toString('latin1').split('\n').filter(Boolean).length)));
    for (let i = 0; i < 50; i++) log.write('stdout', lines(i * 100, (i + 1) * 100));
    log.close();
    assert.equal(followed, 5000, 'a follower missed records across rotations');
    const rotated = readdirSync(dir).filter((n) => n.startsWith('0.log.'));
    assert.equal(rotated.length, 4, rotated.join(' '));
    // the current file is what came after the last rotation: less than one look's worth
    assert.ok(statSync(file).size < 4096 + 100 * 46, String(statSync(file).size));
    // the last write made the file large enough to be rotated at once: the newest rotated file ends with it
    const newest = rotated.sort().at(-1)!;
    assert.match(readFileSync(join(dir, newest), 'latin1') + readFileSync(file, 'latin1'), / stdout F 4999\n$/);
  }));

test('no rotation before the next look, nor with containerLogMaxBytes 0', () =>
  withDir((dir) => {
    const later = new ContainerLog(join(dir, 'a.log'), { containerLogMaxBytes: 1024, containerLogCheckMs: 60_000 });
    const never = new ContainerLog(join(dir, 'b.log'), { containerLogMaxBytes: 0, containerLogCheckMs: 0 });
    for (let i = 0; i < 20; i++) {
      later.write('stdout', lines(i * 100, (i + 1) * 100));
      never.write('stdout', lines(i * 100, (i + 1) * 100));
    }
    later.close();
    never.close();
    assert.deepEqual(readdirSync(dir).sort(), ['a.log', 'b.log']);
  }));
