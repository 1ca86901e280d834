/**
 * What berth remembers of Docker objects, and the JSON shapes clients read (inspect, list items).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Pod as V1Pod } from './cluster.js';
import type { KeptTar } from './containers/archive-spill.js';
import type { ImageInfo } from './images/image-config.js';
import { tryNormalizeImage } from './images/image-ref.js';
import { FEED_CONTAINER, feedFailure } from './containers/file-feed.js';
import { failedInit, FATAL_WAITING, lostNode, stuckInit } from '../runtime/pod-status.js';
import type { DockerMount } from './volumes/volumes.js';
import type { Platform } from './containers/platform.js';
import { DEFAULT_SHM_SIZE } from './containers/mounts.js';
import type { ContainerPlan } from './containers/create-plan.js';

export interface CreateBody {
  Image?: string;
  Cmd?: string[] | string | null;
  Entrypoint?: string[] | string | null;
  Env?: string[] | null;
  Labels?: Record<string, string> | null;
  ExposedPorts?: Record<string, unknown> | null;
  /** `-v /path`: anonymous volumes, by container path */
  Volumes?: Record<string, unknown> | null;
  WorkingDir?: string;
  User?: string;
  Hostname?: string;
  Tty?: boolean;
  OpenStdin?: boolean;
  StdinOnce?: boolean;
  AttachStdin?: boolean;
  AttachStdout?: boolean;
  AttachStderr?: boolean;
  Healthcheck?: { Test?: string[]; Interval?: number; Timeout?: number; Retries?: number; StartPeriod?: number } | null;
  /** `--stop-signal`: what `docker stop` sends first (the image's STOPSIGNAL when not given) */
  StopSignal?: string;
  /** `--stop-timeout`: seconds `docker stop` waits before it kills, when the stop names none */
  StopTimeout?: number | null;
  HostConfig?: HostConfig | null;
  NetworkingConfig?: { EndpointsConfig?: Record<string, { Aliases?: string[] | null } | null> | null } | null;
}

export interface HostConfig {
  PortBindings?: Record<string, Array<{ HostIp?: string; HostPort?: string }> | null> | null;
  PublishAllPorts?: boolean;
  Binds?: string[] | null;
  Mounts?: Array<{
    Type?: string;
    Source?: string;
    Target?: string;
    ReadOnly?: boolean;
    VolumeOptions?: { DriverConfig?: { Name?: string; Options?: Record<string, string> | null } | null; Labels?: Record<string, string> | null } | null;
    /** `--mount type=tmpfs,tmpfs-size=…,tmpfs-mode=…`: bytes, and the mode's bits as a number */
    TmpfsOptions?: { SizeBytes?: number; Mode?: number; Options?: string[][] | null } | null;
  }> | null;
  Tmpfs?: Record<string, string> | null;
  /** bytes of /dev/shm; 0 = the default 64 MiB */
  ShmSize?: number;
  IpcMode?: string;
  AutoRemove?: boolean;
  NetworkMode?: string;
  Privileged?: boolean;
  Memory?: number;
  NanoCpus?: number;
  CapAdd?: string[] | null;
  CapDrop?: string[] | null;
  ReadonlyRootfs?: boolean;
  GroupAdd?: string[] | null;
  ExtraHosts?: string[] | null;
  /** Every other field is judged by host-config.ts. */
  [field: string]: unknown;
}

export type ContainerStatus = 'created' | 'running' | 'exited' | 'removing' | 'dead';

export interface PublishedPort {
  key: string;
  containerPort: number;
  hostIp: string;
  reportedIp: string;
  hostPort: number;
}

/** An archive copied into a container at `path` (checked: runtime/files.ts; large ones kept on disk: archive-spill.ts). */
export interface CopiedArchive {
  path: string;
  tar: KeptTar;
}

/** An anonymous volume of a container: its generated name, and where it is mounted. */
export interface AnonymousVolume {
  name: string;
  target: string;
  /** `--mount type=volume,dst=/path,readonly` */
  readOnly?: boolean;
}

