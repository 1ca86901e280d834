// The dev cluster's one node: a scheduler and a kubelet in one, running each pod as a podman pod.
// It registers the Node object, watches the store for pods (and what they read: ConfigMaps, Secrets,
// Services, NetworkPolicies), and serves exec, attach, logs and port-forward for the API server.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Duplex, Readable } from 'node:stream';
import type { AttachOptions, ExecOptions, Faults, KubeObject, LogOptions, NodeRuntime, ObjectStore, StreamSession, WatchEvent, WatchHandle } from '../types.js';
import { resourceByKind } from '../api/resources.js';
import { badRequest } from '../api/errors.js';
import { serveLog } from './container-log.js';
import { EventRecorder } from './events.js';
import { hostsFileContent, writeHostsFile } from './hosts.js';
import { ImageCache } from './images.js';
import { nowNs, parseTimeNs } from './log-format.js';
import { isFullyIsolated } from './network-policy.js';
import { nodeObject, nodeStatus, type NodeFacts } from './node-object.js';
import { CLUSTER_LABEL } from './podman-args.js';
import { PodmanCli } from './podman-cli.js';
import { HelperProcessRunner, type ProcessRunner } from './process-runner.js';
import { PodWorker, type NodeContext } from './pod-worker.js';
import { SandboxPool } from './sandbox-pool.js';
import { StartupGate } from './startup-gate.js';
import { checkFit } from './scheduler.js';
import { ClaimController } from './claim-controller.js';
import { parseQuantity } from './quantity.js';
import { attachSession, execSession } from './sessions.js';
import { detectRunc, runcCanExec, runcExecSession, type RuncRuntime } from './runc-exec.js';
import type { ApiServerAddress } from './env.js';
import { connectInNamespace, connectTcp } from './port-forward.js';
import { ExitFiles, podmanExitsDir } from './exit-files.js';
import { NodePortProxy } from './node-port-proxy.js';
import { removeMemoryVolumes } from './memory-volumes.js';

export interface PodmanNodeOptions {
  store: ObjectStore;
  clusterId: string;
  /** default 'berth-dev' */
  nodeName?: string;
  /** logs, volumes, hosts files */
  stateDir: string;
  faults: Faults;
  /** binary, default 'podman' */
  podman?: string;
  /** global flags, e.g. ['--runtime', '/usr/sbin/runc'] */
  podmanArgs?: string[];
  /** first CrashLoopBackOff delay (default 10 s, as the kubelet), doubled per restart up to 5 minutes */
  restartBackoffMs?: number;
  /** first ImagePullBackOff delay (default 5 s), doubled per attempt up to imageBackoffMaxMs (default 60 s) */
  imageBackoffMs?: number;
  imageBackoffMaxMs?: number;
  /** how long ErrImagePull shows before ImagePullBackOff (default 1 s) */
  errImagePullMs?: number;
  /** pod sandboxes kept ready for ordinary pods, and as many without a network for isolated pods (default 4; 0: every pod makes its own) */
  sandboxPoolSize?: number;
  /** tokens for projected serviceAccountToken volumes, bound to the pod (what the kubelet asks the TokenRequest API for) */
  serviceAccountToken?: (pod: KubeObject, projection: { audience?: string; expirationSeconds?: number }) => string;
}

const POD = resourceByKind('Pod');
const NODE = resourceByKind('Node');

export class PodmanNode implements NodeRuntime {
  readonly nodeName: string;
  readonly cli: PodmanCli;
  private readonly store: ObjectStore;
  private readonly clusterId: string;
  private readonly stateDir: string;
  private readonly opts: PodmanNodeOptions;
  private ctx?: NodeContext;
  private readonly workers = new Map<string, PodWorker>();
  /** pods the scheduler could not place, by uid → the message written */
  private readonly unschedulable = new Map<string, string>();
  private watches: WatchHandle[] = [];
  private claims?: ClaimController;
  private hostsQueued = false;
  private stopped = false;
  private pool?: SandboxPool;
  /** sandboxes without a network, for pods a deny-all NetworkPolicy isolates */
  private isolatedPool?: SandboxPool;
  private readonly startup = new StartupGate();
  private readonly nodePorts: NodePortProxy;
  private apiServerAddress?: ApiServerAddress;
  private gateway?: string;
  /** exec straight through runc when podman runs containers with it (runc-exec.ts) */
  private runc?: RuncRuntime;
  /** podman calls that run to completion run in a helper process, off this event loop */
  private readonly runner: ProcessRunner;

