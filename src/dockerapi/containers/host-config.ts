/**
 * Every Docker HostConfig field berth receives gets a verdict, never silence: it maps to the pod, it is
 * refused at create with a 400 naming the field and why, or — where dockerd itself only warns (resource
 * knobs its kernel may not support) — it is ignored with a line in the create answer's `Warnings`.
 * Zero values (what the docker CLI sends for every flag not given) say nothing and pass. Pure.
 */
import { isIP } from 'node:net';
import { CapabilityRefused, containerCapabilities, type CapabilityPolicy } from './capabilities.js';

export class HostConfigRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HostConfigRefused';
  }
}

/** What the HostConfig makes of the pod, beyond the fields the engine maps itself (ports, mounts, memory, cpus). */
export interface HostConfigPlan {
  warnings: string[];
  /** Added after dropping ALL. */
  capabilities: string[];
  privileged: boolean;
  readOnlyRootFilesystem: boolean;
  supplementalGroups: number[];
  extraHosts: Array<{ ip: string; hostnames: string[] }>;
  /** NetworkMode=none: the pod keeps its interface (a pod always has one) but a deny-all NetworkPolicy selects it. */
  denyNetwork: boolean;
  /** NetworkMode=host on a berth started with --allow-privileged: the pod's hostNetwork (the node's network). */
  hostNetwork: boolean;
  /** IpcMode=host on a berth started with --allow-privileged: the pod's hostIPC. */
  hostIPC: boolean;
  /** Dns, DnsSearch, DnsOptions: the pod's dnsConfig (dnsPolicy None when servers are given, as Kubernetes requires). */
  dns?: PodDns;
}

export interface PodDns {
  nameservers: string[];
  searches: string[];
  options: Array<{ name: string; value?: string }>;
}

/** Fields the engine maps itself (see docs/serve.md, "How Docker objects map"). */
const MAPPED_ELSEWHERE = new Set(['PortBindings', 'PublishAllPorts', 'Binds', 'Mounts', 'Tmpfs', 'ShmSize', 'AutoRemove', 'Memory', 'NanoCpus', 'Privileged']);

/** The docker CLI's own business, or cosmetic: nothing for the pod to do. */
const CLIENT_SIDE = new Set(['ContainerIDFile', 'ConsoleSize']);

const POD_NETWORK = 'berth runs containers as pods on the pod network';
const POD_CPU = "a pod's CPU is its requests and limits (use --cpus, or the berth.dev/request-cpu and berth.dev/limit-cpu labels)";
const POD_MEMORY = "a pod's memory is its requests and limits (use -m, or the berth.dev/request-memory and berth.dev/limit-memory labels)";
const KERNEL = 'the kubelet and the node decide it, not the pod';

/** Set: refused with the reason. */
const REFUSED: Record<string, string> = {
  Devices: 'a pod cannot be given host devices by berth',
  DeviceRequests: 'a pod cannot be given host devices (GPUs) by berth; request them as extended resources in a pod template',
  DeviceCgroupRules: 'a pod cannot be given host devices by berth',
  Sysctls: 'berth does not set sysctls on pods (set securityContext.sysctls in a pod template; the kubelet allows only safe ones)',
  VolumesFrom: "containers are separate pods and cannot mount each other's volumes; use a named volume",
  Links: 'links are not supported; put the containers on a network and use its aliases',
  Cgroup: 'a pod cannot join another cgroup',
  Runtime: "the runtime is the cluster's (set runtimeClassName in a pod template)",
};

/** Set: ignored with a warning, as dockerd ignores them where its kernel lacks support. */
const WARNED: Record<string, string> = {
  CpuShares: POD_CPU,
  CpuPeriod: POD_CPU,
  CpuQuota: POD_CPU,
  CpuRealtimePeriod: POD_CPU,
  CpuRealtimeRuntime: POD_CPU,
  CpusetCpus: POD_CPU,
  CpusetMems: POD_CPU,
  CpuCount: POD_CPU,
  CpuPercent: POD_CPU,
  MemoryReservation: POD_MEMORY,
  MemorySwap: POD_MEMORY,
  MemorySwappiness: POD_MEMORY,
  KernelMemory: POD_MEMORY,
  KernelMemoryTCP: POD_MEMORY,
  OomKillDisable: KERNEL,
  OomScoreAdj: KERNEL,
  PidsLimit: KERNEL,
  Ulimits: KERNEL,
  BlkioWeight: KERNEL,
  BlkioWeightDevice: KERNEL,
  BlkioDeviceReadBps: KERNEL,
  BlkioDeviceWriteBps: KERNEL,
  BlkioDeviceReadIOps: KERNEL,
  BlkioDeviceWriteIOps: KERNEL,
  IOMaximumIOps: KERNEL,
  IOMaximumBandwidth: KERNEL,
  CgroupParent: KERNEL,
  StorageOpt: KERNEL,
  Init: 'a pod has no init process added: the command runs as PID 1',
  MaskedPaths: "the container runtime's default masked paths apply",
  ReadonlyPaths: "the container runtime's default read-only paths apply",
  Annotations: 'runtime annotations are not passed to pods (use the berth.dev/pod-annotations label)',
  Isolation: "isolation is the cluster's",
  VolumeDriver: "volumes are PersistentVolumeClaims of the cluster's default storage class",
};

