/**
 * The Docker engine berth pretends to be: containers are pods of one berth instance, watched through one
 * pod watch. This module is the containers' lifecycle as the routes call it; each phase has its module,
 * handed the shared state (engine-state.ts) and what it needs of the other phases: the create
 * (engine-create.ts), the start (engine-start.ts), stop, kill and wait (engine-stop.ts), removal and cleanup
 * (engine-removal.ts), the pod watch and exits (engine-watch.ts), the record on the pod and recovery
 * (engine-records.ts), exec and peeks (engine-exec.ts). It composes the rest: images (images/image-store.ts),
 * networks and alias Services (networks.ts), volumes (volumes.ts), events (event-bus.ts), recovery from
 * annotations (recovery.ts), healthchecks (containers/healthcheck.ts), Ryuk (ryuk/ryuk.ts), files
 * (containers/container-files.ts, containers/peek.ts), published ports, exec records.
 */
import type { Readable, Writable } from 'node:stream';
import { SANDBOX_CONTAINER, SandboxPlanError } from '../runtime/sandbox-plan.js';
import type { PodTemplateSource } from '../runtime/workload.js';
import type { HeldTar } from '../runtime/files.js';
import { LABEL_POD_TEMPLATE } from './containers/create-plan.js';
import type { ContainerRecord, CreateBody } from './model.js';
import type { LogQuery, Session } from './cluster.js';
import type { EventBus } from './event-bus.js';
import type { ImageStore } from './images/image-store.js';
import { commitContainer, type CommitRequest } from './images/commit.js';
import { buildImage, type BuildDeps } from './images/build.js';
import type { BuildRequest } from './images/build-request.js';
import { madeBases } from './images/build-bases.js';
import type { BuildStream } from './images/build-stream.js';
import type { ImageConfig } from './images/image-config.js';
import type { MadeImage } from './images/made-image.js';
import type { Networks } from './networks/networks.js';
import type { Platform } from './containers/platform.js';
import { dockerMounts, type DockerMount, type Volumes } from './volumes/volumes.js';
import { ANNOTATION_KEPT_FAILED } from './recovery.js';
import type { ExecStore } from './containers/exec-records.js';
import type { ContainerFiles } from './containers/container-files.js';
import { EngineState, type EngineOptions, type ExecResult } from './engine-state.js';
import { CreatePath } from './engine-create.js';
import { StartPath } from './engine-start.js';
import { StopPath, type WaitResult } from './engine-stop.js';
import { Removals } from './engine-removal.js';
import { PodWatch } from './engine-watch.js';
import { RecordNotes } from './engine-records.js';
import { ExecPath } from './engine-exec.js';

export { ANNOTATION_KEPT_FAILED, LABEL_POD_TEMPLATE, type EngineOptions };

export class Engine {
  readonly containers: Map<string, ContainerRecord>;
  readonly events: EventBus;
  readonly images: ImageStore;
  readonly networks: Networks;
  readonly volumes: Volumes;
  readonly execs: ExecStore;
  readonly files: ContainerFiles;
  private readonly s: EngineState;
  private readonly creates: CreatePath;
  private readonly starts: StartPath;
  private readonly stops: StopPath;
  private readonly removals: Removals;
  private readonly watch: PodWatch;
  private readonly records: RecordNotes;
  private readonly exec: ExecPath;

  constructor(opts: EngineOptions) {
    // The parts made with the state call back into phases made after it: each hook is read when called.
    this.s = new EngineState(opts, {
      isReaper: (c) => this.isReaper(c),
      peekSource: (c) => this.exec.peekSource(c),
      portTarget: (c) => this.starts.portTarget(c),
      reap: (filters, self) => this.removals.reap(filters, self),
      exited: (c) => this.watch.setExited(c, { exitCode: 0 }),
      started: (c) => {
        this.s.emit('container', 'start', c);
        this.s.changed(c);
      },
    });
    this.containers = this.s.containers;
    this.events = this.s.events;
    this.images = this.s.images;
    this.networks = this.s.networks;
    this.volumes = this.s.volumes;
    this.execs = this.s.execs;
    this.files = this.s.files;
    const execCollect = (c: ContainerRecord, argv: string[]): Promise<ExecResult> => this.execCollect(c, argv);
    const remove = (ref: string, force: boolean, withVolumes?: boolean): Promise<void> => this.remove(ref, force, withVolumes);
    this.creates = new CreatePath(this.s);
    const readTemplate = (name: string | undefined): Promise<PodTemplateSource | undefined> => this.creates.readTemplate(name);
    this.exec = new ExecPath(this.s, { readTemplate });
    this.records = new RecordNotes(this.s, { execCollect });
    this.watch = new PodWatch(this.s, { remove, execCollect });
    this.removals = new Removals(this.s);
    this.stops = new StopPath(this.s, { execCollect, setExited: (c, s) => this.watch.setExited(c, s) });
    this.starts = new StartPath(this.s, {
      remove,
      execCollect,
      readTemplate,
      recordAnnotation: (c) => this.records.recordAnnotation(c),
      noteRecord: (c, what) => this.records.noteRecord(c, what),
    });
  }

