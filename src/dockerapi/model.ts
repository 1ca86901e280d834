/**
 * What berth remembers of Docker objects: the records of containers, networks, volumes and images, and the
 * create request they keep. Pure shapes and ids: it imports no module of the engine's (volumes, mounts,
 * networks, the create plan take their types from here, and nothing here from them). The JSON clients read
 * of a container is containers/container-view.ts; its state read from its pod, containers/pod-state.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { KeptTar } from './containers/archive-spill.js';
import type { HostConfigPlan } from './containers/host-config.js';
import type { ImageInfo } from './images/image-config.js';
import { tryNormalizeImage } from './images/image-ref.js';
import type { Platform } from './containers/platform.js';
import type { SandboxVolume } from '../runtime/sandbox-plan.js';
import type { PodSettings } from '../runtime/sandbox-settings.js';
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
    VolumeOptions?: {
      DriverConfig?: { Name?: string; Options?: Record<string, string> | null } | null;
      Labels?: Record<string, string> | null;
      Subpath?: string;
    } | null;
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
  /** Every other field is judged by containers/host-config.ts. */
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

/** An archive copied into a container at `path` (checked: runtime/files.ts; large ones kept on disk: containers/archive-spill.ts). */
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

/** What the container's pods are, as judged at create: kept on the record for every start, peek and removal. */
export interface ContainerPlan {
  hostConfig: HostConfigPlan;
  /** Named volumes by their volume name (start looks their claims up), tmpfs, /dev/shm; anonymous volumes are the record's. */
  volumes: SandboxVolume[];
  settings: PodSettings;
  /** The PodTemplate object the label `berth.dev/pod-template` names, read at each start; none: the operator's `--pod-template`. */
  templateName?: string;
  /**
   * Why this berth serve's policy refuses the container (one taken over from a berth serve that allowed it):
   * it is inspected and removed as any other, and its start answers this.
   */
  refused?: string;
}

export interface ContainerRecord {
  id: string;
  name: string;
  created: Date;
  image: string;
  /** The image's pushed digest when berth made it (`docker commit`): what the pod's image names. */
  pullRef?: string;
  /** The create request with its image's config merged in (containers/create-plan.ts). */
  body: CreateBody;
  /** What create judged of it (containers/create-plan.ts): every start, peek and removal reads this, none judges again. */
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
  health?: {
    status: 'starting' | 'healthy' | 'unhealthy';
    failingStreak: number;
    log: Array<{ Start: string; End: string; ExitCode: number; Output: string }>;
  };
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
  /** `--platform`: the pod goes to a node of it (containers/platform.ts). */
  platform?: Platform;
}

/** The run state of a record that has not started yet: where create, recovery and the tests' records begin. */
export function freshRunState(): Pick<
  ContainerRecord,
  'generation' | 'status' | 'exitCode' | 'error' | 'oomKilled' | 'restartCount' | 'pendingArchives' | 'copiedArchives' | 'ports' | 'readers'
> {
  return {
    generation: 0,
    status: 'created',
    exitCode: 0,
    error: '',
    oomKilled: false,
    restartCount: 0,
    pendingArchives: [],
    copiedArchives: [],
    ports: [],
    readers: 0,
  };
}

export interface NetworkRecord {
  id: string;
  name: string;
  driver: string;
  created: Date;
  labels: Record<string, string>;
  /** the create's driver options, as inspect shows them (checked: networks/network-options.ts) */
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
  /** What the kubelet pulls for an image berth made (`docker commit`): its pushed digest; else the reference itself. */
  pullRef?: string;
  /** The pod serving an image berth made (--image-server): the record goes when that pod does. */
  servedBy?: string;
  /** Deletes what berth pushed for it (its manifest in the --image-registry, its serving pod). */
  release?: () => Promise<void>;
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
