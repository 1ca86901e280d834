// The stat and tar scripts berth runs in containers, run here by the local /bin/sh, and their parser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseStatLines, statArgv, tarArgv } from '../../../../src/dockerapi/containers/archive-exec.js';
import { padRecords, recordPadding } from '../../../../src/runtime/files.js';
import { scratchDir } from '../../../util/scratch.js';

function run(argv: string[]): { code: number | null; stdout: Buffer; stderr: string } {
  const r = spawnSync(argv[0], argv.slice(1));
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}

test('stat script and parser: file, symlink, missing path', () => {
  const dir = scratchDir('berth-archive-exec-');
  try {
    writeFileSync(join(dir, 'f.txt'), 'hello');
    symlinkSync('f.txt', join(dir, 'link'));
    const file = run(statArgv(join(dir, 'f.txt')));
    assert.equal(file.code, 0, file.stderr);
    const st = parseStatLines(file.stdout.toString('utf8'), join(dir, 'f.txt'));
    assert.equal(st?.name, 'f.txt');
    assert.equal(st?.size, 5);
    assert.equal(st!.mode & 0o170000, 0o100000, 'a regular file');
    assert.equal(st?.linkTarget, '');
    const link = parseStatLines(run(statArgv(join(dir, 'link'))).stdout.toString('utf8'), join(dir, 'link'));
    assert.equal(link?.linkTarget, 'f.txt');
    assert.equal(link!.mode & 0o170000, 0o120000, 'a symlink, not followed');
    const missing = run(statArgv(join(dir, 'nope')));
    assert.notEqual(missing.code, 0);
    assert.equal(parseStatLines(missing.stdout.toString('utf8'), join(dir, 'nope')), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('tar script: stat lines on stderr, then the tar of the base name on stdout', () => {
  const dir = scratchDir('berth-archive-exec-');
  try {
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'a.txt'), 'abc');
    const r = run(tarArgv(`${join(dir, 'sub')}/`));
    assert.equal(r.code, 0, r.stderr);
    const st = parseStatLines(r.stderr, join(dir, 'sub'));
    assert.equal(st?.name, 'sub');
    assert.equal(st!.mode & 0o170000, 0o040000, 'a directory');
    const names = spawnSync('tar', ['-t', '-f', '-'], { input: r.stdout }).stdout.toString('utf8').split('\n').filter(Boolean);
    assert.deepEqual(names.sort(), ['sub/', 'sub/a.txt']);
    const missing = run(tarArgv(join(dir, 'nope')));
    assert.notEqual(missing.code, 0);
    assert.equal(missing.stdout.length, 0, 'no tar when the stat failed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('parser waits for whole lines', () => {
  assert.equal(parseStatLines('berth-stat 5 81a4 1700000000\nberth-link ', '/x'), undefined);
  assert.equal(parseStatLines('berth-stat 5 81a4 17000', '/x'), undefined);
  assert.deepEqual(parseStatLines('noise\nberth-stat 5 81a4 1700000000\nberth-link \n', '/a/x'), {
    name: 'x',
    size: 5,
    mode: 0o100644,
    mtime: '2023-11-14T22:13:20.000Z',
    linkTarget: '',
  });
});

test('record padding completes the last 10240-byte record, sent apart or joined', () => {
  assert.equal(recordPadding(10240).length, 0);
  assert.equal(recordPadding(1).length, 10239);
  assert.equal(padRecords(Buffer.alloc(512, 1)).length, 10240);
});
