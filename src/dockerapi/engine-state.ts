/**
 * What the engine's phases (engine-create.ts, engine-start.ts, engine-stop.ts, engine-removal.ts, engine-watch.ts,
 * engine-records.ts, engine-exec.ts) share: the options, the records, the cluster, the event bus, the networks,
 * volumes and images, and the parts a container's life goes through. Each phase is handed this, and the few
 * operations of another phase it needs as functions, never the whole Engine.
 */
import { badRequest, notFound } from './http/http.js';
import { PeekPods } from './containers/peek.js';
import { ContainerFiles, type ContainerFilesDeps } from './containers/container-files.js';
import { ArchiveSpill } from './containers/archive-spill.js';
import { PortProxy, type PortMode, type PortTarget } from './networks/port-proxy.js';
import { PortPublisher } from './networks/published-ports.js';
import type { ImageConfigSource } from './images/image-config.js';
import { DOCKER_DEFAULT_CAPABILITIES } from './containers/capabilities.js';
import type { CreatePolicy } from './containers/create-plan.js';
import type { ContainerRecord } from './model.js';
import type { ServeCluster } from './cluster.js';
import { EventBus } from './event-bus.js';
import { ImageStore } from './images/image-store.js';
import { Networks } from './networks/networks.js';
import { Volumes } from './volumes/volumes.js';
import { RyukContainers } from './ryuk/ryuk.js';
import { ExecStore } from './containers/exec-records.js';
import type { PodContext } from './containers/container-pod.js';
import type { PodTemplateSource } from '../runtime/workload.js';
import type { ContainerView } from '../runtime/pod-status.js';
import type { ImageOutlet } from './images/image-outlet.js';

export interface EngineOptions {
  cluster: ServeCluster;
  owner: string;
  ttlSeconds: number;
  /** Address published ports listen on when the client names none. */
  publishAddress: string;
  startTimeoutMs: number;
  /** How published ports reach pods: port-forward through the API server (default) or straight to the pod IP. */
  portMode?: PortMode;
  allowPrivileged: boolean;
  /** `--capabilities`: given back after dropping ALL, and all CapAdd may ask for; default Docker's set. */
  capabilities?: readonly string[];
  /** Operator's `berth.dev/…` settings (from flags); a container's labels of the same key win. */
  podDefaults?: Record<string, string>;
  /** A failed container's pod outlives `rm`, the reaper and shutdown this long (0: deleted at once). */
  keepFailedSeconds?: number;
  /** Reads image configs from registries; undefined: images stay records (--no-image-config). */
  imageConfigs?: ImageConfigSource;
  /** `--pod-template`: laid under every pod; a container's `berth.dev/pod-template` label wins. */
  podTemplate?: PodTemplateSource;
  /** An image with sh and tar: files copied before start into a container whose command is unknown go through it. */
  helperImage?: string;
  /** `--image-registry` or `--image-server`: where `docker build` and `docker commit` put their images (undefined: both are refused, saying so). */
  imageOutlet?: ImageOutlet;
  /** `--builder-image`: buildah and berth-build, run privileged for `docker build` (undefined: builds are refused, saying so). */
  builderImage?: string;
  /** `--insecure-registry`: plain-http registries (a build's base images among them). */
  insecureRegistries?: readonly string[];
}

/** How long an exit waits for attached readers to deliver the output (AutoRemove, `wait`). */
export const READERS_GRACE_MS = 60_000;

/** An unused peek pod waits this long for the next read (`docker cp` makes a HEAD and a GET). */
const PEEK_IDLE_MS = 5000;

export type ExecResult = { exitCode: number; stdout: string; stderr: string };
/** A command run in a container's pod, its output collected (engine-exec.ts). */
export type ExecCollect = (c: ContainerRecord, argv: string[]) => Promise<ExecResult>;
/** A container's removal (engine-removal.ts), for the phases that end in one. */
export type Remove = (ref: string, force: boolean, withVolumes?: boolean) => Promise<void>;
/** The end of a container's run as the pod watch notes it (engine-watch.ts). */
export type ExitState = { exitCode?: number; error?: string; oomKilled?: boolean; startedAt?: string; finishedAt?: string };