  constructor(opts: PodmanNodeOptions) {
    this.opts = opts;
    this.store = opts.store;
    this.clusterId = opts.clusterId;
    this.nodeName = opts.nodeName ?? 'berth-dev';
    this.stateDir = opts.stateDir;
    this.runner = new HelperProcessRunner(fileURLToPath(new URL('./runner-helper.js', import.meta.url)));
    this.cli = new PodmanCli({ binary: opts.podman, globalArgs: opts.podmanArgs, runner: this.runner });
    this.nodePorts = new NodePortProxy(opts.store);
  }

  async start(): Promise<void> {
    const [, hostIP, podmanVersion, imageStore, runc] = await Promise.all([
      this.removeLeftovers(),
      this.bridgeGateway(),
      this.podmanVersion(),
      this.imageStoreFile(),
      detectRunc(this.cli, join(this.stateDir, 'exec-logs')),
    ]);
    this.runc = runc;
    rmSync(join(this.stateDir, 'pods'), { recursive: true, force: true });
    mkdirSync(join(this.stateDir, 'pods'), { recursive: true });
    const memoryDir = existsSync('/dev/shm') ? `/dev/shm/berth-${this.clusterId}` : join(this.stateDir, 'memory');
    removeMemoryVolumes(memoryDir); // a crashed node's
    this.gateway = hostIP;
    const facts: NodeFacts = { nodeName: this.nodeName, hostIP, podmanVersion };
    this.registerNode(facts);
    const node = this.store.get(NODE, undefined, this.nodeName);
    // refills and the removal of finished pods' sandboxes run at a lower priority than the pods being started and
    // the clients reading what finished pods left (logs, files), which they would otherwise slow down
    const niceCli = new PodmanCli({ binary: 'nice', globalArgs: ['-n', '10', this.cli.binary, ...this.cli.globalArgs], runner: this.runner });
    this.ctx = {
      store: this.store,
      cli: this.cli,
      housekeepingCli: niceCli,
      events: new EventRecorder(this.store, this.nodeName),
      faults: this.opts.faults,
      clusterId: this.clusterId,
      nodeName: this.nodeName,
      hostIP,
      stateDir: this.stateDir,
      memoryDir,
      nodeCpu: parseQuantity(node.status?.allocatable?.cpu ?? '1'),
      nodeMemory: parseQuantity(node.status?.allocatable?.memory ?? '1Gi'),
      restartBackoffMs: this.opts.restartBackoffMs ?? 10_000,
      imageBackoffMs: this.opts.imageBackoffMs ?? 5_000,
      imageBackoffMaxMs: this.opts.imageBackoffMaxMs ?? 60_000,
      errImagePullMs: this.opts.errImagePullMs ?? 1_000,
      hostsContent: (pod, podIP) => this.hostsFor(pod, podIP),
      networkChanged: () => this.queueHostsRefresh(),
      images: new ImageCache(this.cli, imageStore),
      exitFiles: new ExitFiles(podmanExitsDir()),
      takeSandbox: (isolated) => (isolated ? this.isolatedPool : this.pool)?.take(),
      beginStartup: () => this.startup.begin(),
      idle: () => this.startup.idle(),
      apiServer: () => this.apiServerAddress,
      serviceAccountToken: this.opts.serviceAccountToken,
    };
    // Four each: a sandbox takes three podman calls at low priority to make, so pods started one after another
    // (a test's, a warm pool's refills) emptied a pool of two; measured, the second of two back-to-back pods reached
    // Running in 353 ms with two and 205 ms with four (podman run -d: 183 ms). An idle sandbox is a pause process.
    const poolSize = this.opts.sandboxPoolSize ?? 4;
    this.pool = new SandboxPool(niceCli, this.clusterId, poolSize, () => this.startup.idle());
    this.isolatedPool = new SandboxPool(niceCli, this.clusterId, poolSize, () => this.startup.idle(), 'none');
    this.pool.fill();
    this.isolatedPool.fill();
    // store callbacks may run inside the store's own write: defer the work so the node never re-enters it
    const defer = (fn: (e: WatchEvent) => void) => (e: WatchEvent) => setImmediate(() => this.guard(() => fn(e)));
    const claims = (this.claims = new ClaimController(this.store, this.ctx.events, join(this.stateDir, 'claims'), () => this.retryUnschedulable()));
    this.watches = [
      this.store.watch(resourceByKind('PersistentVolumeClaim'), undefined, {}, defer((e) => claims.onClaim(e))),
      this.store.watch(POD, undefined, {}, defer((e) => this.onPod(e))),
      this.store.watch(resourceByKind('ConfigMap'), undefined, {}, defer(() => this.onConfig())),
      this.store.watch(resourceByKind('Secret'), undefined, {}, defer(() => this.onConfig())),
      this.store.watch(resourceByKind('Service'), undefined, {}, defer(() => {
        this.queueHostsRefresh();
        this.nodePorts.sync();
      })),
      this.store.watch(resourceByKind('NetworkPolicy'), undefined, {}, defer(() => void this.applyNetworkPolicies())),
    ];
  }