  get publishAddress(): string {
    return this.s.opts.publishAddress;
  }

  get owner(): string {
    return this.s.opts.owner;
  }

  /** Takes over what an earlier berth with the same instance left (recovery.ts). */
  recover(): Promise<number> {
    return this.records.recover();
  }

  startWatch(): void {
    this.watch.startWatch();
  }

  /** Whether the pod's main container has ended (or the pod is gone): a follow of its log that ended is whole. */
  podEnded(podName: string): Promise<boolean> {
    return this.watch.podEnded(podName);
  }

  /** An attached client got a short output: the run's `wait` answers with this error (docker run exits 125). */
  outputIncomplete(c: ContainerRecord, message: string): void {
    this.watch.outputIncomplete(c, message);
  }

  /** A reader of the container's output is done (AutoRemove may be waiting for it). */
  releaseReader(c: ContainerRecord): void {
    this.watch.releaseReader(c);
  }

  /** Resolves at the next change of `c` (or after `ms`). */
  nextChange(c: ContainerRecord, ms = 1000): Promise<void> {
    return this.s.nextChange(c, ms);
  }

  container(ref: string): ContainerRecord {
    return this.s.container(ref);
  }

  /** The container's mounts as inspect and ps list them. */
  mountsOf(c: ContainerRecord): DockerMount[] {
    return dockerMounts(c, (volume) => this.volumes.mountpoint(volume));
  }

  /** The template a create with these labels would be laid on (create checks it: a missing one is a 400 then, not at start). */
  podTemplateFor(labels: Record<string, string> | null | undefined): Promise<PodTemplateSource | undefined> {
    return this.creates.podTemplateFor(labels);
  }

  create(name: string | null, request: CreateBody, platform?: Platform): Promise<ContainerRecord> {
    return this.creates.create(name, request, platform);
  }

  start(ref: string): Promise<'started' | 'already'> {
    return this.starts.start(ref);
  }

  isReaper(c: ContainerRecord): boolean {
    return this.s.ryuk.isReaper(c);
  }

  containerPorts(c: ContainerRecord): number[] {
    return this.starts.containerPorts(c);
  }

  stop(ref: string, timeoutSeconds: number | undefined, signal?: string): Promise<'stopped' | 'already'> {
    return this.stops.stop(ref, timeoutSeconds, signal);
  }

  kill(ref: string, signal: string): Promise<void> {
    return this.stops.kill(ref, signal);
  }

  async restart(ref: string, timeoutSeconds?: number): Promise<void> {
    await this.stop(ref, timeoutSeconds);
    await this.start(ref);
    this.s.emit('container', 'restart', this.container(ref));
  }

  remove(ref: string, force: boolean, withVolumes = false): Promise<void> {
    return this.removals.remove(ref, force, withVolumes);
  }

  rename(ref: string, name: string): Promise<void> {
    return this.records.rename(ref, name);
  }

  wait(c: ContainerRecord, condition: string, signal: AbortSignal): Promise<WaitResult> {
    return this.stops.wait(c, condition, signal);
  }

  execCollect(c: ContainerRecord, argv: string[]): Promise<ExecResult> {
    return this.exec.execCollect(c, argv);
  }

  execStream(c: ContainerRecord, argv: string[], io: { stdin?: Readable; stdout: Writable; stderr: Writable; tty?: boolean }): Promise<number> {
    return this.exec.execStream(c, argv, io);
  }

