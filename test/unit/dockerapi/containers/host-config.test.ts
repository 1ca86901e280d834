import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostConfigRefused, isZero, judgeHostConfig } from '../../../../src/dockerapi/containers/host-config.js';
import { DOCKER_DEFAULT_CAPABILITIES, capabilityName, parseAllowedCapabilities } from '../../../../src/dockerapi/containers/capabilities.js';

const policy = { allowed: DOCKER_DEFAULT_CAPABILITIES, allowPrivileged: false };
const refused = (hc: Record<string, unknown>, field: RegExp): void => {
  assert.throws(
    () => judgeHostConfig(hc, policy),
    (err: Error) => err instanceof HostConfigRefused && field.test(err.message),
    JSON.stringify(hc),
  );
};

// What docker CLI 28 sends for `docker run busybox` (every flag at its zero value).
const CLI_DEFAULTS = {
  Binds: null,
  ContainerIDFile: '',
  LogConfig: { Type: '', Config: {} },
  NetworkMode: 'bridge',
  PortBindings: {},
  RestartPolicy: { Name: 'no', MaximumRetryCount: 0 },
  AutoRemove: true,
  VolumeDriver: '',
  VolumesFrom: null,
  ConsoleSize: [40, 120],
  CapAdd: null,
  CapDrop: null,
  CgroupnsMode: '',
  Dns: [],
  DnsOptions: [],
  DnsSearch: [],
  ExtraHosts: null,
  GroupAdd: null,
  IpcMode: '',
  Cgroup: '',
  Links: null,
  OomScoreAdj: 0,
  PidMode: '',
  Privileged: false,
  PublishAllPorts: false,
  ReadonlyRootfs: false,
  SecurityOpt: null,
  UTSMode: '',
  UsernsMode: '',
  ShmSize: 0,
  Isolation: '',
  CpuShares: 0,
  Memory: 0,
  NanoCpus: 0,
  CgroupParent: '',
  BlkioWeight: 0,
  BlkioWeightDevice: [],
  BlkioDeviceReadBps: [],
  BlkioDeviceWriteBps: [],
  BlkioDeviceReadIOps: [],
  BlkioDeviceWriteIOps: [],
  CpuPeriod: 0,
  CpuQuota: 0,
  CpuRealtimePeriod: 0,
  CpuRealtimeRuntime: 0,
  CpusetCpus: '',
  CpusetMems: '',
  Devices: [],
  DeviceCgroupRules: null,
  DeviceRequests: null,
  MemoryReservation: 0,
  MemorySwap: 0,
  MemorySwappiness: -1,
  OomKillDisable: null,
  PidsLimit: null,
  Ulimits: [],
  CpuCount: 0,
  CpuPercent: 0,
  IOMaximumIOps: 0,
  IOMaximumBandwidth: 0,
  MaskedPaths: null,
  ReadonlyPaths: null,
  Init: null,
};

test("the docker CLI defaults pass without a warning and give Docker's default capabilities", () => {
  const plan = judgeHostConfig(CLI_DEFAULTS, policy);
  assert.deepEqual(plan.warnings, []);
  assert.deepEqual(plan.capabilities, DOCKER_DEFAULT_CAPABILITIES);
  assert.equal(plan.privileged, false);
});

test('host and container namespaces are refused, naming the field and why', () => {
  assert.throws(() => judgeHostConfig({ NetworkMode: 'host' }, policy), {
    message:
      "NetworkMode=host: berth runs containers as pods on the pod network; the node's network (hostNetwork) is given only by a berth serve started with --allow-privileged",
  });
  refused({ NetworkMode: 'container:abc' }, /^NetworkMode=container:abc: /);
  refused({ PidMode: 'host' }, /^PidMode=host: /);
  refused({ IpcMode: 'host' }, /^IpcMode=host: /);
  refused({ IpcMode: 'container:x' }, /^IpcMode=container:x: /);
  refused({ UTSMode: 'host' }, /^UTSMode=host: /);
  refused({ CgroupnsMode: 'host' }, /^CgroupnsMode=host: /);
  assert.deepEqual(judgeHostConfig({ NetworkMode: 'my-net', IpcMode: 'private', UsernsMode: 'host', CgroupnsMode: 'private' }, policy).warnings, []);
});

test('devices, sysctls and unconfined security options are refused', () => {
  refused({ Devices: [{ PathOnHost: '/dev/fuse', PathInContainer: '/dev/fuse', CgroupPermissions: 'rwm' }] }, /^Devices=/);
  refused({ DeviceRequests: [{ Count: -1, Capabilities: [['gpu']] }] }, /^DeviceRequests=/);
  refused({ Sysctls: { 'net.ipv4.ip_forward': '1' } }, /^Sysctls=/);
  refused({ SecurityOpt: ['seccomp=unconfined'] }, /^SecurityOpt=seccomp=unconfined: .*RuntimeDefault/);
  refused({ SecurityOpt: ['apparmor:unconfined'] }, /^SecurityOpt=apparmor:unconfined: /);
  refused({ SecurityOpt: ['label=disable'] }, /^SecurityOpt=label=disable: /);
  refused({ Dns: ['dns.example'] }, /^Dns=dns.example: a DNS server must be an IP address/);
  refused({ VolumesFrom: ['other'] }, /^VolumesFrom=/);
  assert.deepEqual(judgeHostConfig({ SecurityOpt: ['no-new-privileges', 'no-new-privileges:true'] }, policy).warnings, []);
});