  /** the host's address on the pod network (the podman bridge's gateway), known once started */
  get bridgeGatewayAddress(): string | undefined {
    return this.gateway;
  }

  /** where containers reach the API server: their KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT */
  setApiServerAddress(address: ApiServerAddress): void {
    this.apiServerAddress = { ...address };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.nodePorts.stop();
    for (const w of this.watches) w.stop();
    this.watches = [];
    const workers = [...this.workers.values()];
    this.workers.clear();
    await Promise.all([this.pool?.stop(), this.isolatedPool?.stop()]);
    await this.removeLeftovers();
    await Promise.all(workers.map((w) => w.kill()));
    // anything a worker created while being stopped
    await this.removeLeftovers();
    this.ctx?.exitFiles?.close();
    if (this.ctx) removeMemoryVolumes(this.ctx.memoryDir);
    rmSync(join(this.stateDir, 'pods'), { recursive: true, force: true });
    this.runner.close();
  }

  // ---- exec, attach, logs, port-forward ----

  async exec(pod: KubeObject, opts: ExecOptions): Promise<StreamSession> {
    const { slot } = this.runningContainer(pod, opts.container);
    if (this.runc && runcCanExec(this.runc, slot.podmanId!, opts)) return runcExecSession(this.runc, slot.podmanId!, opts);
    return execSession(this.cli, slot.podmanId!, opts, opts.tty ? await this.staticDir(slot.podmanId!) : undefined);
  }

  /** a container's StaticDir, where conmon keeps its exec sessions' control fifos; undefined when podman says none */
  private async staticDir(podmanId: string): Promise<string | undefined> {
    const r = await this.cli.run(['container', 'inspect', '--format', '{{.StaticDir}}', podmanId]);
    return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : undefined;
  }

  async attach(pod: KubeObject, opts: AttachOptions): Promise<StreamSession> {
    const { slot } = this.runningContainer(pod, opts.container);
    const tty = slot.spec.tty === true;
    return attachSession(slot.attached!, opts, tty, tty ? await this.staticDir(slot.podmanId!) : undefined);
  }

