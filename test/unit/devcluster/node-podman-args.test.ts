import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containerCreateArgs, podCreateArgs, podmanPodName } from '../../../src/devcluster/node/podman-args.js';
import { CRI_DEFAULT_CAPABILITIES, securitySettings } from '../../../src/devcluster/node/security.js';
import { ConfigError } from '../../../src/devcluster/node/config-error.js';
import { DOCKER_DEFAULT_CAPABILITIES } from '../../../src/dockerapi/capabilities.js';

const pod = (spec: any = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec });

test('pod create: hostname, labels, own hosts file, a /dev/shm of 64 MiB, and no network when isolated', () => {
  const args = podCreateArgs({ name: 'n', infraName: 'n-infra', hostname: 'p', labels: { a: 'b' }, isolated: true });
  assert.deepEqual(args, ['pod', 'create', '--name', 'n', '--infra-name', 'n-infra', '--hostname', 'p', '--no-hosts', '--label', 'a=b', '--shm-size', '67108864', '--network', 'none']);
  assert.deepEqual(podCreateArgs({ name: 'n', infraName: 'i', hostname: 'h', labels: {}, isolated: false }).slice(-2), ['--network', 'podman']);
  assert.deepEqual(podCreateArgs({ name: 'n', infraName: 'i', hostname: 'h', labels: {}, isolated: false, hostIPC: true }).slice(-4), ['--share', 'net,uts', '--network', 'podman'], 'hostIPC: the sandbox keeps no IPC namespace');
});

test('container create maps command, args, env, security, resources and mounts', () => {
  const security = securitySettings(pod(), { name: 'c', securityContext: { runAsUser: 1000, runAsGroup: 2000, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] } } }, '');
  const args = containerCreateArgs({
    podName: 'pp',
    name: 'pp-c-0',
    labels: { l: 'v' },
    image: 'img:1',
    command: ['sh', '-c'],
    args: ['echo hi'],
    env: [['A', 'x=y']],
    workingDir: '/w',
    security,
    stdin: true,
    tty: false,
    memoryBytes: 64 * 1024 * 1024,
    cpus: 0.5,
    mounts: [{ hostPath: '/h', containerPath: '/c', readOnly: true }],
  });
  const joined = args.join(' ');
  assert.ok(joined.startsWith('create --pod pp --name pp-c-0 --pull never --log-driver passthrough --label l=v'));
  for (const part of ['--entrypoint ["sh","-c"]', '--env A=x=y', '--workdir /w', '--user 1000:2000', '--read-only --read-only-tmpfs=false', '--security-opt no-new-privileges', '--cap-drop CHOWN', '--interactive', `--memory ${64 * 1024 * 1024}`, '--cpus 0.5', '--volume /h:/c:ro']) {
    assert.ok(joined.includes(part), part);
  }
  assert.ok(!joined.includes('--tty'));
  assert.ok(!joined.includes('--ipc'));
  assert.ok(containerCreateArgs({ podName: 'pp', name: 'n', labels: {}, image: 'i', env: [], security, stdin: false, tty: false, mounts: [], hostIPC: true }).join(' ').includes('--ipc host'));
  assert.deepEqual(args.slice(-2), ['img:1', 'echo hi']);
});

test('capabilities as containerd gives them: its default set (not podman\'s) unless dropped, ALL first, then single adds and drops', () => {
  const caps = (capabilities?: object, privileged = false) => {
    const s = securitySettings(pod(), { name: 'c', securityContext: { privileged, ...(capabilities ? { capabilities } : {}) } }, '');
    return { add: s.capAdd, drop: s.capDrop };
  };
  assert.deepEqual(caps(), { add: CRI_DEFAULT_CAPABILITIES, drop: ['ALL'] }, 'no list: containerd\'s default set, with NET_RAW, MKNOD and AUDIT_WRITE that podman\'s lacks');
  assert.ok(CRI_DEFAULT_CAPABILITIES.includes('NET_RAW') && CRI_DEFAULT_CAPABILITIES.includes('SYS_CHROOT'));
  assert.deepEqual(caps({ drop: ['ALL'], add: ['CHOWN', 'NET_RAW'] }), { add: ['CHOWN', 'NET_RAW'], drop: ['ALL'] });
  assert.deepEqual(caps({ drop: ['ALL'] }), { add: [], drop: ['ALL'] });
  assert.deepEqual(caps({ add: ['NET_ADMIN'], drop: ['CAP_CHOWN'] }), { add: [...CRI_DEFAULT_CAPABILITIES.filter((c) => c !== 'CHOWN'), 'NET_ADMIN'], drop: ['ALL'] });
  assert.deepEqual(caps({ add: ['NET_ADMIN'], drop: ['NET_ADMIN'] }).add.includes('NET_ADMIN'), false, 'a single drop wins over a single add');
  assert.deepEqual(caps({ add: ['ALL'], drop: ['NET_RAW'] }), { add: ['ALL'], drop: ['NET_RAW'] });
  assert.deepEqual(caps({ add: ['ALL', 'CHOWN'], drop: ['ALL'] }), { add: ['CHOWN'], drop: ['ALL'] }, 'ALL added then ALL dropped, then the single add');
  assert.deepEqual(caps({ drop: ['ALL'] }, true), { add: [], drop: [] }, 'privileged: no list');
});