  openLog(pod: string, q: LogQuery): Promise<Readable> {
    return this.s.cluster.openLog(pod, SANDBOX_CONTAINER, q);
  }

  attachStdin(pod: string, input: Readable, tty: boolean): Promise<Session> {
    return this.s.cluster.attachStdin(pod, SANDBOX_CONTAINER, input, tty);
  }

  connect(netRef: string, containerRef: string, aliases: string[]): Promise<void> {
    return this.records.connect(netRef, containerRef, aliases);
  }

  disconnect(netRef: string, containerRef: string): Promise<void> {
    return this.records.disconnect(netRef, containerRef);
  }

  /** `archive` may still be arriving (containers/container-files.ts starts the copy meanwhile). */
  putArchive(ref: string, path: string, archive: Promise<HeldTar>): Promise<void> {
    return this.records.putArchive(ref, path, archive);
  }

  async shutdown(): Promise<void> {
    this.watch.stop();
    await this.removals.shutdown();
    await this.images.releaseMade();
  }

  /** The config of a container's image while berth still has its record (an image removed since is unknown). */
  private imageConfigOf(c: ContainerRecord): ImageConfig | undefined {
    try {
      return this.images.find(c.image).info?.config;
    } catch {
      return undefined;
    }
  }

  /** `docker commit` (images/commit.ts): the image is recorded under the name given and its id returned. */
  async commit(ref: string, req: CommitRequest): Promise<string> {
    const c = this.container(ref);
    const made = await commitContainer(
      {
        outlet: this.s.opts.imageOutlet,
        execStream: (x, argv, io) => this.execStream(x, argv, io),
        imageConfig: (x) => this.imageConfigOf(x),
      },
      c,
      req,
    );
    const name = req.repo ? `${req.repo}:${req.tag || 'latest'}` : undefined;
    this.recordMade(made, name ? [name] : []);
    this.s.emit('container', 'commit', c, { comment: req.comment ?? '', imageID: made.id, ...(name ? { imageRef: name } : {}) });
    return made.id;
  }

  /** `docker build` (images/build.ts): the image is recorded under every tag given; its id returned. */
  async build(req: BuildRequest, context: Promise<HeldTar>, stream: BuildStream, signal?: AbortSignal): Promise<string> {
    const built = await buildImage(this.buildDeps(), req, context, stream, signal);
    this.recordMade(built, req.tags);
    return built.id;
  }

  private buildDeps(): BuildDeps {
    return {
      outlet: this.s.opts.imageOutlet,
      builderImage: this.s.opts.builderImage,
      insecure: this.s.opts.insecureRegistries ?? [],
      basesFor: (dockerfile, buildArgs) => madeBases(dockerfile, buildArgs, this.images.values()),
      createBuilder: (body) => this.creates.create(null, body, undefined, { builder: true }),
      putArchive: (c, path, archive) => this.putArchive(c.id, path, archive),
      start: async (c) => void (await this.start(c.id)),
      followLog: (c) => this.openLog(c.podName!, { follow: true }),
      exitCode: async (c, ms) => {
        const until = Date.now() + ms;
        while (c.status === 'running' && Date.now() < until) await this.nextChange(c, until - Date.now());
        return c.status === 'running' ? undefined : (c.exitCode ?? -1);
      },
      execStream: (c, argv, io) => this.execStream(c, argv, io),
      remove: (c) => this.remove(c.id, true, true),
    };
  }

  /** An image berth made, recorded under `names` (each moves to it from any other image). */
  private recordMade(made: MadeImage, names: string[]): void {
    this.images.addMade({
      id: made.id,
      pullRef: made.pullRef,
      names,
      info: {
        config: made.config as ImageConfig,
        configDigest: made.id,
        repoDigest: made.pullRef,
        created: made.created,
        architecture: made.architecture,
        os: made.os,
      },
      ...(made.servedBy ? { servedBy: made.servedBy } : {}),
      release: made.release,
    });
  }

  /** Deletes every pod, Service and claim of this instance (shutdown, and `--prune-start` for a crashed predecessor). */
  pruneCluster(): Promise<void> {
    return this.removals.pruneCluster();
  }
}

export { SandboxPlanError };