test("Docker's default set is moby's (oci/caps/defaults.go): 14 capabilities, sshd's SYS_CHROOT among them", () => {
  assert.deepEqual([...DOCKER_DEFAULT_CAPABILITIES].sort(), [
    'AUDIT_WRITE',
    'CHOWN',
    'DAC_OVERRIDE',
    'FOWNER',
    'FSETID',
    'KILL',
    'MKNOD',
    'NET_BIND_SERVICE',
    'NET_RAW',
    'SETFCAP',
    'SETGID',
    'SETPCAP',
    'SETUID',
    'SYS_CHROOT',
  ]);
});

test('CapAdd within the allowed set and CapDrop map to the pod; other CapAdd is refused naming the capability and the flag', () => {
  const without = (...caps: string[]): string[] => DOCKER_DEFAULT_CAPABILITIES.filter((c) => !caps.includes(c));
  assert.deepEqual(judgeHostConfig({ CapAdd: ['cap_chown'], CapDrop: ['KILL', 'CAP_SETUID'] }, policy).capabilities, without('KILL', 'SETUID'));
  assert.deepEqual(judgeHostConfig({ CapDrop: ['ALL'], CapAdd: ['NET_BIND_SERVICE'] }, policy).capabilities, ['NET_BIND_SERVICE']);
  assert.deepEqual(judgeHostConfig({ CapDrop: ['ALL'] }, policy).capabilities, []);
  assert.throws(() => judgeHostConfig({ CapAdd: ['NET_ADMIN'] }, policy), {
    name: 'HostConfigRefused',
    message:
      /^CapAdd=NET_ADMIN: berth serve gives containers only CHOWN, .*AUDIT_WRITE \(Docker's default set\); NET_ADMIN is beyond it and only a berth serve started with --allow-privileged grants it$/,
  });
  refused({ CapAdd: ['ALL'] }, /^CapAdd=ALL: .*--allow-privileged/);
  assert.deepEqual(judgeHostConfig({ CapAdd: ['NET_ADMIN'] }, { ...policy, allowPrivileged: true }).capabilities, [
    ...DOCKER_DEFAULT_CAPABILITIES,
    'NET_ADMIN',
  ]);
  assert.equal(capabilityName(' cap_sys_time '), 'SYS_TIME');
});

test("an operator's narrower set is the default and the limit of CapAdd", () => {
  const narrow = { allowed: parseAllowedCapabilities('net_bind_service, CAP_CHOWN', '--capabilities'), allowPrivileged: false };
  assert.deepEqual(narrow.allowed, ['CHOWN', 'NET_BIND_SERVICE'], "in Docker's order");
  assert.deepEqual(judgeHostConfig({}, narrow).capabilities, ['CHOWN', 'NET_BIND_SERVICE']);
  assert.deepEqual(judgeHostConfig({ CapAdd: ['CHOWN'], CapDrop: ['NET_BIND_SERVICE'] }, narrow).capabilities, ['CHOWN']);
  assert.throws(() => judgeHostConfig({ CapAdd: ['NET_RAW'] }, narrow), {
    message: /^CapAdd=NET_RAW: berth serve gives containers only CHOWN, NET_BIND_SERVICE: its operator narrowed Docker's default set with --capabilities/,
  });
  assert.throws(() => judgeHostConfig({ CapAdd: ['SYS_ADMIN'] }, narrow), {
    message: /^CapAdd=SYS_ADMIN: .*narrowed by --capabilities\); SYS_ADMIN is beyond it and only a berth serve started with --allow-privileged grants it$/,
  });
  assert.deepEqual(judgeHostConfig({ CapAdd: ['NET_RAW'] }, { ...narrow, allowPrivileged: true }).capabilities, ['CHOWN', 'NET_BIND_SERVICE', 'NET_RAW']);
  assert.deepEqual(parseAllowedCapabilities('none', '--capabilities'), []);
  assert.throws(() => parseAllowedCapabilities(' , ', '--capabilities'), {
    message: /^--capabilities is empty: give a comma-separated list of capabilities, or none$/,
  });
  assert.throws(() => judgeHostConfig({ CapAdd: ['CHOWN'] }, { allowed: [], allowPrivileged: false }), {
    message: /^CapAdd=CHOWN: berth serve gives containers no capabilities: its operator narrowed/,
  });
  assert.throws(() => parseAllowedCapabilities('CHOWN,NET_ADMIN', '$BERTH_SERVE_CAPABILITIES'), {
    message: /^\$BERTH_SERVE_CAPABILITIES CHOWN,NET_ADMIN: NET_ADMIN is not in Docker's default set \(.*\); this setting only narrows that set/,
  });
});