/** Namespace modes: the values a pod has anyway pass; sharing the node's or another container's is refused. */
const NAMESPACE_MODES: Record<string, { ok: string[]; why: string }> = {
  PidMode: { ok: ['', 'private'], why: "a pod has its own process namespace; berth shares neither the node's nor another pod's" },
  IpcMode: {
    ok: ['', 'private', 'shareable', 'none'],
    why: "a pod has its own IPC namespace; the node's (hostIPC) is given only by a berth serve started with --allow-privileged, another pod's never",
  },
  UTSMode: { ok: ['', 'private'], why: "a pod has its own hostname; berth does not give it the node's" },
  UsernsMode: { ok: ['', 'host'], why: "pods run in the node's user namespace (set hostUsers in a pod template)" },
  CgroupnsMode: { ok: ['', 'private'], why: "a pod has its own cgroup namespace; berth does not give it the node's" },
};

/** Fields whose "not given" is not a zero value (the docker CLI sends --memory-swappiness's -1). */
const UNSET: Record<string, unknown> = { MemorySwappiness: -1 };

/** True for what the docker CLI sends when a flag was not given: null, false, 0, '', [], {} (also nested). */
export function isZero(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.values(v as Record<string, unknown>).every(isZero);
  return false;
}

function refuse(field: string, value: unknown, why: string): never {
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  throw new HostConfigRefused(`${field}=${shown}: ${why}`);
}

/** The plan of an empty HostConfig: what a pod is when the request asks nothing of it. */
export function blankHostConfigPlan(policy: CapabilityPolicy): HostConfigPlan {
  return {
    warnings: [],
    capabilities: [...policy.allowed],
    privileged: false,
    readOnlyRootFilesystem: false,
    supplementalGroups: [],
    extraHosts: [],
    denyNetwork: false,
    hostNetwork: false,
    hostIPC: false,
  };
}

/** Judges a create request's HostConfig; throws HostConfigRefused (a 400) for what cannot be honoured. */
export function judgeHostConfig(hc: Record<string, unknown> | null | undefined, policy: CapabilityPolicy): HostConfigPlan {
  const plan = blankHostConfigPlan(policy);
  const h = hc ?? {};
  for (const [field, value] of Object.entries(h)) {
    if (MAPPED_ELSEWHERE.has(field) || CLIENT_SIDE.has(field)) continue;
    if (field === 'NetworkMode') {
      const mode = judgeNetworkMode(value, policy.allowPrivileged);
      plan.denyNetwork = mode === 'none';
      plan.hostNetwork = mode === 'host';
      continue;
    }
    if (field in NAMESPACE_MODES) {
      const mode = typeof value === 'string' ? value : '';
      // The node's IPC namespace is a pod field (hostIPC), as privileged as Privileged.
      if (field === 'IpcMode' && mode === 'host' && policy.allowPrivileged) {
        plan.hostIPC = true;
        continue;
      }
      if (!NAMESPACE_MODES[field].ok.includes(mode)) refuse(field, value, NAMESPACE_MODES[field].why);
      continue;
    }
    if (isZero(value) || UNSET[field] === value) continue;
    if (field === 'RestartPolicy') {
      const name = (value as { Name?: string }).Name ?? '';
      if (name !== '' && name !== 'no')
        plan.warnings.push(
          `HostConfig.RestartPolicy=${name} is accepted, but berth does not restart containers: a pod's restartPolicy is Never so its exit code is kept; start it again with docker start`,
        );
      continue;
    }
    if (field === 'Dns' || field === 'DnsSearch' || field === 'DnsOptions') {
      plan.dns = podDns(h);
      continue;
    }
    if (field === 'LogConfig') {
      const type = (value as { Type?: string }).Type ?? '';
      if (!['', 'json-file', 'local'].includes(type))
        plan.warnings.push(`HostConfig.LogConfig Type=${type} is ignored: logs are the pod's, kept by the kubelet`);
      continue;
    }
    if (field === 'SecurityOpt') {
      for (const opt of value as string[]) judgeSecurityOpt(opt);
      continue;
    }
    if (field === 'ReadonlyRootfs') {
      plan.readOnlyRootFilesystem = value === true;
      continue;
    }
    if (field === 'GroupAdd') {
      for (const g of value as string[]) {
        if (!/^\d+$/.test(String(g))) refuse('GroupAdd', g, 'groups must be numeric gids: a pod cannot look names up in the image');
        plan.supplementalGroups.push(Number(g));
      }
      continue;
    }
    if (field === 'ExtraHosts') {
      plan.extraHosts = extraHosts(value as string[]);
      continue;
    }
    if (field === 'CapAdd' || field === 'CapDrop') continue; // below, together
    if (field in REFUSED) refuse(field, value, REFUSED[field]);
    if (field in WARNED) {
      plan.warnings.push(`HostConfig.${field} is ignored: ${WARNED[field]}`);
      continue;
    }
    plan.warnings.push(`HostConfig.${field} is not known to berth and is ignored`);
  }
  try {
    plan.capabilities = containerCapabilities(asList(h.CapAdd), asList(h.CapDrop), policy);
  } catch (err) {
    if (err instanceof CapabilityRefused) throw new HostConfigRefused(err.message);
    throw err;
  }
  if (h.Privileged === true && policy.allowPrivileged) plan.privileged = true;
  return plan;
}