  async logs(pod: KubeObject, opts: LogOptions): Promise<Readable> {
    const podName = pod.metadata.name!;
    const container = opts.container ?? defaultContainer(pod);
    if (!containerNames(pod).includes(container)) throw badRequest(`container ${container} is not valid for pod ${podName}`);
    const worker = this.workers.get(pod.metadata.uid!);
    const slot = worker?.slot(container);
    const waitingReason = (reason: string | undefined) => {
      let why = reason ?? 'ContainerCreating';
      if (why === 'ErrImagePull' || why === 'ImagePullBackOff') why = 'trying and failing to pull image';
      else if (why === 'InvalidImageName' || why === 'ErrImageNeverPull') why = "image can't be pulled";
      return badRequest(`container "${container}" in pod "${podName}" is waiting to start: ${why}`);
    };
    if (!worker || !slot) {
      const statuses: any[] = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
      const s = statuses.find((x) => x.name === container);
      if (opts.previous) throw badRequest(`previous terminated container "${container}" in pod "${podName}" not found`);
      throw waitingReason(s?.state?.waiting?.reason);
    }
    let index: number | undefined;
    let live = undefined;
    if (opts.previous) {
      if (!slot.status.lastState.terminated || slot.lastIndex === undefined) throw badRequest(`previous terminated container "${container}" in pod "${podName}" not found`);
      index = slot.lastIndex;
    } else if (slot.status.state.waiting) {
      if (!slot.status.lastState.terminated || slot.lastIndex === undefined) throw waitingReason(slot.status.state.waiting.reason);
      index = slot.lastIndex;
    } else {
      index = slot.currentIndex!;
      // the instance's log: followed while open; once closed, it still knows which streams it holds
      live = slot.log;
    }
    let sinceNs: bigint | undefined;
    if (opts.sinceTime) sinceNs = parseTimeNs(opts.sinceTime);
    else if (opts.sinceSeconds !== undefined) sinceNs = nowNs() - BigInt(Math.floor(opts.sinceSeconds)) * 1_000_000_000n;
    return serveLog(worker.logFile(slot, index), live, {
      follow: opts.follow,
      timestamps: opts.timestamps,
      tailLines: opts.tailLines,
      limitBytes: opts.limitBytes,
      stream: opts.stream,
      sinceNs,
    });
  }

  async portForward(pod: KubeObject, port: number): Promise<Duplex> {
    const worker = this.workers.get(pod.metadata.uid!);
    if (!worker || worker.terminated || worker.infraPid === undefined || pod.status?.phase !== 'Running') {
      throw badRequest(`pod ${pod.metadata.name} is not running`);
    }
    if (worker.isolated || !worker.podIP) return connectInNamespace(worker.infraPid, port);
    try {
      return await connectTcp(worker.podIP, port);
    } catch (err) {
      // a listener on the pod's loopback only: reach it from inside the network namespace
      if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') return connectInNamespace(worker.infraPid, port);
      throw err;
    }
  }

  private runningContainer(pod: KubeObject, container: string) {
    const podName = pod.metadata.name!;
    if (!containerNames(pod).includes(container)) throw badRequest(`container ${container} is not valid for pod ${podName}`);
    const worker = this.workers.get(pod.metadata.uid!);
    const slot = worker?.slot(container);
    if (!worker || worker.terminated || !slot || !slot.attached || !slot.podmanId) {
      throw badRequest(`unable to upgrade connection: container not found ("${container}")`);
    }
    return { worker, slot };
  }

  // ---- pods ----

