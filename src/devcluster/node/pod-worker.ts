// The kubelet's work for one pod: sandbox (a podman pod), init containers in order, then the containers,
// with restarts, image and config errors, the active deadline and graceful deletion. Its view of every
// container becomes the pod's status through the store.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Faults, KubeObject, ObjectStore } from '../types.js';
import { resourceByKind } from '../api/resources.js';
import { AttachedContainer } from './attached-container.js';
import { ConfigError } from './config-error.js';
import { ContainerLog } from './container-log.js';
import { resolveEnv, expandVars, type ApiServerAddress } from './env.js';
import { containerFieldPath, type EventRecorder } from './events.js';
import { forgetHostsFile, podHostname, writeHostsFile } from './hosts.js';
import { pullFailureMessage, pullPolicy, type ImageCache, type ImageInfo, type ImageLookup } from './images.js';
import { isFullyIsolated } from './network-policy.js';
import type { ExitFiles } from './exit-files.js';
import { CLUSTER_LABEL, containerRunArgs, isOnMount, podCreateArgs, podmanPodName, type ContainerSpec, type Mount } from './podman-args.js';
import { podmanMessage, type PodmanCli } from './podman-cli.js';
import { composePodStatus, terminatedReason, type ContainerStatus } from './pod-status.js';
import { parseQuantity } from './quantity.js';
import type { Sandbox } from './sandbox-pool.js';
import { securitySettings } from './security.js';
import { removeMemoryVolumes } from './memory-volumes.js';
import { materializeVolume, refreshVolumeTokens, tokenRefreshSeconds, type VolumeContext } from './volumes.js';

/** what the node shares with its pod workers */
export interface NodeContext {
  store: ObjectStore;
  cli: PodmanCli;
  /** the same podman at a lower priority, for work nobody waits on */
  housekeepingCli: PodmanCli;
  events: EventRecorder;
  faults: Faults;
  clusterId: string;
  nodeName: string;
  hostIP: string;
  stateDir: string;
  /** tmpfs directory for emptyDir medium Memory */
  memoryDir: string;
  nodeCpu: number;
  nodeMemory: number;
  /** first CrashLoopBackOff delay, doubled per restart up to 5 minutes */
  restartBackoffMs: number;
  /** first ImagePullBackOff delay, doubled per attempt up to imageBackoffMaxMs */
  imageBackoffMs: number;
  imageBackoffMaxMs: number;
  /** how long a missing image shows ErrImagePull before ImagePullBackOff */
  errImagePullMs: number;
  /** the hosts file content this pod should see now */
  hostsContent(pod: KubeObject, podIP: string | undefined): string;
  /** the pod's IP or phase changed: other pods' hosts files may need it */
  networkChanged(): void;
  /** image lookups, kept while podman's image store is unchanged */
  images: Pick<ImageCache, 'lookup' | 'forget' | 'pathKind'>;
  /** conmon's exit files, watched: a container's end is known when its process ended, not when `podman run` did */
  exitFiles?: ExitFiles;
  /** a ready sandbox (infra running, IP known) for an ordinary pod, or one without a network for an isolated pod, if one is at hand */
  takeSandbox(isolated: boolean): Sandbox | undefined;
  /** this pod is starting: housekeeping waits; the returned function says it has started (or given up) */
  beginStartup(): () => void;
  /** resolves when housekeeping may run (no pod starting, or waited long enough) */
  idle(): Promise<void>;
  /** where pods reach the API server, once it listens there */
  apiServer(): ApiServerAddress | undefined;
  /** a token for a projected serviceAccountToken source, bound to the pod (the kubelet's TokenRequest) */
  serviceAccountToken?(pod: KubeObject, projection: { audience?: string; expirationSeconds?: number }): string;
}

const CRASH_BACKOFF_MAX_MS = 300_000;
/** podman's states of a container whose process never ran */
const NEVER_STARTED = new Set(['configured', 'created']);
/** CreateContainerConfigError is retried after this, doubling up to the max (a fixed Secret or ConfigMap is picked up sooner on a config change) */
const CONFIG_BACKOFF_MS = 500;
const CONFIG_BACKOFF_MAX_MS = 10_000;

/** one container's waits between tries, kept across its instances */
interface SlotBackoff {
  crashes: number;
  configMs: number;
  imageMs: number;
}

type Terminated = NonNullable<ContainerStatus['state']['terminated']>;

/** one container of the pod as the node tracks it */
export interface ContainerSlot {
  spec: any;
  init: boolean;
  status: ContainerStatus;
  /** log files written so far: instance k logs to <k>.log */
  instances: number;
  /** log file of the current running or terminated instance */
  currentIndex?: number;
  /** log file of lastState.terminated */
  lastIndex?: number;
  podmanId?: string;
  attached?: AttachedContainer;
  log?: ContainerLog;
}

class Aborted extends Error {}