function asList(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}

/**
 * `none` (a deny-all NetworkPolicy), `host` (the pod's hostNetwork: the node's network, as privileged as
 * Privileged, so only with --allow-privileged) or the pod network; container: modes are refused.
 */
function judgeNetworkMode(value: unknown, allowPrivileged: boolean): 'none' | 'host' | 'pod' {
  const mode = typeof value === 'string' ? value : '';
  if (mode === 'host') {
    if (allowPrivileged) return 'host';
    refuse('NetworkMode', mode, `${POD_NETWORK}; the node's network (hostNetwork) is given only by a berth serve started with --allow-privileged`);
  }
  if (mode.startsWith('container:')) refuse('NetworkMode', mode, `${POD_NETWORK}; each container is its own pod and cannot join another's network namespace`);
  return mode === 'none' ? 'none' : 'pod';
}

/** `--dns 10.0.0.2 --dns-search corp --dns-option ndots:2` → a pod dnsConfig. */
function podDns(h: Record<string, unknown>): PodDns {
  const nameservers = asList(h.Dns);
  for (const ip of nameservers) if (!isIP(ip)) refuse('Dns', ip, 'a DNS server must be an IP address');
  if (nameservers.length > 3) refuse('Dns', nameservers, 'a pod takes at most 3 DNS servers');
  const options = asList(h.DnsOptions).map((o) => {
    const at = o.search(/[:=]/);
    return at < 0 ? { name: o } : { name: o.slice(0, at), value: o.slice(at + 1) };
  });
  return { nameservers, searches: asList(h.DnsSearch), options };
}

function judgeSecurityOpt(opt: string): void {
  const [key, val = ''] = opt.split(/[=:]/, 2);
  if (key === 'no-new-privileges' && (val === '' || val === 'true')) return; // every berth pod has it
  if (key === 'seccomp') refuse('SecurityOpt', opt, "berth pods run with seccomp RuntimeDefault; only an operator's pod template changes it");
  if (key === 'apparmor') refuse('SecurityOpt', opt, "berth pods run with the node's default AppArmor profile; only an operator's pod template changes it");
  if (key === 'label') refuse('SecurityOpt', opt, "SELinux labels of pods are set by the cluster (seLinuxOptions in an operator's pod template)");
  refuse('SecurityOpt', opt, 'berth does not know this security option');
}

function extraHosts(entries: string[]): Array<{ ip: string; hostnames: string[] }> {
  const byIp = new Map<string, string[]>();
  for (const entry of entries) {
    const at = entry.search(/[:=]/);
    const host = at < 0 ? entry : entry.slice(0, at);
    const ip = at < 0 ? '' : entry.slice(at + 1).replace(/^\[|\]$/g, '');
    if (ip === 'host-gateway')
      refuse('ExtraHosts', entry, 'a pod has no gateway to the machine berth runs on; publish the service in the cluster and use its address');
    if (!host || !isIP(ip)) refuse('ExtraHosts', entry, 'expected host:ip with an IP address');
    byIp.set(ip, [...(byIp.get(ip) ?? []), host]);
  }
  return [...byIp].map(([ip, hostnames]) => ({ ip, hostnames }));
}
