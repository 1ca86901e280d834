// `docker run --platform`: read as containerd reads it, and the node selector that puts the pod on such a node.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePlatform, platformSelector } from '../../../../src/dockerapi/containers/platform.js';

test('os/arch[/variant], an OS or an architecture alone, and the names people type for architectures', () => {
  assert.deepEqual(parsePlatform('linux/arm64'), { os: 'linux', arch: 'arm64' });
  assert.deepEqual(parsePlatform('linux/arm/v7'), { os: 'linux', arch: 'arm' }, 'a node has no variant label');
  assert.deepEqual(parsePlatform('linux/x86_64'), { os: 'linux', arch: 'amd64' });
  assert.deepEqual(parsePlatform('aarch64'), { os: 'linux', arch: 'arm64' });
  assert.deepEqual(parsePlatform('windows'), { os: 'windows' });
  assert.deepEqual(parsePlatform('Linux/AMD64'), { os: 'linux', arch: 'amd64' });
  assert.equal(parsePlatform(''), undefined);
  assert.equal(parsePlatform(null), undefined);
});

test('what names no platform is refused', () => {
  assert.throws(() => parsePlatform('darwin/arm64'), /"darwin\/arm64": unknown operating system "darwin"/);
  assert.throws(() => parsePlatform('linux/arm64/v8/x'), /unknown operating system or architecture/);
  assert.throws(
    () => parsePlatform('linux/'),
    (err: { status?: number }) => err.status === 400,
  );
});

test('the pod goes to a node of the platform: the labels every kubelet sets', () => {
  assert.deepEqual(platformSelector({ os: 'linux', arch: 'arm64' }), { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'arm64' });
  assert.deepEqual(platformSelector({ os: 'linux' }), { 'kubernetes.io/os': 'linux' });
});
