// A Docker create judged once (create-plan.ts): what the plan keeps, what it refuses, and how a berth taking a container over re-reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planCreate, replanContainer, type CreatePolicy } from '../../../../src/dockerapi/containers/create-plan.js';
import { DOCKER_DEFAULT_CAPABILITIES } from '../../../../src/dockerapi/containers/capabilities.js';
import { DockerError } from '../../../../src/dockerapi/http/http.js';
import { SandboxPlanError } from '../../../../src/runtime/sandbox-plan.js';
import type { CreateBody } from '../../../../src/dockerapi/model.js';

const policy: CreatePolicy = {
  allowed: DOCKER_DEFAULT_CAPABILITIES,
  allowPrivileged: false,
  podDefaults: { 'berth.dev/request-cpu': '100m', 'berth.dev/limit-memory': '1Gi' },
};
const privileged: CreatePolicy = { ...policy, allowPrivileged: true };
const status = (code: number, message: RegExp) => (err: unknown) => err instanceof DockerError && err.status === code && message.test(err.message);

const request = (): CreateBody => ({
  Image: 'busybox',
  User: 'app',
  Env: ['A=1'],
  Labels: { 'berth.dev/limit-memory': '64Mi', 'berth.dev/pod-template': ' ci-pods ' },
  Volumes: { '/anon': {} },
  HostConfig: {
    CapDrop: ['KILL'],
    ReadonlyRootfs: true,
    Dns: ['10.0.0.2'],
    RestartPolicy: { Name: 'always' },
    Binds: ['data:/data:ro'],
    Mounts: [{ Type: 'volume', Source: 'cache', Target: '/cache', VolumeOptions: { Labels: { team: 'qa' } } }],
    Tmpfs: { '/scratch': 'size=1m,noexec' },
    ShmSize: 1024,
  },
  NetworkingConfig: { EndpointsConfig: { app: { Aliases: ['db'] } } },
});

test('the plan keeps the verdicts, the pod volumes, the settings and the template a start needs', () => {
  const { plan } = planCreate(request(), { User: 'root', Env: ['PATH=/bin'], Labels: { 'berth.dev/limit-memory': '2Gi' } }, policy);
  assert.deepEqual(
    plan.hostConfig.capabilities,
    DOCKER_DEFAULT_CAPABILITIES.filter((c) => c !== 'KILL'),
  );
  assert.equal(plan.hostConfig.readOnlyRootFilesystem, true);
  assert.deepEqual(plan.hostConfig.dns, { nameservers: ['10.0.0.2'], searches: [], options: [] });
  assert.equal(plan.hostConfig.hostNetwork, false);
  assert.deepEqual(plan.volumes, [
    { claim: 'data', target: '/data', readOnly: true },
    { claim: 'cache', target: '/cache', readOnly: false },
    { target: '/scratch', readOnly: false, memory: true, sizeLimit: '1Mi' },
    { target: '/dev/shm', readOnly: false, memory: true, sizeLimit: '1024' },
  ]);
  assert.deepEqual(
    plan.settings,
    { requests: { cpu: '100m' }, limits: { memory: '64Mi' } },
    "the operator's defaults under the container's labels, the image's under the request's",
  );
  assert.equal(plan.templateName, 'ci-pods');
  assert.equal(plan.refused, undefined);
});

test('what only the create uses: the merged config, warnings, volumes to make, networks and a user given by name', () => {
  const given = request();
  const created = planCreate(given, { User: 'root', Env: ['PATH=/bin'], ExposedPorts: { '80/tcp': {} } }, policy);
  assert.deepEqual(created.body.Env, ['A=1', 'PATH=/bin']);
  assert.deepEqual(created.body.ExposedPorts, { '80/tcp': {} });
  assert.deepEqual(given.Env, ['A=1'], 'the request itself is left as it came');
  assert.equal(created.warnings.length, 2);
  assert.match(created.warnings[0], /RestartPolicy=always/);
  assert.match(created.warnings[1], /tmpfs \/scratch: noexec not applied/);
  assert.deepEqual(created.namedVolumes, [
    { name: 'data', labels: {} },
    { name: 'cache', labels: { team: 'qa' } },
  ]);
  assert.deepEqual(
    created.anonymousVolumes.map((a) => a.target),
    ['/anon'],
  );
  assert.match(created.anonymousVolumes[0].name, /^[0-9a-f]{64}$/);
  assert.deepEqual(created.networks, [
    { name: 'bridge', aliases: [] },
    { name: 'app', aliases: ['db'] },
  ]);
  assert.equal(created.namedUser, 'app');
  assert.equal(
    planCreate({ Image: 'pg', User: 'postgres' }, { User: 'postgres' }, policy).namedUser,
    undefined,
    "the image's own USER is the kubelet's to run",
  );
});