export interface ContainerRecord {
  id: string;
  name: string;
  created: Date;
  image: string;
  /** The create request with its image's config merged in (create-plan.ts). */
  body: CreateBody;
  /** What create judged of it (create-plan.ts): every start, peek and removal reads this, none judges again. */
  plan: ContainerPlan;
  cmd: string[];
  entrypoint: string[];
  podName?: string;
  generation: number;
  status: ContainerStatus;
  exitCode: number;
  error: string;
  oomKilled: boolean;
  startedAt?: string;
  finishedAt?: string;
  restartCount: number;
  pendingArchives: CopiedArchive[];
  /** Delivered archives, copied again into the new pod of a restart. */
  copiedArchives: CopiedArchive[];
  /** Archives copied in under the berth serve this one took the container over from: not here to copy again. */
  archivesLost?: number;
  ports: PublishedPort[];
  /** network id → aliases */
  networks: Map<string, string[]>;
  podIP?: string;
  health?: { status: 'starting' | 'healthy' | 'unhealthy'; failingStreak: number; log: Array<{ Start: string; End: string; ExitCode: number; Output: string }> };
  /** Streams still reading this container's output: AutoRemove waits for them. */
  readers: number;
  /** When this run's pod was created (ms): a re-list that started later and misses it means it is gone. */
  podCreatedAt?: number;
  /** An attached client got less than the whole output of this run: `wait` reports it as an error. */
  outputError?: string;
  /** The last removal failed (pod or Services left): `wait` reports it; `rm` tries again. */
  removalError?: string;
  /** Failed removals so far: a `wait condition=removed` ends at the next one. */
  removalFailures?: number;
  /** HostConfig fields ignored with a warning (create's `Warnings`). */
  warnings?: string[];
  /** `-v /path` volumes, named at create as dockerd names them (64 hex digits); removed with `rm -v` and `--rm` */
  anonymousVolumes?: AnonymousVolume[];
  /** A `User` the request gave by name (not the image's own USER, which the kubelet runs itself): looked up at the first start. */
  namedUser?: string;
  /** `namedUser` as the numbers the image's /etc/passwd and /etc/group give it (`uid:gid`). */
  podUser?: string;
  /** `--platform`: the pod goes to a node of it (platform.ts). */
  platform?: Platform;
}

export interface NetworkRecord {
  id: string;
  name: string;
  driver: string;
  created: Date;
  labels: Record<string, string>;
  /** the create's driver options, as inspect shows them (checked: network-options.ts) */
  options?: Record<string, string>;
  internal: boolean;
  builtin: boolean;
}

export interface VolumeRecord {
  name: string;
  claim: string;
  created: Date;
  labels: Record<string, string>;
}

export interface ImageRecord {
  id: string;
  ref: string;
  tags: Set<string>;
  created: Date;
  /** The image's config from its registry; undefined while unknown (not read, unreachable, --no-image-config). */
  info?: ImageInfo;
}

export const ZERO_TIME = '0001-01-01T00:00:00Z';

export function newId(): string {
  return randomBytes(32).toString('hex');
}

export function shortHash(text: string, length = 6): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

