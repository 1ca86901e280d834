// Anonymous volumes (`-v /path`): one per path the create's own mounts do not already cover, as dockerd makes them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { anonymousVolumesOf } from '../../../src/dockerapi/volumes.js';

test('a path covered by a bind, mount or tmpfs of the same create gets no anonymous volume', () => {
  const body = { Image: 'i', Volumes: { '/data': {}, '/cache/': {}, '/scratch': {}, '/free': {} } };
  const mounted = [
    { claim: 'named', target: '/data', readOnly: false },
    { claim: 'other', target: '/cache', readOnly: true },
    { target: '/scratch/', readOnly: false, memory: true },
  ];
  const made = anonymousVolumesOf(body, mounted);
  assert.deepEqual(made.map((v) => v.target), ['/free']);
  assert.match(made[0]!.name, /^[0-9a-f]{64}$/, 'named as dockerd names them');
  assert.notEqual(anonymousVolumesOf(body, [])[0]!.name, anonymousVolumesOf(body, [])[0]!.name, 'a new name each time');
});

test('a relative path is refused in docker\'s words', () => {
  assert.throws(() => anonymousVolumesOf({ Image: 'i', Volumes: { data: {} } }, []), /invalid volume path data: an anonymous volume \(-v \/path\) needs an absolute path/);
});
