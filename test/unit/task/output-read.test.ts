// What a refused read of an output tells the user: the files tar could not open, a folder the task replaced or removed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OutputReadRefused, outputCheckCommand, outputReadFailure, outputTarCommand } from '../../../src/task/output-read.js';

test("busybox tar's unreadable files are named below the output's folder, with the fix", () => {
  const err = outputReadFailure(
    'out',
    'build/out',
    1,
    "tar: can't open './secret': Permission denied\ntar: can't open './d/key': Permission denied\ntar: error exit delayed from previous errors\n",
  );
  assert.ok(err instanceof OutputReadRefused);
  assert.equal(
    err.message,
    "output `out`: the task left build/out/secret (Permission denied), build/out/d/key (Permission denied) unreadable to berth's outputs container: make them readable (chmod a+r) or remove them before the task ends",
  );
});

test("GNU tar's words name the file too", () => {
  const err = outputReadFailure('out', 'out', 2, 'tar: ./x: Cannot open: Permission denied\ntar: Exiting with failure status due to previous errors\n');
  assert.match(err.message, /the task left out\/x \(Permission denied\) unreadable .* make it readable \(chmod a\+r\) or remove it before the task ends$/);
});

test('any other end of tar says what tar said', () => {
  assert.equal(outputReadFailure('out', 'out', 1, 'tar: out of memory\n').message, 'output `out`: tar could not read out (exit 1): tar: out of memory');
});

test('a link in the place of the folder, a removed folder, a file in its place: each named, with the fix', () => {
  assert.equal(
    outputReadFailure('out', 'out', 91, '/etc\n').message,
    "output `out`: the task replaced its folder out with a link (out leads to /etc); berth does not follow it out of the task's working folder (a Concourse output is a volume, which a task cannot replace): write the output's files into out",
  );
  assert.match(outputReadFailure('out', 'out', 90, '').message, /^output `out`: the task removed its folder out \(.*\): write the output's files into out$/);
  assert.match(outputReadFailure('out', 'out', 92, '').message, /^output `out`: the task put a file in the place of its folder out: write/);
});

test('the read names the folder as `pwd -P` prints it, whatever task.yml wrote', () => {
  const command = outputTarCommand('/tmp/build/1234abcd/./deep//out/');
  assert.deepEqual(command.slice(0, 2), ['sh', '-c']);
  assert.equal(command.at(-1), '/tmp/build/1234abcd/deep/out');
});

test('the check of a served output runs the checks of a read, and reads nothing', () => {
  const read = outputTarCommand('/tmp/build/1234abcd/out');
  const check = outputCheckCommand('/tmp/build/1234abcd/out/');
  assert.equal(check.at(-1), read.at(-1));
  assert.equal(check[2].split('\n').slice(0, -1).join('\n'), read[2].split('\n').slice(0, -1).join('\n'), 'the same checks');
  assert.equal(check[2].split('\n').at(-1), 'exit 0');
  assert.doesNotMatch(check[2], /tar/);
});