export class PodWorker {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  /** the podman pod: the pod's own, or a pooled one it took over */
  podmanPod: string;
  infraName: string;
  /** the pod's part of its containers' names: unique per pod uid whichever sandbox it runs in */
  private readonly containerBase: string;
  /** the sandbox's UTS namespace carries the pod's hostname (own sandbox); a pooled one does not */
  private sharedUts = true;
  readonly podDir: string;
  readonly initSlots: ContainerSlot[];
  readonly slots: ContainerSlot[];
  pod: KubeObject;
  podIP?: string;
  /** pid of the infra container: its network namespace is the pod's */
  infraPid?: number;
  isolated = false;
  private sandboxReady = false;
  private startTime?: string;
  /** startTime with milliseconds: the deadline counts from here */
  private startMs = 0;
  private failure?: { reason: string; message: string };
  private readonly abort = new AbortController();
  /** every `podman run` of this pod still running: a container's may outlive its end (cleanup) */
  private readonly podmanRuns = new Set<AttachedContainer>();
  private deadlineTimer?: NodeJS.Timeout;
  /** the next rotation of the pod's projected service account tokens */
  private tokenTimer?: NodeJS.Timeout;
  private statusQueued = false;
  private gone = false;
  private terminating?: Promise<void>;
  /** the grace period the termination under way was given; a later DELETE may only shorten it */
  private terminatingGrace = Infinity;
  private runDone: Promise<void> = Promise.resolve();
  private wakeConfig: (() => void)[] = [];
  private podmanPodRemoved = false;
  private sandboxRemoval: Promise<void> = Promise.resolve();
  private networkKnown?: Promise<void>;
  private endStartup: () => void = () => undefined;
  /** regular containers whose first instance has run (or ended) */
  private readonly startedSlots = new Set<ContainerSlot>();

  constructor(
    private readonly ctx: NodeContext,
    pod: KubeObject,
  ) {
    this.pod = pod;
    this.uid = pod.metadata.uid!;
    this.namespace = pod.metadata.namespace ?? 'default';
    this.name = pod.metadata.name!;
    this.podmanPod = podmanPodName(ctx.clusterId, this.namespace, this.name, this.uid);
    this.containerBase = this.podmanPod;
    this.infraName = `${this.podmanPod}-infra`;
    this.podDir = join(ctx.stateDir, 'pods', this.uid);
    const hasInit = (pod.spec?.initContainers ?? []).length > 0;
    this.initSlots = (pod.spec?.initContainers ?? []).map((c: any) => newSlot(c, true, 'PodInitializing'));
    this.slots = (pod.spec?.containers ?? []).map((c: any) => newSlot(c, false, hasInit ? 'PodInitializing' : 'ContainerCreating'));
  }

  get hostsFile(): string {
    return join(this.podDir, 'etc-hosts');
  }

  get terminated(): boolean {
    return this.gone;
  }

  /** the pod shares the node's network namespace: no sandbox of the pool, the node's IP */
  private get hostNetwork(): boolean {
    return this.pod.spec?.hostNetwork === true;
  }

  private get hostIPC(): boolean {
    return this.pod.spec?.hostIPC === true;
  }

  slot(name: string): ContainerSlot | undefined {
    return [...this.initSlots, ...this.slots].find((s) => s.spec.name === name);
  }

  logFile(slot: ContainerSlot, index: number): string {
    return join(this.podDir, 'logs', slot.spec.name, `${index}.log`);
  }

  start(): void {
    this.startMs = Date.now();
    this.startTime = isoNow();
    this.endStartup = this.ctx.beginStartup();
    this.armDeadline();
    this.queueStatus();
    this.runDone = this.run()
      .catch(() => undefined)
      .finally(() => this.endStartup());
  }

  /** a newer version of the pod arrived from the store */
  update(pod: KubeObject): void {
    if (pod.metadata.uid !== this.uid) return;
    const deadlineChanged = pod.spec?.activeDeadlineSeconds !== this.pod.spec?.activeDeadlineSeconds;
    this.pod = pod;
    if (deadlineChanged) this.armDeadline();
    if (pod.metadata.deletionTimestamp) void this.terminate(pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30);
  }

  /** a ConfigMap or Secret changed: containers waiting on CreateContainerConfigError try again now */
  configChanged(): void {
    const wakers = this.wakeConfig;
    this.wakeConfig = [];
    for (const w of wakers) w();
  }

  /** graceful deletion: SIGTERM, SIGKILL after the grace period, then the pod leaves the store */
  terminate(graceSeconds: number): Promise<void> {
    const grace = Math.max(0, Math.floor(graceSeconds));
    if (!this.terminating) {
      this.terminatingGrace = grace;
      this.terminating = this.doTerminate(grace);
    } else if (grace < this.terminatingGrace) {
      // as the kubelet: a shorter grace period (`kubectl delete --now` after a plain delete) kills sooner;
      // a second `podman stop` with the shorter timeout ends the first one too
      this.terminatingGrace = grace;
      void this.stopSandbox(grace).catch(() => undefined);
    }
    return this.terminating;
  }