export function asArgv(v: string[] | string | null | undefined): string[] {
  if (v === null || v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/** The id of an image record: a hash of its canonical reference (dockerd's are content digests; berth has no content). */
export function imageId(ref: string): string {
  return `sha256:${shortHash(tryNormalizeImage(ref) ?? ref, 64)}`;
}

export function humanStatus(c: ContainerRecord, now = Date.now()): string {
  if (c.status === 'running' && c.startedAt) return `Up ${humanDuration(now - Date.parse(c.startedAt))}${healthNote(c)}`;
  if (c.status === 'exited' && c.finishedAt) return `Exited (${c.exitCode}) ${humanDuration(now - Date.parse(c.finishedAt))} ago`;
  if (c.status === 'created') return 'Created';
  return c.status;
}

/** what `docker ps` adds to a running container's STATUS when it has a healthcheck: ` (healthy)`, ` (health: starting)` */
function healthNote(c: ContainerRecord): string {
  if (!c.health) return '';
  return c.health.status === 'starting' ? ' (health: starting)' : ` (${c.health.status})`;
}

/** docker's own wording (go-units HumanDuration), as `docker ps` prints it in STATUS. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(Math.max(0, ms) / 1000);
  const minutes = Math.floor(seconds / 60);
  const hours = Math.round(seconds / 3600);
  if (seconds < 1) return 'Less than a second';
  if (seconds === 1) return '1 second';
  if (seconds < 60) return `${seconds} seconds`;
  if (minutes === 1) return 'About a minute';
  if (minutes < 60) return `${minutes} minutes`;
  if (hours === 1) return 'About an hour';
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 7 * 2) return `${Math.floor(hours / 24)} days`;
  if (hours < 24 * 30 * 2) return `${Math.floor(hours / 24 / 7)} weeks`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24 / 30)} months`;
  return `${Math.floor(seconds / 3600 / 24 / 365)} years`;
}

export function portsObject(c: ContainerRecord): Record<string, Array<{ HostIp: string; HostPort: string }> | null> {
  const out: Record<string, Array<{ HostIp: string; HostPort: string }> | null> = {};
  for (const key of Object.keys(c.body.ExposedPorts ?? {})) out[key] = null;
  if (c.status === 'running') {
    for (const p of c.ports) (out[p.key] ??= [])!.push({ HostIp: p.reportedIp, HostPort: String(p.hostPort) });
  }
  return out;
}

export function networkSettings(c: ContainerRecord, networks: Map<string, NetworkRecord>): Record<string, unknown> {
  const nets: Record<string, unknown> = {};
  const ip = c.status === 'running' ? (c.podIP ?? '') : '';
  for (const [netId, aliases] of c.networks) {
    const n = networks.get(netId);
    if (!n) continue;
    nets[n.name] = { NetworkID: n.id, EndpointID: c.status === 'running' ? c.id.slice(0, 24) : '', IPAddress: ip, IPPrefixLen: ip ? 32 : 0, Gateway: '', MacAddress: '', Aliases: aliases, Links: null, IPAMConfig: null, DriverOpts: null };
  }
  return { IPAddress: ip, IPPrefixLen: ip ? 32 : 0, Gateway: '', MacAddress: '', Bridge: '', SandboxID: '', Ports: portsObject(c), Networks: nets };
}

/** `mounts`: the container's mounts as dockerd lists them (volumes.ts dockerMounts). */
export function inspectContainer(c: ContainerRecord, networks: Map<string, NetworkRecord>, mounts: DockerMount[]): Record<string, unknown> {
  const hc = c.body.HostConfig ?? {};
  const running = c.status === 'running';
  return {
    Id: c.id,
    Created: c.created.toISOString(),
    Path: [...c.entrypoint, ...c.cmd][0] ?? '',
    Args: [...c.entrypoint, ...c.cmd].slice(1),
    State: {
      Status: c.status,
      Running: running,
      Paused: false,
      Restarting: false,
      OOMKilled: c.oomKilled,
      Dead: c.status === 'dead',
      Pid: running ? 1 : 0,
      ExitCode: c.exitCode,
      Error: c.error,
      StartedAt: c.startedAt ?? ZERO_TIME,
      FinishedAt: c.finishedAt ?? ZERO_TIME,
      ...(c.health ? { Health: { Status: c.health.status, FailingStreak: c.health.failingStreak, Log: c.health.log } } : {}),
    },
    Image: imageId(c.image),
    Name: `/${c.name}`,
    RestartCount: c.restartCount,
    Driver: 'kubernetes',
    Platform: 'linux',
    Config: {
      Hostname: c.body.Hostname || c.id.slice(0, 12),
      Domainname: '',
      User: c.body.User ?? '',
      AttachStdin: Boolean(c.body.AttachStdin),
      AttachStdout: Boolean(c.body.AttachStdout),
      AttachStderr: Boolean(c.body.AttachStderr),
      ExposedPorts: c.body.ExposedPorts ?? null,
      Tty: Boolean(c.body.Tty),
      OpenStdin: Boolean(c.body.OpenStdin),
      StdinOnce: Boolean(c.body.StdinOnce),
      Env: c.body.Env ?? [],
      Cmd: c.cmd.length ? c.cmd : null,
      Entrypoint: c.entrypoint.length ? c.entrypoint : null,
      Image: c.image,
      WorkingDir: c.body.WorkingDir ?? '',
      Labels: c.body.Labels ?? {},
      ...(c.body.Healthcheck ? { Healthcheck: c.body.Healthcheck } : {}),
      ...(c.body.StopSignal ? { StopSignal: c.body.StopSignal } : {}),
      ...(typeof c.body.StopTimeout === 'number' ? { StopTimeout: c.body.StopTimeout } : {}),
    },
    // What the pod is: host modes are refused at create, so only the pod network's modes show here.
    HostConfig: {
      PortBindings: hc.PortBindings ?? {},
      NetworkMode: networkModeOf(c),
      AutoRemove: Boolean(hc.AutoRemove),
      Binds: hc.Binds ?? null,
      Memory: hc.Memory ?? 0,
      NanoCpus: hc.NanoCpus ?? 0,
      Privileged: Boolean(hc.Privileged),
      CapAdd: hc.CapAdd ?? null,
      CapDrop: hc.CapDrop ?? null,
      ReadonlyRootfs: Boolean(hc.ReadonlyRootfs),
      GroupAdd: hc.GroupAdd ?? null,
      ExtraHosts: hc.ExtraHosts ?? null,
      PidMode: '',
      IpcMode: 'private',
      ShmSize: hc.ShmSize || DEFAULT_SHM_SIZE,
      ...(hc.Tmpfs && Object.keys(hc.Tmpfs).length ? { Tmpfs: hc.Tmpfs } : {}),
      UTSMode: '',
      RestartPolicy: { Name: 'no', MaximumRetryCount: 0 },
      // What the logs are: the kubelet's container log, read like json-file's (testcontainers reads the Type).
      LogConfig: { Type: logType(hc.LogConfig), Config: {} },
      Dns: hc.Dns ?? [],
      DnsOptions: hc.DnsOptions ?? [],
      DnsSearch: hc.DnsSearch ?? [],
    },
    Mounts: mounts,
    NetworkSettings: networkSettings(c, networks),
  };
}

export interface PortSummary {
  IP?: string;
  PrivatePort: number;
  PublicPort?: number;
  Type: string;
}

/**
 * The ports `docker ps` shows, as dockerd lists them: while the container runs, each published binding and
 * each exposed port that has none (only its PrivatePort); none otherwise (dockerd releases them at the exit).
 * The `publish` and `expose` filters match these.
 */
export function portSummaries(c: ContainerRecord): PortSummary[] {
  if (c.status !== 'running') return [];
  const published: PortSummary[] = c.ports.map((p) => ({ IP: p.reportedIp, PrivatePort: p.containerPort, PublicPort: p.hostPort, Type: 'tcp' }));
  const bound = new Set(c.ports.map((p) => p.key));
  const exposed = Object.keys(c.body.ExposedPorts ?? {})
    .map((key) => (key.includes('/') ? key : `${key}/tcp`))
    .filter((key) => !bound.has(key))
    .map((key): PortSummary => ({ PrivatePort: parseInt(key, 10), Type: key.split('/')[1] }));
  return [...published, ...exposed];
}

export function listItem(c: ContainerRecord, networks: Map<string, NetworkRecord>, mounts: DockerMount[]): Record<string, unknown> {
  const ports = portSummaries(c);
  return {
    Id: c.id,
    Names: [`/${c.name}`],
    Image: c.image,
    ImageID: imageId(c.image),
    Command: [...c.entrypoint, ...c.cmd].join(' '),
    Created: Math.floor(c.created.getTime() / 1000),
    Ports: ports,
    Labels: c.body.Labels ?? {},
    State: c.status,
    Status: humanStatus(c),
    HostConfig: { NetworkMode: networkModeOf(c) },
    NetworkSettings: { Networks: (networkSettings(c, networks) as { Networks: unknown }).Networks },
    Mounts: mounts,
  };
}

function logType(config: unknown): string {
  const type = (config as { Type?: unknown } | null | undefined)?.Type;
  return type === 'local' ? 'local' : 'json-file';
}

/** `bridge` for the default network, else the network the client named (never a host mode: those are refused). */
function networkModeOf(c: ContainerRecord): string {
  const mode = c.body.HostConfig?.NetworkMode;
  return !mode || mode === 'default' ? 'bridge' : mode;
}

/** Reads the main container's state from the pod. */
export function podState(pod: V1Pod): { status: ContainerStatus; exitCode?: number; error?: string; oomKilled?: boolean; startedAt?: string; finishedAt?: string } {
  const cs = pod.status?.containerStatuses?.find((s) => s.name === 'main');
  const st = cs?.state;
  const iso = (d: Date | string | undefined): string | undefined => (d === undefined ? undefined : new Date(d).toISOString());
  // as dockerd shows a container that ran when its machine went down: exited, 255
  const lost = lostNode(pod, 'main');
  if (lost) return { status: 'exited', exitCode: 255, error: lost, startedAt: iso(st?.running?.startedAt), finishedAt: new Date().toISOString() };
  if (st?.running) return { status: 'running', startedAt: iso(st.running.startedAt) };
  if (st?.terminated) {
    const t = st.terminated;
    const error = t.reason === 'StartError' || t.reason === 'ContainerCannotRun' ? (t.message ?? t.reason) : '';
    return { status: 'exited', exitCode: t.exitCode, error, oomKilled: t.reason === 'OOMKilled', startedAt: iso(t.startedAt), finishedAt: iso(t.finishedAt ?? new Date()) };
  }
  const waiting = st?.waiting;
  if (waiting?.reason && FATAL_WAITING.has(waiting.reason)) return { status: 'exited', exitCode: 125, error: `${waiting.reason}: ${waiting.message ?? ''}`.trim() };
  // An init container that cannot start (its image cannot be pulled) holds the pod forever: as fatal.
  const stuck = stuckInit(pod);
  if (stuck) {
    const reason = `${stuck.reason}: ${stuck.message ?? ''}`.trim();
    return { status: 'exited', exitCode: 125, error: stuck.name === FEED_CONTAINER ? feedFailure(stuck.image, reason) : `init container ${stuck.name} (image ${stuck.image}): ${reason}` };
  }
  const failed = failedInit(pod);
  if (failed && (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded')) {
    return { status: 'exited', exitCode: 125, error: `init container ${failed.name} failed (exit code ${failed.exitCode})${failed.message ? `: ${failed.message}` : ''}`, finishedAt: new Date().toISOString() };
  }
  if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') {
    return { status: 'exited', exitCode: 137, error: pod.status.reason === 'DeadlineExceeded' ? '' : (pod.status.message ?? pod.status.reason ?? ''), finishedAt: new Date().toISOString() };
  }
  return { status: 'created' };
}