  private onPod(event: WatchEvent): void {
    const pod = event.object;
    const uid = pod.metadata.uid!;
    if (event.type === 'DELETED') {
      const worker = this.workers.get(uid);
      this.workers.delete(uid);
      this.unschedulable.delete(uid);
      if (worker) void worker.kill(true);
      this.retryUnschedulable();
      this.claims?.onPodsChanged();
      this.queueHostsRefresh();
      return;
    }
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED') return;
    this.queueHostsRefresh();
    const nodeName: string | undefined = pod.spec?.nodeName;
    if (!nodeName) {
      if (!pod.metadata.deletionTimestamp) this.schedule(pod);
      else this.removeFromStore(pod);
      return;
    }
    if (nodeName !== this.nodeName) return;
    this.unschedulable.delete(uid);
    const worker = this.workers.get(uid);
    if (worker) {
      worker.update(pod);
      const phase = pod.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') {
        this.retryUnschedulable();
        this.claims?.onPodsChanged();
      }
      return;
    }
    const phase = pod.status?.phase;
    if (pod.metadata.deletionTimestamp) {
      // nothing of it runs here (finished, or from an earlier node process): it can go at once
      this.removeFromStore(pod);
      return;
    }
    if (phase === 'Succeeded' || phase === 'Failed' || this.stopped || !this.ctx) return;
    const w = new PodWorker(this.ctx, pod);
    this.workers.set(uid, w);
    w.start();
  }

  private schedule(pod: KubeObject): void {
    if (this.stopped || !this.ctx) return;
    const node = this.store.tryGet(NODE, undefined, this.nodeName);
    if (!node) return;
    const others = this.store
      .list(POD, undefined)
      .items.filter((p) => p.spec?.nodeName === this.nodeName && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    const fit = checkFit(pod, node, others, (ns, name) => this.store.tryGet(resourceByKind('PersistentVolumeClaim'), ns, name));
    const ns = pod.metadata.namespace!;
    const name = pod.metadata.name!;
    const uid = pod.metadata.uid!;
    const sameUid = (obj: KubeObject) => {
      if (obj.metadata.uid !== uid) throw new Error('pod was replaced');
    };
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    /** the scheduler's verdict as the PodScheduled condition of a still Pending pod */
    const setScheduledCondition = (condition: { status: 'True' | 'False'; reason?: string; message?: string }, phase?: string) =>
      this.store.mutate(
        POD,
        ns,
        name,
        (obj) => {
          sameUid(obj);
          const status = obj.status ?? {};
          status.phase = phase ?? status.phase ?? 'Pending';
          status.conditions = [
            ...(status.conditions ?? []).filter((c: any) => c.type !== 'PodScheduled'),
            { type: 'PodScheduled', lastProbeTime: null, lastTransitionTime: now, ...condition },
          ];
          obj.status = status;
        },
        { subresource: 'status' },
      );
    if (!fit.fits) {
      if (this.unschedulable.get(uid) === fit.message) return;
      this.unschedulable.set(uid, fit.message);
      setScheduledCondition({ status: 'False', reason: 'Unschedulable', message: fit.message }, 'Pending');
      this.ctx.events.record(pod, 'Warning', 'FailedScheduling', fit.message, { component: 'default-scheduler' });
      return;
    }
    this.unschedulable.delete(uid);
    this.store.mutate(POD, ns, name, (obj) => {
      sameUid(obj);
      obj.spec.nodeName = this.nodeName;
    });
    setScheduledCondition({ status: 'True' });
    this.ctx.events.record(pod, 'Normal', 'Scheduled', `Successfully assigned ${ns}/${name} to ${this.nodeName}`, { component: 'default-scheduler' });
  }

  /** resources were freed: pods that did not fit get another try */
  private retryUnschedulable(): void {
    if (this.unschedulable.size === 0) return;
    const uids = new Set(this.unschedulable.keys());
    for (const p of this.store.list(POD, undefined).items) {
      if (!uids.has(p.metadata.uid!) || p.spec?.nodeName) continue;
      this.unschedulable.delete(p.metadata.uid!);
      this.guard(() => this.schedule(p));
    }
  }

  private removeFromStore(pod: KubeObject): void {
    const current = this.store.tryGet(POD, pod.metadata.namespace, pod.metadata.name!);
    if (current && current.metadata.uid === pod.metadata.uid) {
      try {
        this.store.remove(POD, pod.metadata.namespace, pod.metadata.name!);
      } catch {
        // removed meanwhile
      }
    }
  }

  // ---- what pods read ----

  private onConfig(): void {
    for (const w of this.workers.values()) w.configChanged();
  }

  private hostsFor(pod: KubeObject, podIP: string | undefined): string {
    const services = this.store.list(resourceByKind('Service'), undefined).items;
    const pods = this.store.list(POD, undefined).items;
    return hostsFileContent(pod, podIP, services, pods);
  }

  private queueHostsRefresh(): void {
    if (this.hostsQueued || this.stopped) return;
    this.hostsQueued = true;
    setImmediate(() => {
      this.hostsQueued = false;
      if (this.stopped) return;
      const services = this.store.list(resourceByKind('Service'), undefined).items;
      const pods = this.store.list(POD, undefined).items;
      for (const w of this.workers.values()) {
        if (w.terminated || w.infraPid === undefined) continue;
        try {
          writeHostsFile(w.hostsFile, hostsFileContent(w.pod, w.podIP, services, pods));
        } catch {
          // the pod's files are being removed
        }
      }
    });
  }

  /** a deny-all policy created after a pod started: take the pod's interfaces down (no way back but a restart) */
  private async applyNetworkPolicies(): Promise<void> {
    if (this.stopped) return;
    const policies = this.store.list(resourceByKind('NetworkPolicy'), undefined).items;
    for (const w of this.workers.values()) {
      if (w.terminated || w.isolated || w.infraPid === undefined) continue;
      if (!isFullyIsolated(w.pod, policies)) continue;
      w.isolated = true;
      await isolateNetworkNamespace(w.infraPid);
    }
  }

  // ---- node ----

  private registerNode(facts: NodeFacts): void {
    const existing = this.store.tryGet(NODE, undefined, this.nodeName);
    if (!existing) this.store.create(NODE, undefined, nodeObject(facts));
    else {
      this.store.mutate(NODE, undefined, this.nodeName, (obj) => {
        obj.metadata.labels = { ...(obj.metadata.labels ?? {}), ...nodeObject(facts).metadata.labels };
      });
    }
    // the status subresource: some stores drop .status on create, as the real API server does for most kinds
    this.store.mutate(NODE, undefined, this.nodeName, (obj) => (obj.status = nodeStatus(facts)), { subresource: 'status' });
  }

  private async removeLeftovers(): Promise<void> {
    const r = await this.cli.run(['pod', 'ps', '--filter', `label=${CLUSTER_LABEL}=${this.clusterId}`, '--format', '{{.ID}}']);
    const ids = r.stdout.split('\n').map((s) => s.trim()).filter(Boolean);
    if (ids.length > 0) await this.cli.run(['pod', 'rm', '-f', '-t', '0', ...ids], 120_000);
  }

  private async bridgeGateway(): Promise<string> {
    const r = await this.cli.run(['network', 'inspect', 'podman']);
    try {
      return JSON.parse(r.stdout)[0].subnets[0].gateway ?? '10.88.0.1';
    } catch {
      return '10.88.0.1';
    }
  }

  /** the file containers/storage rewrites whenever an image is added, tagged or removed */
  private async imageStoreFile(): Promise<string | undefined> {
    const r = await this.cli.run(['info', '--format', '{{.Store.GraphRoot}} {{.Store.GraphDriverName}}']);
    const [root, driver] = r.stdout.trim().split(/\s+/);
    return r.code === 0 && root && driver ? join(root, `${driver}-images`, 'images.json') : undefined;
  }

  private async podmanVersion(): Promise<string> {
    const r = await this.cli.run(['version', '--format', '{{.Client.Version}}']);
    return r.code === 0 ? r.stdout.trim() : 'unknown';
  }

  /** one misbehaving object must not take the node down */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      process.emitWarning(`berth dev-cluster node: ${(err as Error)?.message ?? err}`);
    }
  }
}

