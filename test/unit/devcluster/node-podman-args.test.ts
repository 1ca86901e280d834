import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containerCreateArgs, podCreateArgs, podmanPodName } from '../../../src/devcluster/node/podman-args.js';
import { securitySettings } from '../../../src/devcluster/node/security.js';
import { ConfigError } from '../../../src/devcluster/node/config-error.js';

const pod = (spec: any = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec });

test('pod create: hostname, labels, own hosts file, and no network when isolated', () => {
  const args = podCreateArgs({ name: 'n', infraName: 'n-infra', hostname: 'p', labels: { a: 'b' }, isolated: true });
  assert.deepEqual(args, ['pod', 'create', '--name', 'n', '--infra-name', 'n-infra', '--hostname', 'p', '--no-hosts', '--label', 'a=b', '--network', 'none']);
  assert.deepEqual(podCreateArgs({ name: 'n', infraName: 'i', hostname: 'h', labels: {}, isolated: false }).slice(-2), ['--network', 'podman']);
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
  for (const part of ['--entrypoint ["sh","-c"]', '--env A=x=y', '--workdir /w', '--user 1000:2000', '--read-only --read-only-tmpfs=false', '--security-opt no-new-privileges', '--cap-add NET_ADMIN', '--cap-drop ALL', '--interactive', `--memory ${64 * 1024 * 1024}`, '--cpus 0.5', '--volume /h:/c:ro']) {
    assert.ok(joined.includes(part), part);
  }
  assert.ok(!joined.includes('--tty'));
  assert.deepEqual(args.slice(-2), ['img:1', 'echo hi']);
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