  /**
   * Stops the pod at once and removes what it left. `podRemoved`: the pod left the API (a force delete), and the
   * kubelet's killContainer records Killing for each container it stops, as on a graceful delete.
   */
  async kill(podRemoved = false): Promise<void> {
    const finished = this.isTerminalNow();
    if (podRemoved && !this.gone && !this.abort.signal.aborted) this.recordKilling();
    this.gone = true;
    this.abort.abort();
    this.endStartup();
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.tokenTimer);
    // nothing runs in a finished pod's sandbox: its removal is housekeeping, which lets starting pods go first
    // (a tool that runs pods back to back deletes each one as the next starts; both contend for podman's locks)
    if (finished) await this.ctx.idle();
    // the containers go first: waiting for the pod's work before would wait for them to end by themselves
    await this.removeSandbox();
    await this.runDone;
    // a sandbox whose creation was under way during the removal
    await this.removeSandbox();
    this.removeFiles();
  }

  private async doTerminate(graceSeconds: number): Promise<void> {
    this.abort.abort();
    this.endStartup();
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.tokenTimer);
    this.recordKilling();
    await this.stopUntilDone(graceSeconds);
    this.flushStatus();
    this.gone = true;
    // podman first: once the pod has left the API, nothing of it is left in podman either
    await this.removeSandbox();
    try {
      const current = this.ctx.store.tryGet(resourceByKind('Pod'), this.namespace, this.name);
      if (current && current.metadata.uid === this.uid) this.ctx.store.remove(resourceByKind('Pod'), this.namespace, this.name);
    } catch {
      // already removed by someone else
    }
    this.removeFiles();
  }

  /** the kubelet's token manager: replaces projected tokens before they expire, for as long as the pod runs */
  private armTokenRefresh(vctx: VolumeContext): void {
    if (this.tokenTimer) return;
    const volumes: any[] = this.pod.spec?.volumes ?? [];
    const seconds = Math.min(...volumes.map((v) => tokenRefreshSeconds(v) ?? Infinity));
    if (!Number.isFinite(seconds)) return;
    this.tokenTimer = setTimeout(() => {
      this.tokenTimer = undefined;
      if (this.gone || this.abort.signal.aborted || this.isTerminalNow()) return;
      for (const v of volumes) {
        if (tokenRefreshSeconds(v) === undefined) continue;
        try {
          refreshVolumeTokens(v, { ...vctx, pod: this.pod });
        } catch (e) {
          this.ctx.events.record(this.pod, 'Warning', 'FailedMount', `MountVolume.SetUp failed for volume "${v.name}" : ${(e as Error).message}`);
        }
      }
      this.armTokenRefresh(vctx);
    }, seconds * 1000);
  }

  private armDeadline(): void {
    clearTimeout(this.deadlineTimer);
    const seconds = this.pod.spec?.activeDeadlineSeconds;
    if (typeof seconds !== 'number' || !this.startTime || this.abort.signal.aborted) return;
    const due = this.startMs + seconds * 1000 - Date.now();
    this.deadlineTimer = setTimeout(() => void this.deadlineExceeded(), Math.max(0, due));
  }

  private async deadlineExceeded(): Promise<void> {
    if (this.abort.signal.aborted || this.isTerminalNow()) return;
    this.failure = { reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' };
    clearTimeout(this.tokenTimer);
    this.ctx.events.record(this.pod, 'Normal', 'DeadlineExceeded', 'Pod was active on the node longer than the specified deadline');
    this.abort.abort();
    this.recordKilling();
    await this.stopUntilDone(0);
    this.queueStatus();
    this.ctx.networkChanged();
    await this.removeSandbox();
  }

  /** killContainer's event, for each container that runs */
  private recordKilling(): void {
    for (const s of [...this.initSlots, ...this.slots]) {
      if (s.attached) this.ctx.events.record(this.pod, 'Normal', 'Killing', `Stopping container ${s.spec.name}`, { fieldPath: containerFieldPath(s.init, s.spec.name) });
    }
  }

  private isTerminalNow(): boolean {
    const status = this.composeStatus(undefined);
    return status.phase === 'Succeeded' || status.phase === 'Failed';
  }

  // ---- the pod's life ----

  private async run(): Promise<void> {
    const prefetched = new Map<string, Promise<ImageLookup>>();
    for (const s of [...this.initSlots, ...this.slots]) {
      if (!prefetched.has(s.spec.image)) prefetched.set(s.spec.image, this.ctx.images.lookup(s.spec.image));
    }
    if (this.ctx.faults.delayPodStartMs > 0) await this.sleep(this.ctx.faults.delayPodStartMs);
    await this.createSandbox();
    // the infra (the pod's network) starts while the first containers are being created
    this.network().catch(() => undefined);
    for (const s of this.initSlots) {
      const ok = await this.runContainer(s, prefetched);
      if (!ok) {
        this.queueStatus();
        await this.finishIfTerminal();
        return;
      }
    }
    for (const s of this.slots) s.status.state = { waiting: { reason: 'ContainerCreating' } };
    this.queueStatus();
    await Promise.all(this.slots.map((s) => this.runContainer(s, prefetched)));
    this.queueStatus();
    await this.finishIfTerminal();
  }

  /** a finished pod keeps its status and logs but no longer needs podman */
  private async finishIfTerminal(): Promise<void> {
    if (this.abort.signal.aborted) return;
    if (!this.isTerminalNow()) return;
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.tokenTimer);
    this.ctx.networkChanged();
    // housekeeping: pods still starting go first, and it runs at a lower priority than the reads of the
    // pod's logs and files that usually follow a pod's end
    await this.ctx.idle();
    await this.removeSandbox(this.ctx.housekeepingCli);
  }

  private async createSandbox(): Promise<void> {
    if (this.takePooledSandbox()) return;
    let backoff = 1000;
    for (;;) {
      this.throwIfAborted();
      const policies = this.ctx.store.list(resourceByKind('NetworkPolicy'), this.namespace).items;
      this.isolated = isFullyIsolated(this.pod, policies);
      mkdirSync(this.podDir, { recursive: true });
      writeHostsFile(this.hostsFile, this.ctx.hostsContent(this.pod, undefined));
      const labels = { [CLUSTER_LABEL]: this.ctx.clusterId, 'io.berth.namespace': this.namespace, 'io.berth.pod': this.name, 'io.berth.uid': this.uid };
      const spec = { name: this.podmanPod, infraName: this.infraName, hostname: podHostname(this.pod), labels, isolated: this.isolated, hostNetwork: this.hostNetwork, hostIPC: this.hostIPC };
      const created = await this.ctx.cli.run(podCreateArgs(spec));
      if (created.code === 0) {
        this.podmanPodRemoved = false;
        break;
      }
      const failure = podmanMessage(created);
      this.ctx.events.record(this.pod, 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${failure}`);
      await this.ctx.cli.run(['pod', 'rm', '-f', '-t', '0', this.podmanPod]);
      await this.sleep(backoff);
      backoff = Math.min(backoff * 2, 30_000);
    }
  }

  /** a pod on the pod network, or isolated, takes a ready sandbox: its IP is known at once */
  private takePooledSandbox(): boolean {
    this.throwIfAborted();
    const policies = this.ctx.store.list(resourceByKind('NetworkPolicy'), this.namespace).items;
    this.isolated = isFullyIsolated(this.pod, policies);
    if (this.hostNetwork || this.hostIPC) return false;
    const sandbox = this.ctx.takeSandbox(this.isolated);
    if (!sandbox) return false;
    this.podmanPod = sandbox.name;
    this.infraName = sandbox.infraName;
    this.sharedUts = false;
    this.infraPid = sandbox.infraPid;
    this.podIP = sandbox.ip || undefined;
    this.sandboxReady = true;
    this.networkKnown = Promise.resolve();
    mkdirSync(this.podDir, { recursive: true });
    writeHostsFile(this.hostsFile, this.ctx.hostsContent(this.pod, this.podIP));
    this.queueStatus();
    this.ctx.networkChanged();
    return true;
  }

  /** the pod's IP and network namespace: the infra container started and inspected, once */
  private network(): Promise<void> {
    if (!this.networkKnown) {
      this.networkKnown = this.learnNetwork().catch((err) => {
        this.networkKnown = undefined;
        throw err;
      });
    }
    return this.networkKnown;
  }

  private async learnNetwork(): Promise<void> {
    const started = await this.ctx.cli.run(['start', this.infraName]);
    if (started.code !== 0) throw new Error(podmanMessage(started));
    const inspected = await this.ctx.cli.run(['inspect', this.infraName, '--format', '{{.State.Pid}} {{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}']);
    if (inspected.code !== 0) throw new Error(podmanMessage(inspected));
    const [pid, ip] = inspected.stdout.trim().split(/\s+/);
    this.infraPid = Number(pid) || undefined;
    // a hostNetwork pod has the node's address, as on a real node
    this.podIP = this.hostNetwork ? this.ctx.hostIP : ip || undefined;
    this.sandboxReady = true;
    writeHostsFile(this.hostsFile, this.ctx.hostsContent(this.pod, this.podIP));
    this.queueStatus();
    this.ctx.networkChanged();
  }

  /** runs one container until it is done for good; true when it ended successfully */
  private async runContainer(slot: ContainerSlot, prefetched: Map<string, Promise<ImageLookup>>): Promise<boolean> {
    const backoff: SlotBackoff = { crashes: 0, configMs: CONFIG_BACKOFF_MS, imageMs: this.ctx.imageBackoffMs };
    /** the previous instance's `podman run`, which may still be cleaning up after its container ended */
    let previousRun: AttachedContainer | undefined;
    try {
      for (;;) {
        this.throwIfAborted();
        const spec = await this.readySpec(slot, prefetched, backoff);
        if (!spec) continue;
        this.throwIfAborted();
        const attached = await this.launch(slot, spec, previousRun, backoff);
        if (!attached) continue;
        previousRun = attached;
        const terminated = await this.untilTerminated(slot, attached);
        if (this.abort.signal.aborted) return false;
        const done = this.doneAfter(slot, terminated);
        if (done !== undefined) return done;
        await this.backOffRestart(slot, terminated, backoff);
      }
    } catch (err) {
      if (err instanceof Aborted) return false;
      // never let one pod take the node down: report and give up on this container
      this.setWaiting(slot, 'RunContainerError', String((err as Error)?.message ?? err));
      return false;
    }
  }

  /**
   * What the next instance runs: the image (first, as the kubelet does: a missing image hides config
   * errors), the pod's network and the container's settings. Undefined after a failure was shown and its
   * back-off waited.
   */
  private async readySpec(slot: ContainerSlot, prefetched: Map<string, Promise<ImageLookup>>, backoff: SlotBackoff): Promise<ContainerSpec | undefined> {
    const lookup = prefetched.get(slot.spec.image);
    prefetched.delete(slot.spec.image);
    const image = await this.ensureImage(slot, lookup ?? this.ctx.images.lookup(slot.spec.image), backoff.imageMs);
    if (!image) {
      backoff.imageMs = Math.min(backoff.imageMs * 2, this.ctx.imageBackoffMaxMs);
      return undefined;
    }
    backoff.imageMs = this.ctx.imageBackoffMs;
    slot.status.imageID = image.imageRef;
    // the container joins the pod's network, which must be up first (a pooled sandbox's is)
    try {
      await this.network();
    } catch (err) {
      this.throwIfAborted();
      const message = (err as Error).message;
      this.setWaiting(slot, 'CreateContainerError', message);
      this.ctx.events.record(this.pod, 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${message}`, {});
      await this.sleep(this.crashDelay(++backoff.crashes) || 1000);
      return undefined;
    }
    try {
      const spec = this.containerSpec(slot, image);
      backoff.configMs = CONFIG_BACKOFF_MS;
      await this.createMissingWorkingDir(spec, image);
      return spec;
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.setWaiting(slot, 'CreateContainerConfigError', err.message);
      this.ctx.events.record(this.pod, 'Warning', 'Failed', `Error: ${err.message}`, { fieldPath: containerFieldPath(slot.init, slot.spec.name) });
      await this.sleep(backoff.configMs, true);
      backoff.configMs = Math.min(backoff.configMs * 2, CONFIG_BACKOFF_MAX_MS);
      return undefined;
    }
  }

  /**
   * runc creates a working directory the image lacks (root's, 0755) and starts the container in it; podman
   * refuses `--workdir` to one. An empty directory mounted there as podman's overlay volume is that directory,
   * its writes kept with the container. Below a volume, podman leaves the path to runc, which creates it there.
   */
  private async createMissingWorkingDir(spec: ContainerSpec, image: ImageInfo): Promise<void> {
    const workingDir = spec.workingDir;
    if (!workingDir || isOnMount(workingDir, spec.mounts)) return;
    if ((await this.ctx.images.pathKind(image, workingDir)) !== 'missing') return;
    const empty = join(this.ctx.stateDir, 'empty-workdir');
    mkdirSync(empty, { recursive: true });
    spec.mounts.push({ hostPath: empty, containerPath: workingDir, readOnly: false, overlay: true });
  }

  /**
   * One `podman run` creates and starts the next instance; it is the slot's only once podman created it.
   * Undefined when podman could not create it (shown, back-off waited).
   */
  private async launch(slot: ContainerSlot, spec: ContainerSpec, previousRun: AttachedContainer | undefined, backoff: SlotBackoff): Promise<AttachedContainer | undefined> {
    const fieldPath = containerFieldPath(slot.init, slot.spec.name);
    const index = slot.instances;
    const runDir = join(this.podDir, 'run');
    const files = { cidFile: join(runDir, `${slot.spec.name}-${index}.cid`), pidFile: join(runDir, `${slot.spec.name}-${index}.pid`) };
    mkdirSync(runDir, { recursive: true });
    rmSync(files.cidFile, { force: true });
    rmSync(files.pidFile, { force: true });
    mkdirSync(join(this.podDir, 'logs', slot.spec.name), { recursive: true });
    const log = new ContainerLog(this.logFile(slot, index), this.ctx.faults);
    const attached = new AttachedContainer(this.ctx.cli, containerRunArgs(spec, files), files, { stdin: slot.spec.stdin === true, stdinOnce: slot.spec.stdinOnce === true, tty: slot.spec.tty === true }, log, this.ctx.exitFiles);
    this.podmanRuns.add(attached);
    void attached.exited.then(() => this.podmanRuns.delete(attached));
    const createdId = await attached.created;
    if (!createdId) {
      await attached.exited;
      log.close();
      rmSync(this.logFile(slot, index), { force: true });
      this.throwIfAborted();
      // the image may have gone since it was looked up
      this.ctx.images.forget(slot.spec.image);
      const message = podmanMessage({ code: attached.exitCode ?? -1, stdout: '', stderr: attached.podmanError }) || `podman run exited with ${attached.exitCode}`;
      this.setWaiting(slot, 'CreateContainerError', message);
      this.ctx.events.record(this.pod, 'Warning', 'Failed', `Error: ${message}`, { fieldPath });
      await this.sleep(this.crashDelay(++backoff.crashes) || 1000);
      return undefined;
    }
    const previousId = slot.podmanId;
    slot.podmanId = createdId;
    // once its `podman run` has ended: removing a container under it makes podman report errors
    if (previousId) void (previousRun?.exited ?? Promise.resolve()).then(() => this.ctx.cli.run(['rm', '-f', '-t', '0', previousId]));
    if (slot.instances > 0) slot.status.restartCount++;
    slot.instances++;
    this.ctx.events.record(this.pod, 'Normal', 'Created', `Created container ${slot.spec.name}`, { fieldPath });
    slot.log = log;
    slot.attached = attached;
    slot.currentIndex = index;
    slot.status.containerID = `podman://${slot.podmanId}`;
    return attached;
  }

  /** The launched instance from its start to its end: running, then terminated, in the pod's status. */
  private async untilTerminated(slot: ContainerSlot, attached: AttachedContainer): Promise<Terminated> {
    const containerID = slot.status.containerID!;
    const spawnedAt = isoNow();
    const runs = await attached.running;
    this.slotStarted(slot);
    if (runs) {
      slot.status.state = { running: { startedAt: isoNow() } };
      slot.status.started = !slot.init;
      slot.status.ready = !slot.init;
      this.recordStarted(slot);
      this.queueStatus();
    }
    await attached.ended;
    slot.log?.close();
    slot.attached = undefined;
    void attached.exited.then(() => this.reportLateOutput(slot, attached));
    const startedAt = slot.status.state.running?.startedAt ?? spawnedAt;
    const code = attached.exitCode;
    // podman's inspect only adds news for podman's own failures (>= 125), kills and possible OOM kills,
    // and it has them once `podman run` has ended
    // A pod already removed from the store has no status to show: asking podman would only hold its locks while
    // the next pods start (a tool that removes each container with `rm -f` kills every one of them).
    const terminated =
      (code !== null && code < 125 && slot.spec.resources?.limits?.memory === undefined) || this.gone
        ? { exitCode: code ?? 137, reason: terminatedReason(code ?? 137, false), startedAt, finishedAt: isoNow(), containerID }
        : await attached.exited.then(() => this.inspectExit(slot.podmanId!, containerID, startedAt, attached.podmanError));
    // a container that never started has no output of its own: what its log holds is podman's error, now the message
    if (terminated.reason === 'StartError') rmSync(this.logFile(slot, slot.currentIndex!), { force: true });
    // the kubelet records Started once the runtime started the process, however soon it ended
    else if (!runs && !this.gone && terminated.reason !== 'ContainerStatusUnknown') this.recordStarted(slot);
    slot.status.state = { terminated };
    slot.status.started = false;
    slot.status.ready = slot.init && terminated.exitCode === 0;
    this.queueStatus();
    return terminated;
  }

  /** The pod's restartPolicy on an ended instance: whether the container is done (and succeeded), or undefined to run it again. */
  private doneAfter(slot: ContainerSlot, terminated: Terminated): boolean | undefined {
    const restartPolicy: string = this.pod.spec?.restartPolicy ?? 'Always';
    const success = terminated.exitCode === 0;
    if (slot.init) {
      if (success) return true;
      if (restartPolicy === 'Never') return false;
    } else {
      if (restartPolicy === 'Never') return success;
      if (restartPolicy === 'OnFailure' && success) return true;
    }
    return undefined;
  }

  /** Before a restart: the ended instance becomes lastState, and from the second crash on CrashLoopBackOff is waited. */
  private async backOffRestart(slot: ContainerSlot, terminated: Terminated, backoff: SlotBackoff): Promise<void> {
    slot.status.lastState = { terminated };
    slot.lastIndex = slot.currentIndex;
    const delay = this.crashDelay(++backoff.crashes);
    if (delay === 0) return;
    const seconds = formatBackoff(delay);
    slot.status.state = {
      waiting: { reason: 'CrashLoopBackOff', message: `back-off ${seconds} restarting failed container=${slot.spec.name} pod=${this.name}_${this.namespace}(${this.uid})` },
    };
    this.ctx.events.record(this.pod, 'Warning', 'BackOff', `Back-off restarting failed container ${slot.spec.name} in pod ${this.name}_${this.namespace}(${this.uid})`, { fieldPath: containerFieldPath(slot.init, slot.spec.name) });
    this.queueStatus();
    await this.sleep(delay);
  }

  /** output after the end was reported is not in the log: never expected (exit-files.ts), said if it happens */
  private reportLateOutput(slot: ContainerSlot, attached: AttachedContainer): void {
    // a pod being removed can make podman itself write to the container's stderr (it is podman's too)
    if (attached.lateOutputBytes === 0 || this.abort.signal.aborted) return;
    const message = `${attached.lateOutputBytes} bytes of output arrived after container ${slot.spec.name} was reported terminated and are not in its log`;
    this.ctx.events.record(this.pod, 'Warning', 'LateOutput', message, { fieldPath: containerFieldPath(slot.init, slot.spec.name) });
    process.stderr.write(`dev cluster: ${this.namespace}/${this.name}: ${message}\n`);
  }

  /** the kubelet's event once the runtime started the container's process */
  private recordStarted(slot: ContainerSlot): void {
    this.ctx.events.record(this.pod, 'Normal', 'Started', `Started container ${slot.spec.name}`, { fieldPath: containerFieldPath(slot.init, slot.spec.name) });
  }

  /** the pod has started once every regular container has run (or ended) once */
  private slotStarted(slot: ContainerSlot): void {
    if (slot.init) return;
    this.startedSlots.add(slot);
    if (this.startedSlots.size === this.slots.length) this.endStartup();
  }

  /** first restart at once, then the back-off doubles from restartBackoffMs up to 5 minutes */
  private crashDelay(crashes: number): number {
    if (crashes <= 1) return 0;
    return Math.min(this.ctx.restartBackoffMs * 2 ** (crashes - 2), CRASH_BACKOFF_MAX_MS);
  }

  /** the image from the local store, or undefined after showing the pull error and waiting the back-off */
  private async ensureImage(slot: ContainerSlot, lookup: Promise<ImageLookup>, backoffMs: number): Promise<ImageInfo | undefined> {
    const image: string = slot.spec.image;
    const policy = pullPolicy(slot.spec);
    const fieldPath = containerFieldPath(slot.init, slot.spec.name);
    const found = await lookup;
    this.throwIfAborted();
    if (found.found) {
      const message = policy === 'Always' ? `Successfully pulled image "${image}" in 0s (0s including waiting). Image size: 0 bytes.` : `Container image "${image}" already present on machine`;
      this.ctx.events.record(this.pod, 'Normal', 'Pulled', message, { fieldPath });
      return found.image;
    }
    if (policy === 'Never') {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      this.setWaiting(slot, 'ErrImageNeverPull', message);
      this.ctx.events.record(this.pod, 'Warning', 'ErrImageNeverPull', message, { fieldPath });
      await this.sleep(backoffMs);
      return undefined;
    }
    this.ctx.events.record(this.pod, 'Normal', 'Pulling', `Pulling image "${image}"`, { fieldPath });
    const message = pullFailureMessage(image, found.message);
    this.setWaiting(slot, 'ErrImagePull', message);
    this.ctx.events.record(this.pod, 'Warning', 'Failed', `Failed to pull image "${image}": ${message}`, { fieldPath });
    this.ctx.events.record(this.pod, 'Warning', 'Failed', 'Error: ErrImagePull', { fieldPath });
    await this.sleep(this.ctx.errImagePullMs);
    this.setWaiting(slot, 'ImagePullBackOff', `Back-off pulling image "${image}"`);
    this.ctx.events.record(this.pod, 'Normal', 'BackOff', `Back-off pulling image "${image}"`, { fieldPath });
    this.ctx.events.record(this.pod, 'Warning', 'Failed', 'Error: ImagePullBackOff', { fieldPath });
    await this.sleep(backoffMs);
    return undefined;
  }

  /** the podman container for the slot; throws ConfigError for what the kubelet reports as CreateContainerConfigError */
  private containerSpec(slot: ContainerSlot, image: ImageInfo): ContainerSpec {
    const c = slot.spec;
    const security = securitySettings(this.pod, c, image.user);
    const env = resolveEnv(c, {
      store: this.ctx.store,
      pod: this.pod,
      nodeName: this.ctx.nodeName,
      hostIP: this.ctx.hostIP,
      podIP: this.podIP,
      nodeCpu: this.ctx.nodeCpu,
      nodeMemory: this.ctx.nodeMemory,
      apiServer: this.ctx.apiServer(),
    });
    const envMap = new Map(env);
    const mounts: Mount[] = [{ hostPath: this.hostsFile, containerPath: '/etc/hosts', readOnly: false }];
    const vctx: VolumeContext = {
      store: this.ctx.store,
      pod: this.pod,
      nodeName: this.ctx.nodeName,
      hostIP: this.ctx.hostIP,
      podIP: this.podIP,
      nodeMemory: this.ctx.nodeMemory,
      dirs: { podVolumes: join(this.podDir, 'volumes'), podMemoryVolumes: join(this.ctx.memoryDir, this.uid), claims: join(this.ctx.stateDir, 'claims') },
      serviceAccountToken: this.ctx.serviceAccountToken ? (projection) => this.ctx.serviceAccountToken!(this.pod, projection) : undefined,
    };
    const volumes: any[] = this.pod.spec?.volumes ?? [];
    const hostPaths = new Map<string, string>();
    for (const vm of c.volumeMounts ?? []) {
      const volume = volumes.find((v) => v.name === vm.name);
      if (!volume) throw new ConfigError(`cannot find volume "${vm.name}" to mount into container "${c.name}"`);
      let hostPath = hostPaths.get(vm.name);
      if (hostPath === undefined) {
        hostPath = materializeVolume(volume, vctx);
        hostPaths.set(vm.name, hostPath);
        if (tokenRefreshSeconds(volume) !== undefined) this.armTokenRefresh(vctx);
      }
      const subPath: string | undefined = vm.subPathExpr ? expandVars(vm.subPathExpr, envMap) : vm.subPath;
      if (subPath) {
        if (subPath.startsWith('/') || subPath.split('/').includes('..')) throw new ConfigError(`invalid subpath "${subPath}"`);
        hostPath = join(hostPath, subPath);
        // as the kubelet: a missing subPath becomes a directory; an existing file or directory is mounted as it is
        if (!volume.configMap && !volume.secret && !volume.projected && !volume.downwardAPI && !existsSync(hostPath)) mkdirSync(hostPath, { recursive: true });
      }
      const readOnly = vm.readOnly === true || Boolean(volume.configMap || volume.secret || volume.projected || volume.downwardAPI);
      mounts.push({ hostPath, containerPath: vm.mountPath, readOnly });
    }
    const limits = c.resources?.limits ?? {};
    return {
      podName: this.podmanPod,
      name: `${this.containerBase}-${c.name}-${slot.instances}`,
      labels: { [CLUSTER_LABEL]: this.ctx.clusterId, 'io.berth.uid': this.uid, 'io.berth.container': c.name },
      image: c.image,
      command: c.command?.map((a: string) => expandVars(a, envMap)),
      args: c.args?.map((a: string) => expandVars(a, envMap)),
      env,
      workingDir: c.workingDir,
      security,
      stdin: c.stdin === true,
      tty: c.tty === true,
      memoryBytes: limits.memory !== undefined ? parseQuantity(limits.memory) : undefined,
      cpus: limits.cpu !== undefined ? parseQuantity(limits.cpu) : undefined,
      mounts,
      hostname: this.sharedUts ? undefined : podHostname(this.pod),
      hostIPC: this.hostIPC,
    };
  }

  /**
   * Exit code, OOM and times from podman after the attach process ended. A container whose process never started
   * (its command or working directory missing) is left `created` by podman with exit code 0: it is the kubelet's
   * StartError, exit code 128, with podman's words (`podmanError`) as the message, never a success.
   */
  private async inspectExit(id: string, containerID: string, startedAt: string, podmanError: string): Promise<NonNullable<ContainerStatus['state']['terminated']>> {
    const r = await this.ctx.cli.run(['inspect', id, '--format', 'json']);
    const finishedAt = isoNow();
    if (r.code !== 0) return { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated', startedAt, finishedAt, containerID };
    try {
      const state = JSON.parse(r.stdout)[0].State;
      const exitCode: number = state.ExitCode ?? 0;
      const started = podmanTime(state.StartedAt) ?? startedAt;
      let finished = podmanTime(state.FinishedAt) ?? finishedAt;
      if (finished < started) finished = started; // podman 4.3 can stamp a fast container's finish before its start
      if (state.Error) return { exitCode: 128, reason: 'StartError', message: state.Error, startedAt: started, finishedAt: finished, containerID };
      if (NEVER_STARTED.has(state.Status)) {
        // the runtime's error comes twice, as it printed it and as podman's `Error:` line: the latter says it whole
        const said = podmanError.split('\n').filter((l) => l.startsWith('Error: ')).pop()?.slice('Error: '.length).trim();
        const message = said || podmanMessage({ code: 128, stdout: '', stderr: podmanError }) || `the container's process did not start (podman's state: ${state.Status})`;
        return { exitCode: 128, reason: 'StartError', message, startedAt: started, finishedAt: finished, containerID };
      }
      // no `signal`: containerd-based kubelets leave it unset too, the exit code says 128+n
      return { exitCode, reason: terminatedReason(exitCode, state.OOMKilled === true), startedAt: started, finishedAt: finished, containerID };
    } catch {
      return { exitCode: 137, reason: 'Error', startedAt, finishedAt, containerID };
    }
  }

  private setWaiting(slot: ContainerSlot, reason: string, message: string): void {
    slot.status.state = { waiting: { reason, message } };
    slot.status.ready = false;
    slot.status.started = false;
    this.queueStatus();
  }

  // ---- podman pod ----

  /**
   * stops the podman pod and waits for the pod's work to end. A container whose `podman start` was under way
   * during the stop can come up after it: stop again, without grace, until everything has ended.
   */
  private async stopUntilDone(graceSeconds: number): Promise<void> {
    await this.stopSandbox(graceSeconds);
    for (;;) {
      const finished = await Promise.race([this.runDone.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2000).unref())]);
      if (finished) return;
      await this.stopSandbox(0);
    }
  }

  /**
   * As the kubelet: the pod's containers get their grace period while the sandbox (the infra container,
   * which holds the network namespace) stays up, and only then is the sandbox stopped. `podman pod stop`
   * alone stops the infra container at once, and a container still shutting down loses its network.
   */
  private async stopSandbox(graceSeconds: number): Promise<void> {
    if (graceSeconds > 0) {
      const listed = await this.ctx.cli.run(['ps', '-q', '--filter', `pod=${this.podmanPod}`, '--filter', `label=io.berth.uid=${this.uid}`]);
      const ids = listed.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
      if (ids.length > 0) await this.ctx.cli.run(['stop', '-t', String(graceSeconds), ...ids], (graceSeconds + 30) * 1000);
    }
    await this.ctx.cli.run(['pod', 'stop', '-t', '0', this.podmanPod], 30_000);
  }

  /** removes the sandbox once; a second call (a delete during a finished pod's removal) waits for the first */
  private removeSandbox(cli = this.ctx.cli): Promise<void> {
    if (this.podmanPodRemoved) return this.sandboxRemoval;
    this.podmanPodRemoved = true;
    this.sandboxReady = false;
    this.sandboxRemoval = cli.run(['pod', 'rm', '-f', '-t', '0', this.podmanPod], 60_000).then(() => {
      // a container whose attach process lost podman: make sure nothing of ours lingers
      for (const run of this.podmanRuns) run.killAttachProcess();
    });
    return this.sandboxRemoval;
  }

  private removeFiles(): void {
    forgetHostsFile(this.hostsFile);
    rmSync(this.podDir, { recursive: true, force: true });
    removeMemoryVolumes(join(this.ctx.memoryDir, this.uid));
    this.ctx.events.forget(this.uid);
  }

  // ---- status ----

  private composeStatus(previous: any): any {
    return composePodStatus({
      pod: this.pod,
      previous,
      hostIP: this.ctx.hostIP,
      podIP: this.podIP,
      startTime: this.startTime,
      sandboxReady: this.sandboxReady,
      initStatuses: this.initSlots.map((s) => s.status),
      containerStatuses: this.slots.map((s) => s.status),
      failure: this.failure,
      now: isoNow(),
    });
  }

  /** status writes coalesce: many changes in one turn of the event loop become one store write */
  queueStatus(): void {
    if (this.statusQueued || this.gone) return;
    this.statusQueued = true;
    setImmediate(() => this.flushStatus());
  }

  private flushStatus(): void {
    this.statusQueued = false;
    if (this.gone) return;
    const uid = this.uid;
    try {
      this.ctx.store.mutate(
        resourceByKind('Pod'),
        this.namespace,
        this.name,
        (obj) => {
          if (obj.metadata.uid !== uid) throw new Error('pod was replaced');
          // a copy: the store keeps what it is given, and the slots' statuses change in place later
          obj.status = structuredClone(this.composeStatus(obj.status));
        },
        { subresource: 'status' },
      );
    } catch {
      // the pod is gone or replaced; its watch event will end this worker
    }
  }

  // ---- waiting ----

  private throwIfAborted(): void {
    if (this.abort.signal.aborted) throw new Aborted();
  }

  /** an abortable sleep; wakeOnConfig: a ConfigMap/Secret change ends it early */
  private sleep(ms: number, wakeOnConfig = false): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.abort.signal.aborted) return reject(new Aborted());
      const done = () => {
        clearTimeout(timer);
        this.abort.signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        clearTimeout(timer);
        reject(new Aborted());
      };
      const timer = setTimeout(done, ms);
      this.abort.signal.addEventListener('abort', onAbort, { once: true });
      if (wakeOnConfig) this.wakeConfig.push(done);
    });
  }
}

function newSlot(spec: any, init: boolean, reason: string): ContainerSlot {
  return {
    spec,
    init,
    instances: 0,
    status: { name: spec.name, image: spec.image, imageID: '', ready: false, started: false, restartCount: 0, state: { waiting: { reason } }, lastState: {} },
  };
}

function isoNow(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** podman's `2025-01-02 03:04:05.123456789 +0000 UTC` (or RFC3339) as the API's second-precision time */
export function podmanTime(t: string | undefined): string | undefined {
  if (!t || t.startsWith('0001-')) return undefined;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?/.exec(t);
  if (!m) return undefined;
  let offset = m[4] ?? 'Z';
  if (offset !== 'Z' && !offset.includes(':')) offset = `${offset.slice(0, 3)}:${offset.slice(3)}`;
  const ms = Date.parse(`${m[1]}T${m[2]}${(m[3] ?? '').slice(0, 4)}${offset}`);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

function formatBackoff(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s}s`;
}