test('resource knobs dockerd may ignore are warned about; unknown fields too', () => {
  const plan = judgeHostConfig({ CpuShares: 512, PidsLimit: 100, Ulimits: [{ Name: 'nofile', Soft: 1, Hard: 2 }], Init: true, Future: 'x' }, policy);
  assert.deepEqual(
    plan.warnings.map((w) => w.split(' ')[0]),
    ['HostConfig.CpuShares', 'HostConfig.PidsLimit', 'HostConfig.Ulimits', 'HostConfig.Init', 'HostConfig.Future'],
  );
  assert.match(plan.warnings[4], /not known to berth/);
});

test('ReadonlyRootfs, GroupAdd, ExtraHosts and Privileged (when allowed) map to the pod', () => {
  const plan = judgeHostConfig(
    { ReadonlyRootfs: true, GroupAdd: ['10', '20'], ExtraHosts: ['db:10.0.0.5', 'cache:10.0.0.5', 'v6=::1'], Privileged: true },
    { ...policy, allowPrivileged: true },
  );
  assert.equal(plan.readOnlyRootFilesystem, true);
  assert.deepEqual(plan.supplementalGroups, [10, 20]);
  assert.deepEqual(plan.extraHosts, [
    { ip: '10.0.0.5', hostnames: ['db', 'cache'] },
    { ip: '::1', hostnames: ['v6'] },
  ]);
  assert.equal(plan.privileged, true);
  refused({ GroupAdd: ['wheel'] }, /^GroupAdd=wheel: /);
  refused({ ExtraHosts: ['host.docker.internal:host-gateway'] }, /^ExtraHosts=host.docker.internal:host-gateway: /);
});

test('zero values are what the CLI sends for flags not given', () => {
  assert.equal(isZero({ Type: '', Config: {} }), true);
  assert.equal(isZero([]), true);
  assert.equal(isZero({ Name: 'always' }), false);
  assert.equal(isZero(-1), false);
});

test("IpcMode host is the pod's hostIPC on a berth with --allow-privileged, and only there", () => {
  assert.equal(judgeHostConfig({ IpcMode: 'host' }, { ...policy, allowPrivileged: true }).hostIPC, true);
  assert.throws(() => judgeHostConfig({ IpcMode: 'host' }, policy), { message: /^IpcMode=host: .*--allow-privileged/ });
  assert.throws(() => judgeHostConfig({ IpcMode: 'container:x' }, { ...policy, allowPrivileged: true }), { message: /^IpcMode=container:x: / });
  assert.throws(() => judgeHostConfig({ PidMode: 'host' }, { ...policy, allowPrivileged: true }), { message: /^PidMode=host: / });
});

test("NetworkMode host is the pod's hostNetwork on a berth with --allow-privileged, and only there", () => {
  const plan = judgeHostConfig({ NetworkMode: 'host' }, { ...policy, allowPrivileged: true });
  assert.deepEqual([plan.hostNetwork, plan.denyNetwork, plan.warnings], [true, false, []]);
  assert.equal(judgeHostConfig({ NetworkMode: 'bridge' }, { ...policy, allowPrivileged: true }).hostNetwork, false);
  assert.throws(() => judgeHostConfig({ NetworkMode: 'container:x' }, { ...policy, allowPrivileged: true }), /^HostConfigRefused|NetworkMode=container:x/);
});

test('NetworkMode none maps to a deny-all policy; other modes do not', () => {
  assert.equal(judgeHostConfig({ NetworkMode: 'none' }, policy).denyNetwork, true);
  assert.deepEqual(judgeHostConfig({ NetworkMode: 'none' }, policy).warnings, []);
  assert.equal(judgeHostConfig({ NetworkMode: 'bridge' }, policy).denyNetwork, false);
});

test('a restart policy other than no is accepted with a warning that berth does not restart', () => {
  const plan = judgeHostConfig({ RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 3 } }, policy);
  assert.equal(plan.warnings.length, 1);
  assert.match(plan.warnings[0], /^HostConfig.RestartPolicy=on-failure is accepted, but berth does not restart containers/);
  assert.deepEqual(judgeHostConfig({ RestartPolicy: { Name: 'no', MaximumRetryCount: 0 } }, policy).warnings, []);
});

test('Dns, DnsSearch and DnsOptions become the pod dnsConfig', () => {
  const plan = judgeHostConfig({ Dns: ['10.0.0.2', '::1'], DnsSearch: ['corp.example'], DnsOptions: ['ndots:2', 'rotate'] }, policy);
  assert.deepEqual(plan.dns, { nameservers: ['10.0.0.2', '::1'], searches: ['corp.example'], options: [{ name: 'ndots', value: '2' }, { name: 'rotate' }] });
  assert.deepEqual(plan.warnings, []);
  assert.equal(judgeHostConfig({ Dns: [], DnsSearch: [], DnsOptions: [] }, policy).dns, undefined, 'the CLI defaults say nothing');
  refused({ Dns: ['1.1.1.1', '1.0.0.1', '8.8.8.8', '8.8.4.4'] }, /^Dns=.*at most 3/);
});