test('the dev cluster\'s containerd default set is dockerd\'s, the one berth serve gives (two copies: the dev cluster imports nothing of berth)', () => {
  assert.deepEqual([...CRI_DEFAULT_CAPABILITIES].sort(), [...DOCKER_DEFAULT_CAPABILITIES].sort());
});

test('a non-root user gets no --cap-add (podman would make it ambient, so effective): only drops from the default set', () => {
  const caps = (securityContext: object, imageUser = '') => {
    const s = securitySettings(pod(), { name: 'c', securityContext }, imageUser);
    return { add: s.capAdd, drop: s.capDrop };
  };
  assert.deepEqual(caps({ runAsUser: 1000 }), { add: [], drop: [] });
  assert.deepEqual(caps({}, 'nobody'), { add: [], drop: [] }, 'the image\'s non-root user');
  assert.deepEqual(caps({}, '0'), { add: CRI_DEFAULT_CAPABILITIES, drop: ['ALL'] }, 'the image\'s root user');
  assert.deepEqual(caps({ runAsUser: 1000, capabilities: { drop: ['ALL'], add: ['CHOWN', 'NET_ADMIN'] } }), { add: [], drop: CRI_DEFAULT_CAPABILITIES.filter((c) => c !== 'CHOWN') });
  assert.deepEqual(caps({ runAsUser: 1000, capabilities: { add: ['ALL'], drop: ['NET_RAW'] } }), { add: [], drop: ['NET_RAW'] });
});

test('runAsNonRoot: root or unknown image users are refused, numeric ones pass', () => {
  const p = pod({ securityContext: { runAsNonRoot: true } });
  assert.throws(() => securitySettings(p, { name: 'c' }, 'root'), new ConfigError('container has runAsNonRoot and image will run as root (pod: "ns/p", container: c)'));
  assert.throws(() => securitySettings(p, { name: 'c' }, ''), ConfigError);
  assert.throws(() => securitySettings(p, { name: 'c' }, 'nobody'), /non-numeric user \(nobody\)/);
  assert.throws(() => securitySettings(p, { name: 'c', securityContext: { runAsUser: 0 } }, '1000'), /runAsUser breaks non-root policy/);
  assert.equal(securitySettings(p, { name: 'c' }, '65532:65532').user, undefined);
});

test('podman pod names are bounded and unique per uid', () => {
  const a = podmanPodName('cluster', 'ns', 'x'.repeat(100), '0123abcd-0000-0000-0000-000000000000');
  assert.ok(a.length <= 61, a);
  assert.ok(a.endsWith('-0123abcd'));
});

test('an overlay mount is podman\'s :O volume, writable by the container and never read-only', () => {
  const args = containerCreateArgs({
    podName: 'pp',
    name: 'pp-c-0',
    labels: {},
    image: 'img:1',
    env: [],
    workingDir: '/no/such/dir',
    security: securitySettings(pod(), { name: 'c' }, ''),
    stdin: false,
    tty: false,
    mounts: [{ hostPath: '/state/empty', containerPath: '/no/such/dir', readOnly: false, overlay: true }],
  });
  assert.deepEqual(args.slice(args.indexOf('--volume'), args.indexOf('--volume') + 2), ['--volume', '/state/empty:/no/such/dir:O']);
});