function containerNames(pod: KubeObject): string[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? []), ...(pod.spec?.ephemeralContainers ?? [])].map((c: any) => c.name);
}

/** the only container, or the one `kubectl.kubernetes.io/default-container` names; otherwise 400 as the API server */
function defaultContainer(pod: KubeObject): string {
  const containers: any[] = pod.spec?.containers ?? [];
  const annotated = pod.metadata.annotations?.['kubectl.kubernetes.io/default-container'];
  if (annotated) return annotated;
  if (containers.length === 1) return containers[0].name;
  throw badRequest(`a container name must be specified for pod ${pod.metadata.name}, choose one of: [${containerNames(pod).join(' ')}]`);
}

async function isolateNetworkNamespace(pid: number): Promise<void> {
  const run = (args: string[]) =>
    new Promise<string>((resolve) => execFile('nsenter', ['-t', String(pid), '-n', '--', ...args], { timeout: 10_000 }, (_err, stdout) => resolve(String(stdout ?? ''))));
  const links = await run(['ip', '-o', 'link', 'show']);
  for (const line of links.split('\n')) {
    const m = /^\d+:\s+([^:@\s]+)/.exec(line);
    if (m && m[1] !== 'lo') await run(['ip', 'link', 'set', m[1]!, 'down']);
  }
}
