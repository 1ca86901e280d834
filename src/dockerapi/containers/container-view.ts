/**
 * A container as clients read it: `docker inspect` (inspectContainer), `docker ps` (listItem, its STATUS and
 * ports). Moved out of model.ts so that the records import nothing of mounts and volumes.
 */
import { imageId, ZERO_TIME, type ContainerRecord, type NetworkRecord } from '../model.js';
import type { DockerMount } from '../volumes/volumes.js';
import { DEFAULT_SHM_SIZE } from './mounts.js';
import { since } from '../http/api-version.js';

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

/**
 * The container's NetworkSettings as a client of API `version` reads them. Since 1.44 each user-defined network's
 * endpoint has DNSNames (name, aliases, short id: what the others reach it by); before 1.45 the short id is also one
 * of its Aliases; from 1.52 the deprecated top-level copies of the default endpoint (IPAddress, Gateway, …) are gone.
 */
export function networkSettings(c: ContainerRecord, networks: Map<string, NetworkRecord>, version: string): Record<string, unknown> {
  const nets: Record<string, unknown> = {};
  const ip = c.status === 'running' ? (c.podIP ?? '') : '';
  const shortId = c.id.slice(0, 12);
  for (const [netId, aliases] of c.networks) {
    const n = networks.get(netId);
    if (!n) continue;
    const userDefined = !n.builtin;
    nets[n.name] = {
      NetworkID: n.id,
      EndpointID: c.status === 'running' ? c.id.slice(0, 24) : '',
      IPAddress: ip,
      IPPrefixLen: ip ? 32 : 0,
      Gateway: '',
      MacAddress: '',
      Aliases: userDefined && !since(version, '1.45') ? [...aliases, shortId] : aliases,
      DNSNames: userDefined ? [...new Set([c.name, ...aliases, shortId])] : null,
      Links: null,
      IPAMConfig: null,
      DriverOpts: null,
    };
  }
  const defaultEndpoint = since(version, '1.52') ? {} : { IPAddress: ip, IPPrefixLen: ip ? 32 : 0, Gateway: '', MacAddress: '', Bridge: '' };
  return { ...defaultEndpoint, SandboxID: '', Ports: portsObject(c), Networks: nets };
}

/** `mounts`: the container's mounts as dockerd lists them (volumes.ts dockerMounts). */
export function inspectContainer(c: ContainerRecord, networks: Map<string, NetworkRecord>, mounts: DockerMount[], version: string): Record<string, unknown> {
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
    NetworkSettings: networkSettings(c, networks, version),
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

export function listItem(c: ContainerRecord, networks: Map<string, NetworkRecord>, mounts: DockerMount[], version: string): Record<string, unknown> {
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
    NetworkSettings: { Networks: (networkSettings(c, networks, version) as { Networks: unknown }).Networks },
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