/** What the parts made here ask of the phases (the parts are made before the phases that answer). */
export interface StateHooks {
  isReaper: ContainerFilesDeps['isReaper'];
  peekSource: ContainerFilesDeps['peekSource'];
  portTarget(c: ContainerRecord): Promise<PortTarget>;
  reap(filters: string[][], self: string): Promise<void>;
  exited(c: ContainerRecord): void;
  started(c: ContainerRecord): void;
}

export class EngineState {
  readonly containers = new Map<string, ContainerRecord>();
  readonly events = new EventBus();
  readonly images: ImageStore;
  readonly networks: Networks;
  readonly volumes: Volumes;
  readonly execs = new ExecStore();
  readonly files: ContainerFiles;
  readonly cluster: ServeCluster;
  readonly peeks: PeekPods;
  /** large archives kept for a restart, on disk */
  readonly spill = new ArchiveSpill();
  readonly ports: PortPublisher;
  readonly ryuk: RyukContainers;
  /**
   * The file-feed receiver of each pod whose start feeds it (containers/file-feed.ts), as the pod watch last saw it:
   * the start path waits for it to run, then for its end. Only pods the start path put here are kept.
   */
  readonly feeds = new Map<string, ContainerView>();

  constructor(
    readonly opts: EngineOptions,
    hooks: StateHooks,
  ) {
    this.cluster = opts.cluster;
    const shared = { cluster: opts.cluster, owner: opts.owner, ttlSeconds: opts.ttlSeconds, bus: this.events, containers: this.containers };
    this.images = new ImageStore(this.events, opts.imageConfigs);
    this.networks = new Networks(shared);
    this.volumes = new Volumes(shared);
    this.peeks = new PeekPods({ cluster: opts.cluster, idleMs: PEEK_IDLE_MS, startTimeoutMs: opts.startTimeoutMs });
    this.files = new ContainerFiles({ cluster: opts.cluster, peeks: this.peeks, spill: this.spill, isReaper: hooks.isReaper, peekSource: hooks.peekSource });
    this.ports = new PortPublisher({
      publishAddress: opts.publishAddress,
      proxy: new PortProxy({
        mode: opts.portMode ?? 'forward',
        forward: (pod, port) => opts.cluster.forward(pod, port),
        log: (line) => process.stderr.write(`berth serve: ${line}\n`),
      }),
      target: hooks.portTarget,
    });
    this.ryuk = new RyukContainers({ publishAddress: opts.publishAddress, reap: hooks.reap, exited: hooks.exited, started: hooks.started });
  }

  get podContext(): PodContext {
    return { namespace: this.cluster.namespace, owner: this.opts.owner, ttlSeconds: this.opts.ttlSeconds, capabilities: this.opts.capabilities };
  }

  /** What this berth serve allows its containers: creates are judged by it (containers/create-plan.ts), once. */
  get policy(): CreatePolicy {
    return { allowed: this.opts.capabilities ?? DOCKER_DEFAULT_CAPABILITIES, allowPrivileged: this.opts.allowPrivileged, podDefaults: this.opts.podDefaults };
  }

  container(ref: string): ContainerRecord {
    const name = ref.replace(/^\//, '');
    const byId = this.containers.get(ref);
    if (byId) return byId;
    for (const c of this.containers.values()) if (c.name === name) return c;
    const matches = [...this.containers.values()].filter((c) => ref.length >= 1 && c.id.startsWith(ref));
    if (matches.length === 1) return matches[0];
    if (matches.length > 1) throw badRequest(`multiple containers match the id prefix ${ref}`);
    throw notFound(`No such container: ${ref}`);
  }

  changed(c: ContainerRecord): void {
    this.events.changed(c.id);
  }

  /** Resolves at the next change of `c` (or after `ms`). */
  nextChange(c: ContainerRecord, ms = 1000): Promise<void> {
    return this.events.nextChange(c.id, ms);
  }

  emit(type: string, action: string, c: ContainerRecord, extra: Record<string, string> = {}): void {
    this.events.emit(type, action, c, extra);
  }
}