test('refused at create: the policy (403 for Privileged), the HostConfig, the mounts and the settings, each naming why', () => {
  assert.throws(() => planCreate({ Image: 'i', HostConfig: { Privileged: true } }, undefined, policy), status(403, /--allow-privileged/));
  assert.throws(
    () => planCreate({ Image: 'i', HostConfig: { NetworkMode: 'host' } }, undefined, policy),
    status(400, /^NetworkMode=host: .*--allow-privileged/),
  );
  assert.throws(() => planCreate({ Image: 'i', HostConfig: { CapAdd: ['SYS_ADMIN'] } }, undefined, policy), status(400, /^CapAdd=SYS_ADMIN/));
  assert.throws(() => planCreate({ Image: 'i', HostConfig: { Binds: ['/etc:/x'] } }, undefined, policy), status(400, /host path \/etc/));
  assert.throws(() => planCreate({ Image: 'i', Labels: { 'berth.dev/request-cpu': 'lots' } }, undefined, policy), SandboxPlanError);
  assert.throws(
    () => planCreate({ Image: 'i', NetworkingConfig: { EndpointsConfig: { n: { Aliases: ['Not_A_Label'] } } } }, undefined, policy),
    /must be a DNS label/,
  );
  assert.throws(() => planCreate({ Image: 'i', User: 'a b' }, undefined, policy), status(400, /invalid user/));
  const host = planCreate({ Image: 'i', HostConfig: { NetworkMode: 'host', Privileged: true } }, undefined, privileged).plan.hostConfig;
  assert.equal(host.hostNetwork, true);
  assert.equal(host.privileged, true);
});

test("the Ryuk container, which berth plays without a pod: no HostConfig verdicts, no mounts, the image's label", () => {
  const created = planCreate(
    { Image: 'testcontainers/ryuk:0.14.0', HostConfig: { Binds: ['/var/run/docker.sock:/var/run/docker.sock'], SecurityOpt: ['label=disable'] } },
    undefined,
    policy,
  );
  assert.deepEqual(created.body.Labels, { 'org.testcontainers.ryuk': 'true' });
  assert.deepEqual(created.plan, {
    hostConfig: {
      warnings: [],
      capabilities: [...DOCKER_DEFAULT_CAPABILITIES],
      privileged: false,
      readOnlyRootFilesystem: false,
      supplementalGroups: [],
      extraHosts: [],
      denyNetwork: false,
      hostNetwork: false,
      hostIPC: false,
    },
    volumes: [],
    settings: {},
  });
  assert.deepEqual(created.warnings, []);
  // testcontainers-java asks for a privileged Ryuk: with no pod, there is nothing the privilege would apply to
  assert.equal(planCreate({ Image: 'testcontainers/ryuk:0.12.0', HostConfig: { Privileged: true } }, undefined, policy).plan.hostConfig.privileged, false);
});

test('a berth taking a container over under the same policy plans it as its create did', () => {
  const created = planCreate(request(), undefined, policy);
  assert.deepEqual(replanContainer(created.body, policy), created.plan);
});

test('a berth whose policy refuses a container taken over keeps it, not startable, with what removal and peek pods need', () => {
  const host = planCreate({ Image: 'i', Labels: { 'berth.dev/name-prefix': 'ci' }, HostConfig: { NetworkMode: 'host' } }, undefined, privileged);
  const again = replanContainer(host.body, policy);
  assert.match(again.refused ?? '', /^NetworkMode=host: .*--allow-privileged/);
  assert.equal(again.hostConfig.hostNetwork, false, 'no verdict is laid');
  assert.deepEqual(again.settings, { namePrefix: 'ci', requests: { cpu: '100m' }, limits: { memory: '1Gi' } });
  const isolated = planCreate({ Image: 'i', HostConfig: { NetworkMode: 'none', CapAdd: ['NET_ADMIN'] } }, undefined, privileged);
  const refusedIsolated = replanContainer(isolated.body, policy);
  assert.match(refusedIsolated.refused ?? '', /^CapAdd=NET_ADMIN: .*--allow-privileged/);
  assert.equal(refusedIsolated.hostConfig.denyNetwork, true, 'its deny-all policy is still there to delete');
  const badSetting = replanContainer({ Image: 'i', Labels: { 'berth.dev/request-cpu': 'lots' } }, policy);
  assert.match(badSetting.refused ?? '', /request-cpu="lots"/);
  assert.deepEqual(badSetting.settings, {});
  assert.match(replanContainer({ Image: 'i', HostConfig: { Privileged: true } }, policy).refused ?? '', /--allow-privileged/);
});
