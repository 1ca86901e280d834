import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addedLines, forgetHostsFile, writeHostsFile } from '../../../src/devcluster/node/hosts.js';
import { scratchDir } from '../../util/scratch.js';

test("a rewritten hosts file keeps what the pod's processes appended, in place", () => {
  const dir = scratchDir('hosts-');
  const path = join(dir, 'etc-hosts');
  try {
    writeHostsFile(path, '127.0.0.1\tlocalhost\n10.0.0.1\tsvc-a\n');
    const inode = statSync(path).ino;
    writeFileSync(path, '10.0.0.9\tlater later2\n', { flag: 'a' }); // as `berth serve` announces a later member
    writeHostsFile(path, '127.0.0.1\tlocalhost\n10.0.0.1\tsvc-a\n10.0.0.2\tsvc-b\n');
    assert.equal(readFileSync(path, 'utf8'), '127.0.0.1\tlocalhost\n10.0.0.1\tsvc-a\n10.0.0.2\tsvc-b\n10.0.0.9\tlater later2\n');
    assert.equal(statSync(path).ino, inode, 'the same inode: the bind mount sees it');
    // a Service that went away goes; the appended line stays, once
    writeHostsFile(path, '127.0.0.1\tlocalhost\n10.0.0.2\tsvc-b\n');
    assert.equal(readFileSync(path, 'utf8'), '127.0.0.1\tlocalhost\n10.0.0.2\tsvc-b\n10.0.0.9\tlater later2\n');
  } finally {
    forgetHostsFile(path);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('added lines: none without a previous write; blank lines are not kept', () => {
  assert.equal(addedLines('a\nb\n', undefined), '');
  assert.equal(addedLines(undefined, 'a\n'), '');
  assert.equal(addedLines('a\n\nx\n', 'a\n'), 'x\n');
});
