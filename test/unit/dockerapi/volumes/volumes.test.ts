// Anonymous volumes (`-v /path`): one per path the create's own mounts do not already cover, as dockerd makes them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { anonymousVolumesOf, dockerMounts, refuseDriverSettings } from '../../../../src/dockerapi/volumes/volumes.js';
import type { ContainerRecord } from '../../../../src/dockerapi/model.js';

const none = { volumes: [], anonymous: [] };

test('a path covered by a bind, mount or tmpfs of the same create gets no anonymous volume', () => {
  const body = { Image: 'i', Volumes: { '/data': {}, '/cache/': {}, '/scratch': {}, '/free': {} } };
  const mounted = [
    { claim: 'named', target: '/data', readOnly: false },
    { claim: 'other', target: '/cache', readOnly: true },
    { target: '/scratch/', readOnly: false, memory: true },
  ];
  const made = anonymousVolumesOf(body, { volumes: mounted, anonymous: [] });
  assert.deepEqual(
    made.map((v) => v.target),
    ['/free'],
  );
  assert.match(made[0]!.name, /^[0-9a-f]{64}$/, 'named as dockerd names them');
  assert.notEqual(anonymousVolumesOf(body, none)[0]!.name, anonymousVolumesOf(body, none)[0]!.name, 'a new name each time');
});

test('a volume mount without a source is an anonymous volume (read-only kept), and covers the same path of Volumes', () => {
  const body = { Image: 'i', Volumes: { '/data': {}, '/other': {} } };
  const made = anonymousVolumesOf(body, { volumes: [], anonymous: [{ target: '/data', readOnly: true }] });
  assert.deepEqual(
    made.map((v) => [v.target, v.readOnly ?? false]),
    [
      ['/data', true],
      ['/other', false],
    ],
  );
  assert.match(made[0]!.name, /^[0-9a-f]{64}$/);
});

test("a relative path is refused in docker's words", () => {
  assert.throws(
    () => anonymousVolumesOf({ Image: 'i', Volumes: { data: {} } }, none),
    /invalid volume path data: an anonymous volume \(-v \/path\) needs an absolute path/,
  );
});

test('a volume driver other than local, or driver options, are refused saying volumes are claims, never dropped', () => {
  const flags = { driver: '-d (--driver)', options: '-o (--opt)' };
  assert.doesNotThrow(() => refuseDriverSettings(undefined, undefined, flags));
  assert.doesNotThrow(() => refuseDriverSettings('local', {}, flags), 'what the docker CLI sends without -d and -o');
  assert.doesNotThrow(() => refuseDriverSettings('', null, flags));
  assert.throws(
    () => refuseDriverSettings('nfs', {}, flags),
    /volume driver "nfs" is not supported: berth's volumes are PersistentVolumeClaims of the cluster's default StorageClass and take no driver or options; leave out -d \(--driver\)/,
  );
  assert.throws(
    () => refuseDriverSettings('local', { type: 'tmpfs', device: 'tmpfs' }, flags),
    /volume driver options are not supported \(type=tmpfs, device=tmpfs\): .*; leave out -o \(--opt\)/,
  );
  assert.throws(
    () => refuseDriverSettings('local', { o: 'size=1g' }, flags),
    (err: { status?: number }) => err.status === 400,
  );
});

test("inspect's Mounts: each volume, bind of a volume, --mount and anonymous volume as dockerd lists it; --tmpfs is none", () => {
  const c = {
    body: {
      Image: 'i',
      HostConfig: {
        Binds: ['data:/data/', 'ro-data:/ro:ro,z'],
        Mounts: [
          { Type: 'volume', Source: 'cache', Target: '/cache', ReadOnly: true },
          { Type: 'tmpfs', Target: '/run/t' },
          { Type: 'volume', Target: '/anon-ro', ReadOnly: true },
        ],
        Tmpfs: { '/tmp': 'size=1m' },
      },
    },
    anonymousVolumes: [
      { name: 'f'.repeat(64), target: '/anon' },
      { name: 'e'.repeat(64), target: '/anon-ro', readOnly: true },
    ],
  } as unknown as ContainerRecord;
  const volume = { Type: 'volume', Driver: 'local', Propagation: '' };
  assert.deepEqual(
    dockerMounts(c, (name) => `pvc://${name}-claim`),
    [
      { ...volume, Name: 'data', Source: 'pvc://data-claim', Destination: '/data', Mode: 'z', RW: true },
      { ...volume, Name: 'ro-data', Source: 'pvc://ro-data-claim', Destination: '/ro', Mode: 'ro,z', RW: false },
      { ...volume, Name: 'cache', Source: 'pvc://cache-claim', Destination: '/cache', Mode: '', RW: false },
      { Type: 'tmpfs', Source: '', Destination: '/run/t', Mode: '', RW: true, Propagation: '' },
      { ...volume, Name: 'f'.repeat(64), Source: `pvc://${'f'.repeat(64)}-claim`, Destination: '/anon', Mode: '', RW: true },
      { ...volume, Name: 'e'.repeat(64), Source: `pvc://${'e'.repeat(64)}-claim`, Destination: '/anon-ro', Mode: '', RW: false },
    ],
  );
});
