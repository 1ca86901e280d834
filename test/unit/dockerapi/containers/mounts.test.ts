// A create's mounts as pod volumes, refused at create as dockerd refuses them, tmpfs options applied or warned about.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planMounts } from '../../../../src/dockerapi/containers/mounts.js';
import { mountVolumeLabels } from '../../../../src/dockerapi/volumes/volumes.js';

const plan = (HostConfig: Record<string, unknown>) => planMounts({ Image: 'i', HostConfig } as never);

test('named volumes, binds with modes, tmpfs: the pod volumes they become', () => {
  const { volumes, warnings } = plan({
    Binds: ['data:/data:ro,z', 'cache:/cache'],
    Mounts: [
      { Type: 'volume', Source: 'm', Target: '/m', ReadOnly: true },
      { Type: 'tmpfs', Target: '/t', ReadOnly: true },
    ],
    Tmpfs: { '/scratch': 'rw,size=10m,mode=1777' },
  });
  assert.deepEqual(volumes, [
    { claim: 'data', target: '/data', readOnly: true },
    { claim: 'cache', target: '/cache', readOnly: false },
    { claim: 'm', target: '/m', readOnly: true },
    { target: '/t', readOnly: true, memory: true },
    { target: '/scratch', readOnly: false, memory: true, sizeLimit: '10Mi' },
  ]);
  assert.deepEqual(warnings, []);
});

test('a volume mount without a source is an anonymous volume, as dockerd and docker compose make it', () => {
  const { volumes, anonymous } = plan({
    Mounts: [
      { Type: 'volume', Target: '/data' },
      { Type: 'volume', Target: '/ro', ReadOnly: true },
    ],
  });
  assert.deepEqual(volumes, []);
  assert.deepEqual(anonymous, [
    { target: '/data', readOnly: false },
    { target: '/ro', readOnly: true },
  ]);
  assert.throws(() => plan({ Mounts: [{ Type: 'volume', Target: '/data' }], Binds: ['v:/data'] }), /Duplicate mount point: \/data/);
  assert.throws(() => plan({ Mounts: [{ Type: 'volume', Target: 'rel' }] }), /invalid mount config for type "volume": the target rel must be an absolute path/);
});

test("a bind of a container path alone is an anonymous volume, as dockerd parses docker-py's volumes=['/data']", () => {
  const { volumes, anonymous } = plan({ Binds: ['/data', 'v:/named'] });
  assert.deepEqual(volumes, [{ claim: 'v', target: '/named', readOnly: false }]);
  assert.deepEqual(anonymous, [{ target: '/data', readOnly: false }]);
  assert.throws(() => plan({ Binds: ['data'] }), /invalid volume specification: 'data'/);
  assert.throws(() => plan({ Binds: ['/data', 'v:/data'] }), /Duplicate mount point: \/data/);
});

test('tmpfs: ro is kept, what an emptyDir cannot do is a warning, an unknown option is refused', () => {
  const { volumes, warnings } = plan({ Tmpfs: { '/t': 'ro', '/x': 'size=1g,noexec,uid=1000' } });
  assert.equal(volumes[0]!.readOnly, true);
  assert.equal(volumes[1]!.sizeLimit, '1Gi');
  assert.match(warnings.join('\n'), /tmpfs \/x: noexec,uid=1000 not applied/);
  assert.throws(() => plan({ Tmpfs: { '/t': 'bogusopt=1' } }), /invalid tmpfs option \["bogusopt=1"\] for \/t/);
  assert.throws(() => plan({ Tmpfs: { '/t': 'size=lots' } }), /invalid tmpfs option size=lots/);
});

test("refused at create in dockerd's words: bad volume names, modes, duplicate paths, host paths", () => {
  assert.throws(() => plan({ Binds: ['bad name:/d'] }), /"bad name" includes invalid characters for a local volume name/);
  assert.throws(() => plan({ Mounts: [{ Type: 'volume', Source: 'é', Target: '/d' }] }), /includes invalid characters/);
  assert.throws(() => plan({ Binds: ['v:/x:zz'] }), /invalid mode: zz/);
  assert.throws(() => plan({ Binds: ['a:/x', 'b:/x/'] }), /Duplicate mount point: \/x/);
  assert.throws(() => plan({ Binds: ['a:/x'], Tmpfs: { '/x': '' } }), /Duplicate mount point: \/x/);
  assert.throws(() => plan({ Binds: ['/etc:/x'] }), /bind mount of host path \/etc is not supported/);
  assert.throws(() => plan({ Mounts: [{ Type: 'bind', Source: '/etc', Target: '/x' }] }), /mount type bind of \/etc is not supported/);
});

test("ShmSize: /dev/shm as a memory emptyDir of that size, unless a mount of the create is there or the IPC namespace is not the container's own", () => {
  assert.deepEqual(plan({ ShmSize: 2 * 1024 ** 3 }).volumes, [{ target: '/dev/shm', readOnly: false, memory: true, sizeLimit: '2147483648' }]);
  assert.deepEqual(plan({ ShmSize: 0 }).volumes, [], "0 is the runtime's default /dev/shm");
  assert.deepEqual(plan({ ShmSize: 1 << 20, Tmpfs: { '/dev/shm': 'size=8m' } }).volumes, [
    { target: '/dev/shm', readOnly: false, memory: true, sizeLimit: '8Mi' },
  ]);
  assert.deepEqual(plan({ ShmSize: 1 << 20, IpcMode: 'host' }).volumes, []);
  assert.deepEqual(plan({ ShmSize: 1 << 20, IpcMode: 'none' }).volumes, []);
  assert.throws(() => plan({ ShmSize: -1 }), /SHM size can not be less than 0/);
});

test('--mount type=tmpfs: tmpfs-size is the sizeLimit, a tmpfs-mode an emptyDir cannot take is a warning, as for --tmpfs', () => {
  const mount = (TmpfsOptions: Record<string, unknown>) => plan({ Mounts: [{ Type: 'tmpfs', Target: '/t', TmpfsOptions }] });
  assert.deepEqual(mount({ SizeBytes: 1048576 }).volumes, [{ target: '/t', readOnly: false, memory: true, sizeLimit: '1048576' }]);
  assert.deepEqual(mount({ SizeBytes: 0, Mode: 0o1777 }), { volumes: [{ target: '/t', readOnly: false, memory: true }], anonymous: [], warnings: [] });
  assert.match(mount({ Mode: 0o1770 }).warnings.join(), /tmpfs \/t: mode=1770 not applied/);
  assert.match(mount({ Options: [['noexec']] }).warnings.join(), /tmpfs \/t: noexec not applied/);
  assert.throws(() => mount({ SizeBytes: -1 }), /invalid tmpfs size -1/);
});

test("a volume mount's labels are those of the volume it names, for dockerd makes it with them", () => {
  const labels = mountVolumeLabels({
    HostConfig: {
      Mounts: [
        { Type: 'volume', Source: 'v', Target: '/a', VolumeOptions: { Labels: { k: '1' } } },
        { Type: 'volume', Target: '/anon', VolumeOptions: { Labels: { x: 'y' } } },
        { Type: 'tmpfs', Target: '/t' },
      ],
    },
  });
  assert.deepEqual([...labels], [['v', { k: '1' }]]);
});
