import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathKindInRoot } from '../../../src/devcluster/node/image-files.js';
import { isOnMount } from '../../../src/devcluster/node/podman-args.js';

test('a path in an image root: directories, missing paths, files, and symlinks followed inside the root', () => {
  const root = mkdtempSync(join(tmpdir(), 'berth-image-root-'));
  try {
    mkdirSync(join(root, 'usr/share'), { recursive: true });
    mkdirSync(join(root, 'run'));
    writeFileSync(join(root, 'usr/file'), '');
    symlinkSync('/run', join(root, 'usr/abs'));
    symlinkSync('../usr/share', join(root, 'run/rel'));
    symlinkSync('loop', join(root, 'loop'));
    assert.equal(pathKindInRoot(root, '/'), 'directory');
    assert.equal(pathKindInRoot(root, '/usr/share/'), 'directory');
    assert.equal(pathKindInRoot(root, '/no/such/dir'), 'missing');
    assert.equal(pathKindInRoot(root, '/usr/share/none'), 'missing');
    assert.equal(pathKindInRoot(root, '/usr/file'), 'other');
    assert.equal(pathKindInRoot(root, '/usr/file/below'), 'other');
    assert.equal(pathKindInRoot(root, '/usr/abs'), 'directory', 'an absolute link resolves in the root, not on the host');
    assert.equal(pathKindInRoot(root, '/usr/abs/rel'), 'directory');
    assert.equal(pathKindInRoot(root, '/usr/abs/none'), 'missing');
    assert.equal(pathKindInRoot(root, '/../../usr'), 'directory', '.. stops at the root');
    assert.equal(pathKindInRoot(root, '/loop'), 'other');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a path on a mount: the destination itself or below it, not a sibling with the same prefix', () => {
  const mounts = [{ hostPath: '/h', containerPath: '/data', readOnly: false }, { hostPath: '/e', containerPath: '/etc/hosts', readOnly: false }];
  assert.equal(isOnMount('/data', mounts), true);
  assert.equal(isOnMount('/data/sub/dir', mounts), true);
  assert.equal(isOnMount('/data/', mounts), true);
  assert.equal(isOnMount('/database', mounts), false);
  assert.equal(isOnMount('/etc', mounts), false);
  assert.equal(isOnMount('/no/such/dir', mounts), false);
});
