/**
 * The Docker engine berth pretends to be: containers are pods of one berth instance, watched through one
 * pod watch. This module is the containers' lifecycle (create, start, stop, kill, remove, wait); it
 * composes the rest: images (images/image-store.ts), networks and alias Services (networks.ts), volumes
 * (volumes.ts), events (event-bus.ts), recovery from annotations (recovery.ts), healthchecks
 * (containers/healthcheck.ts), Ryuk (ryuk/ryuk.ts), files (containers/container-files.ts, containers/peek.ts), published ports, exec records.
 */
import type { Readable, Writable } from 'node:stream';
import { rfc3339 } from '../runtime/plan.js';
import { ANNOTATION_EXPIRES_AT, LABEL_OWNER } from '../runtime/pod-rules.js';
import { ANNOTATION_CONTAINER, LABEL_CONTAINER_ID, READY_FILE, SANDBOX_CONTAINER, SandboxPlanError, type SandboxVolume } from '../runtime/sandbox-plan.js';
import { checkOneContainer, loadPodTemplate } from '../runtime/pod-template.js';
import type { PodTemplateSource } from '../runtime/workload.js';
import { statusOf } from '../kube/errors.js';
import { DockerError, badRequest, conflict, notFound } from './http/http.js';
import { isReaperImage } from './ryuk/reaper.js';
import { PeekPods, type PeekSource } from './containers/peek.js';
import { ContainerFiles } from './containers/container-files.js';
import type { HeldTar } from '../runtime/files.js';
import { ArchiveSpill } from './containers/archive-spill.js';
import { PortProxy, PortTargetGone, type PortMode, type PortTarget } from './networks/port-proxy.js';
import { PortPublisher } from './networks/published-ports.js';
import type { ImageConfigSource } from './images/image-config.js';
import { UserNotFound, resolveUser } from './containers/named-user.js';
import { Serial } from './serial.js';
import { DOCKER_DEFAULT_CAPABILITIES } from './containers/capabilities.js';
import { LABEL_POD_TEMPLATE, planCreate, replanContainer, templateNameOf, type CreatePlan, type CreatePolicy } from './containers/create-plan.js';
import { asArgv, newId, type ContainerRecord, type ContainerStatus, type CreateBody } from './model.js';
import { podState } from './containers/pod-state.js';
import type { LogQuery, Pod, ServeCluster, Session } from './cluster.js';
import { EventBus } from './event-bus.js';
import { ImageStore } from './images/image-store.js';
import { Networks, NAME_RE } from './networks/networks.js';
import type { Platform } from './containers/platform.js';
import { dockerMounts, LABEL_ANONYMOUS, Volumes, type DockerMount } from './volumes/volumes.js';
import { ANNOTATION_KEPT_FAILED, recover, savedRecord } from './recovery.js';
import { runHealthcheck, wantsHealthcheck } from './containers/healthcheck.js';
import { RyukContainers, reaperMatches } from './ryuk/ryuk.js';
import { ExecStore } from './containers/exec-records.js';
import { leftBehind, pruneInstance } from './instance-cleanup.js';
import { peekPodName, planPeekPod, planRunPod, runPodName, type PodContext } from './containers/container-pod.js';
import { generatedName } from './containers/names.js';
import { denyPolicyName, planDenyPolicy } from './networks/network-isolation.js';
import { FEED_CONTAINER, FEED_READY_ARGV, feedFolder, feedMounts, needsFileFeed } from './containers/file-feed.js';
import { helperImageOf } from '../runtime/plan.js';

export { ANNOTATION_KEPT_FAILED, LABEL_POD_TEMPLATE };

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
}

/** How long an exit waits for attached readers to deliver the output (AutoRemove, `wait`). */
const READERS_GRACE_MS = 60_000;

/** An unused peek pod waits this long for the next read (`docker cp` makes a HEAD and a GET). */
const PEEK_IDLE_MS = 5000;

type WaitResult = { StatusCode: number; Error: { Message: string } | null };

export class Engine {
  readonly containers = new Map<string, ContainerRecord>();
  readonly events = new EventBus();
  readonly images: ImageStore;
  readonly networks: Networks;
  readonly volumes: Volumes;
  readonly execs = new ExecStore();
  readonly files: ContainerFiles;
  private stopWatch?: () => void;
  private readonly cluster: ServeCluster;
  private readonly peeks: PeekPods;
  /** large archives kept for a restart, on disk */
  private readonly spill = new ArchiveSpill();
  private readonly ports: PortPublisher;
  private readonly ryuk: RyukContainers;
  private readonly starts = new Serial();
  private readonly removals = new Map<string, Promise<void>>();
  /** the last write of each container's record onto its pod (noteRecord) */
  private readonly recordNotes = new WeakMap<ContainerRecord, Promise<void>>();

  constructor(private readonly opts: EngineOptions) {
    this.cluster = opts.cluster;
    const shared = { cluster: opts.cluster, owner: opts.owner, ttlSeconds: opts.ttlSeconds, bus: this.events, containers: this.containers };
    this.images = new ImageStore(this.events, opts.imageConfigs);
    this.networks = new Networks(shared);
    this.volumes = new Volumes(shared);
    this.peeks = new PeekPods({ cluster: opts.cluster, idleMs: PEEK_IDLE_MS, startTimeoutMs: opts.startTimeoutMs });
    this.files = new ContainerFiles({
      cluster: opts.cluster,
      peeks: this.peeks,
      spill: this.spill,
      isReaper: (c) => this.isReaper(c),
      peekSource: (c) => this.peekSource(c),
    });
    this.ports = new PortPublisher({
      publishAddress: opts.publishAddress,
      proxy: new PortProxy({
        mode: opts.portMode ?? 'forward',
        forward: (pod, port) => opts.cluster.forward(pod, port),
        log: (line) => process.stderr.write(`berth serve: ${line}\n`),
      }),
      target: (c) => this.portTarget(c),
    });
    this.ryuk = new RyukContainers({
      publishAddress: opts.publishAddress,
      reap: (filters, self) => this.reap(filters, self),
      exited: (c) => this.setExited(c, { exitCode: 0 }),
      started: (c) => {
        this.emit('container', 'start', c);
        this.changed(c);
      },
    });
  }

  get publishAddress(): string {
    return this.opts.publishAddress;
  }

  get owner(): string {
    return this.opts.owner;
  }

  private get podContext(): PodContext {
    return { namespace: this.cluster.namespace, owner: this.opts.owner, ttlSeconds: this.opts.ttlSeconds, capabilities: this.opts.capabilities };
  }

  /** What this berth serve allows its containers: creates are judged by it (containers/create-plan.ts), once. */
  private get policy(): CreatePolicy {
    return { allowed: this.opts.capabilities ?? DOCKER_DEFAULT_CAPABILITIES, allowPrivileged: this.opts.allowPrivileged, podDefaults: this.opts.podDefaults };
  }

  /** Takes over what an earlier berth with the same instance left (recovery.ts). */
  recover(): Promise<number> {
    return recover({
      cluster: this.cluster,
      owner: this.opts.owner,
      containers: this.containers,
      networks: this.networks,
      volumes: this.volumes,
      images: this.images,
      openPorts: (c) => this.ports.open(c),
      replan: (body) => replanContainer(body, this.policy),
      leftBehind,
    });
  }

  startWatch(): void {
    this.stopWatch = this.cluster.watchPods(
      `${LABEL_OWNER}=${this.opts.owner}`,
      (type, pod) => this.onPod(type, pod),
      (err) => process.stderr.write(`berth serve: pod watch: ${err.message} (resuming)\n`),
      (pods, listStartedAt) => this.onSync(pods, listStartedAt),
    );
  }

  /**
   * A fresh list of the pods (first, and after the watch lost its place): the state of every listed pod
   * is taken as an event, and a running container whose pod was created before the list began but is not
   * in it was deleted while the watch was away.
   */
  private onSync(pods: Pod[], listStartedAt: number): void {
    const names = new Set<string>();
    for (const pod of pods) {
      names.add(pod.metadata?.name ?? '');
      this.onPod('MODIFIED', pod);
    }
    for (const c of this.containers.values()) {
      if (!c.podName || names.has(c.podName) || (c.status !== 'running' && c.status !== 'created')) continue;
      if (c.podCreatedAt !== undefined && c.podCreatedAt < listStartedAt) this.setExited(c, { exitCode: 137 });
    }
  }

  private onPod(type: string, pod: Pod): void {
    if (this.peeks.onPod(type, pod)) return;
    const shortId = pod.metadata?.labels?.[LABEL_CONTAINER_ID];
    const c = [...this.containers.values()].find((x) => x.id.startsWith(shortId ?? '-') && x.podName === pod.metadata?.name);
    if (!c) return;
    if (type === 'DELETED') {
      if (c.status === 'running' || c.status === 'created') this.setExited(c, { exitCode: 137 });
      return;
    }
    c.podIP = pod.status?.podIP ?? c.podIP;
    if (pod.status?.initContainerStatuses?.some((x) => x.name === FEED_CONTAINER && x.state?.running)) this.feeding.add(c.podName!);
    const s = podState(pod);
    if (s.status === 'running' && c.podIP) void this.networks.announce(c, (o, argv) => this.execCollect(o, argv));
    if (s.status === 'running' && c.status !== 'running') {
      c.status = 'running';
      c.startedAt = s.startedAt ?? new Date().toISOString();
      this.emit('container', 'start', c);
      this.changed(c);
    } else if (s.status === 'exited' && (c.status === 'running' || c.status === 'created')) {
      // A process that ended before the watch saw it run still started: docker's events have its start before its
      // die. Not one that never ran (StartError; a kubelet's startedAt is then the epoch).
      if (c.status === 'created' && !s.error && Date.parse(s.startedAt ?? '') > 0) this.emit('container', 'start', c);
      this.setExited(c, s);
    } else {
      this.changed(c);
    }
  }

  /** Whether the pod's main container has ended (or the pod is gone): a follow of its log that ended is whole. */
  async podEnded(podName: string): Promise<boolean> {
    try {
      return podState(await this.cluster.readPod(podName)).status === 'exited';
    } catch (err) {
      return statusOf(err).code === 404;
    }
  }

  /** An attached client got a short output: the run's `wait` answers with this error (docker run exits 125). */
  outputIncomplete(c: ContainerRecord, message: string): void {
    c.outputError = `the output of container ${c.name} is incomplete: ${message}`;
    process.stderr.write(`berth serve: ${c.outputError}\n`);
    this.changed(c);
  }

  private setExited(c: ContainerRecord, s: { exitCode?: number; error?: string; oomKilled?: boolean; startedAt?: string; finishedAt?: string }): void {
    c.status = 'exited';
    c.exitCode = s.exitCode ?? 0;
    c.error = s.error ?? '';
    c.oomKilled = Boolean(s.oomKilled);
    c.startedAt ??= s.startedAt;
    c.finishedAt = s.finishedAt ?? new Date().toISOString();
    this.ports.close(c);
    this.networks.forget(c);
    this.emit('container', 'die', c, { exitCode: String(c.exitCode) });
    this.changed(c);
    if (c.body.HostConfig?.AutoRemove) void this.autoRemove(c);
  }

  private async autoRemove(c: ContainerRecord): Promise<void> {
    // Attached clients read the output from the pod log: let them finish before the pod goes.
    const until = Date.now() + READERS_GRACE_MS;
    while (c.readers > 0 && Date.now() < until) await this.nextChange(c, until - Date.now());
    await this.remove(c.id, true, true).catch((err: Error) => process.stderr.write(`berth serve: auto-remove of ${c.name}: ${err.message}\n`));
  }

  /** A reader of the container's output is done (AutoRemove may be waiting for it). */
  releaseReader(c: ContainerRecord): void {
    c.readers--;
    this.changed(c);
  }

  private changed(c: ContainerRecord): void {
    this.events.changed(c.id);
  }

  /** Resolves at the next change of `c` (or after `ms`). */
  nextChange(c: ContainerRecord, ms = 1000): Promise<void> {
    return this.events.nextChange(c.id, ms);
  }

  private emit(type: string, action: string, c: ContainerRecord, extra: Record<string, string> = {}): void {
    this.events.emit(type, action, c, extra);
  }

  // ---- lookups ----

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

  // ---- create ----

  /** The container's mounts as inspect and ps list them. */
  mountsOf(c: ContainerRecord): DockerMount[] {
    return dockerMounts(c, (volume) => this.volumes.mountpoint(volume));
  }

  /** The template a create with these labels would be laid on (create checks it: a missing one is a 400 then, not at start). */
  podTemplateFor(labels: Record<string, string> | null | undefined): Promise<PodTemplateSource | undefined> {
    return this.readTemplate(templateNameOf(labels));
  }

  /**
   * The template of a container's pod: the PodTemplate object its label `berth.dev/pod-template` names (read
   * at every start, so edits apply), else the operator's `--pod-template`. Never a file: API clients must not
   * read files on berth's machine.
   */
  private async readTemplate(name: string | undefined): Promise<PodTemplateSource | undefined> {
    if (!name) return this.opts.podTemplate;
    if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name))
      throw badRequest(
        `${LABEL_POD_TEMPLATE}="${name}" must name a PodTemplate object in namespace ${this.cluster.namespace} (files are for the operator's --pod-template)`,
      );
    try {
      const template = await loadPodTemplate(name, (n) => this.cluster.readPodTemplate(n), `label ${LABEL_POD_TEMPLATE}`);
      checkOneContainer(template);
      return template;
    } catch (err) {
      if (statusOf(err).code === 404 || /not found/i.test((err as Error).message)) {
        throw badRequest(
          `${LABEL_POD_TEMPLATE}: PodTemplate ${name} not found in namespace ${this.cluster.namespace} (create it with kubectl apply, or drop the label)`,
        );
      }
      throw err;
    }
  }

  /**
   * A container as dockerd makes it: every check first (bad input changes nothing; containers/create-plan.ts judges the
   * request once, and the record keeps the plan), then its name taken and its volumes made (named and
   * anonymous: `docker volume ls` lists them right after create), then its create event.
   */
  async create(name: string | null, request: CreateBody, platform?: Platform): Promise<ContainerRecord> {
    if (!request.Image || typeof request.Image !== 'string') throw badRequest('config is missing the Image');
    if (name !== null && name !== '' && !NAME_RE.test(name.replace(/^\//, '')))
      throw badRequest(`Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
    const img = this.images.find(request.Image);
    const planned = planCreate(request, img.info?.config, this.policy);
    const id = newId();
    const clean = name ? name.replace(/^\//, '') : generatedName(id);
    for (const c of this.containers.values()) {
      if (c.name === clean)
        throw conflict(
          `Conflict. The container name "/${clean}" is already in use by container "${c.id}". You have to remove (or rename) that container to be able to reuse that name.`,
        );
    }
    const c = this.newRecord(id, clean, planned, platform);
    this.containers.set(id, c);
    try {
      await this.volumes.ensureAll([...planned.namedVolumes, ...planned.anonymousVolumes.map((a) => ({ name: a.name, labels: { [LABEL_ANONYMOUS]: '' } }))]);
    } catch (err) {
      this.containers.delete(id);
      throw new DockerError(500, `failed to create container ${clean}: could not make its volumes: ${(err as Error).message}`);
    }
    this.emit('container', 'create', c);
    return c;
  }

  private newRecord(id: string, name: string, planned: CreatePlan, platform: Platform | undefined): ContainerRecord {
    const { body, plan, anonymousVolumes, namedUser } = planned;
    return {
      id,
      name,
      created: new Date(),
      image: body.Image!,
      body,
      plan,
      cmd: asArgv(body.Cmd),
      entrypoint: asArgv(body.Entrypoint),
      generation: 0,
      status: 'created',
      exitCode: 0,
      error: '',
      oomKilled: false,
      restartCount: 0,
      pendingArchives: [],
      copiedArchives: [],
      ports: [],
      networks: this.memberships(planned.networks),
      readers: 0,
      warnings: planned.warnings,
      ...(anonymousVolumes.length ? { anonymousVolumes } : {}),
      ...(platform ? { platform } : {}),
      ...(namedUser ? { namedUser } : {}),
    };
  }

  /** network id → aliases, for the networks a create names. */
  private memberships(networks: CreatePlan['networks']): Map<string, string[]> {
    const byId = new Map<string, string[]>();
    for (const { name, aliases } of networks) {
      const n = this.networks.find(name);
      byId.set(n.id, [...(byId.get(n.id) ?? []), ...aliases]);
    }
    return byId;
  }

  // ---- start ----

  /**
   * Starts are serialized per container (one pod whatever the concurrency): a start that waited for
   * another one of the same container finds it started and answers 304, as dockerd does.
   */
  async start(ref: string): Promise<'started' | 'already'> {
    const c = this.container(ref);
    const seen = c.generation;
    return this.starts.run(c.id, async () => {
      if (c.generation !== seen && (c.status === 'running' || c.status === 'exited')) return 'already';
      return this.startNow(c);
    });
  }

  private async startNow(c: ContainerRecord): Promise<'started' | 'already'> {
    if (this.containers.get(c.id) !== c) throw notFound(`No such container: ${c.id}`);
    if (c.status === 'running') return 'already';
    if (c.status === 'removing' || c.status === 'dead') throw conflict(`container ${c.name} is being removed (or its removal failed): remove it again`);
    if (c.plan.refused)
      throw new DockerError(
        403,
        `cannot start container ${c.name}: this berth serve's policy refuses it: ${c.plan.refused} (a berth serve that allowed it made it; inspect and remove it as any other)`,
      );
    if (isReaperImage(c.image)) return this.ryuk.start(c);
    if (c.namedUser && !c.podUser) await this.lookUpUser(c, c.namedUser);
    await this.peeks.retire(c.id);
    if (c.archivesLost) {
      // Its new pod would start without the files, where docker keeps them: refused rather than a start that looks right.
      throw conflict(
        `container ${c.name} had ${c.archivesLost} archive(s) copied into it (docker cp) under the berth serve this one took it over from, which kept them; a new pod would start without those files: create the container again and copy them into it`,
      );
    }
    if (c.podName) {
      // A stopped container starts again as a new pod: the old one keeps nothing a restart needs.
      const old = c.podName;
      await this.cluster.deletePod(old).catch((err: Error) => leftBehind(`pod ${old} of container ${c.name}`, err));
      // dockerd counts restarts of its restart policy only, and a start resets the count: berth has no policy.
      c.restartCount = 0;
    }
    let pod: Pod;
    try {
      pod = await this.planPod(c);
    } catch (err) {
      // nothing of this run exists yet; `docker run --rm` waits for the removal of a container whose start failed
      await this.autoRemoveFailed(c);
      throw err instanceof DockerError ? err : new DockerError(500, `failed to start container ${c.name}: ${(err as Error).message}`);
    }
    const podName = pod.metadata!.name!;
    this.resetRun(c, podName);
    try {
      if (c.plan.hostConfig.denyNetwork) await this.ensureDenyPolicy(c);
      await this.networks.ensureAliasServices(c);
      await this.cluster.createPod(pod);
      c.podCreatedAt = Date.now();
      // A rename or network change while the pod was made found no pod to note it on: the pod carries the plan's record.
      if (pod.metadata?.annotations?.[ANNOTATION_CONTAINER] !== this.recordAnnotation(c)) await this.noteRecord(c, 'what changed while it started');
    } catch (err) {
      return this.startFailed(c, podName, `could not create its pod ${podName}: ${(err as Error).message}`);
    }
    if (this.removedMeanwhile(c)) {
      await this.cluster.deletePod(podName).catch((err: Error) => leftBehind(`pod ${podName} of removed container ${c.name}`, err));
      await this.networks.deleteAliasServices(c);
      throw conflict(`container ${c.name} was removed while it started`);
    }
    try {
      await this.ports.open(c);
    } catch (err) {
      return this.startFailed(c, podName, `could not publish its ports: ${(err as Error).message}`);
    }
    const fed = pod.spec?.initContainers?.some((x) => x.name === FEED_CONTAINER) ?? false;
    if (fed) await this.feedArchives(c, podName);
    await this.untilRuns(c, podName);
    // Read afresh: the pod watch changed it while this waited.
    const status = (): ContainerStatus => c.status;
    if (this.removedMeanwhile(c)) throw conflict(`container ${c.name} was removed while it started`);
    if (status() === 'exited' && c.error) throw new DockerError(500, `failed to start container ${c.name}: ${c.error}`);
    if (!fed && c.pendingArchives.length + c.copiedArchives.length > 0 && status() === 'running') await this.deliverArchives(c, podName);
    // As on dockerd, the members started before it resolve it once start answers.
    if (status() === 'running') await this.networks.announce(c, (o, argv) => this.execCollect(o, argv));
    if (wantsHealthcheck(c))
      runHealthcheck(c, c.generation, {
        exec: (x, argv) => this.execCollect(x, argv),
        changed: (x) => this.changed(x),
        statusChanged: (x, health) => this.emit('container', `health_status: ${health}`, x),
      });
    return 'started';
  }

  /**
   * A `User` given by name becomes numbers from the image's /etc/passwd and /etc/group, read through the
   * container's peek pod (one pod start more, once: restarts keep them). A name the image lacks fails the
   * start with dockerd's words, before any pod of the container exists.
   */
  private async lookUpUser(c: ContainerRecord, user: string): Promise<void> {
    try {
      const files = await this.files.userDatabase(c);
      c.podUser = resolveUser(user, files.passwd, files.group);
    } catch (err) {
      const why =
        err instanceof UserNotFound
          ? err.message
          : `berth reads /etc/passwd and /etc/group of the image to run user ${user} (pods take numbers only), which failed: ${(err as Error).message}; give a numeric uid[:gid]`;
      await this.autoRemoveFailed(c);
      throw new DockerError(500, `failed to start container ${c.name}: ${why}`);
    }
  }

  /** NetworkMode=none: the deny-all policy, made before the pod (networks/network-isolation.ts); kept across restarts. */
  private async ensureDenyPolicy(c: ContainerRecord): Promise<void> {
    try {
      await this.cluster.createNetworkPolicy(planDenyPolicy(c, this.opts.owner, this.opts.ttlSeconds));
    } catch (err) {
      if (statusOf(err).code !== 409) throw err;
    }
  }

  /** The next generation's pod, from the container's plan (its volumes ensured, its template read). */
  private async planPod(c: ContainerRecord): Promise<Pod> {
    const volumes = await this.podVolumes(c);
    c.generation++;
    const template = await this.readTemplate(c.plan.templateName);
    const podName = runPodName(c, c.generation);
    const helperImage = helperImageOf(this.opts.helperImage);
    const fileFeed = needsFileFeed(c) ? { helperImage, mounts: await feedMounts([...c.copiedArchives, ...c.pendingArchives]) } : undefined;
    const isolationImage = c.plan.hostConfig.denyNetwork ? helperImage : undefined;
    return planRunPod(
      c,
      {
        podName,
        volumes,
        ports: this.containerPorts(c),
        hostAliases: this.networks.hostAliasesFor(c),
        template,
        record: this.recordAnnotation(c),
        fileFeed,
        isolationImage,
      },
      this.podContext,
    );
  }

  /** The plan's volumes, each named volume as its claim (made again if it went), and the anonymous ones. */
  private async podVolumes(c: ContainerRecord): Promise<SandboxVolume[]> {
    const volumes: SandboxVolume[] = [];
    for (const v of c.plan.volumes) volumes.push(v.claim ? { ...v, claim: (await this.volumes.ensure(v.claim)).claim } : v);
    for (const a of c.anonymousVolumes ?? [])
      volumes.push({ claim: (await this.volumes.ensure(a.name, { [LABEL_ANONYMOUS]: '' })).claim, target: a.target, readOnly: a.readOnly === true });
    return volumes;
  }

  private resetRun(c: ContainerRecord, podName: string): void {
    c.podName = podName;
    c.podCreatedAt = undefined;
    c.status = 'created';
    c.startedAt = undefined;
    c.finishedAt = undefined;
    c.exitCode = 0;
    c.error = '';
    c.outputError = undefined;
    c.podIP = undefined;
  }

  /** Why a pod has not run, when the scheduler found no node for it (a --platform no node has, a nodeSelector). */
  private async unscheduled(podName: string): Promise<string> {
    const pod = await this.cluster.readPod(podName).catch(() => undefined);
    const pending = pod?.status?.conditions?.find((x) => x.type === 'PodScheduled' && x.status === 'False');
    if (!pending) return '';
    return `: no node takes it (${pending.message ?? pending.reason ?? 'Unschedulable'}; its nodeSelector: ${JSON.stringify(pod?.spec?.nodeSelector ?? {})})`;
  }

  /** Waits for the pod to run (or fail); past --start-timeout the start fails. */
  private async untilRuns(c: ContainerRecord, podName: string): Promise<void> {
    const deadline = Date.now() + this.opts.startTimeoutMs;
    const status = (): string => c.status;
    while (status() === 'created' && c.podName === podName) {
      if (Date.now() > deadline)
        return this.startFailed(
          c,
          podName,
          `its pod ${podName} did not run within ${this.opts.startTimeoutMs / 1000} s${await this.unscheduled(podName)} (raise --start-timeout, or see kubectl describe pod ${podName})`,
        );
      await this.nextChange(c, deadline - Date.now());
    }
  }

  /** Files copied before start, unpacked before the real process starts (the pod waits for READY_FILE). */
  private async deliverArchives(c: ContainerRecord, podName: string): Promise<void> {
    // A restart is a new pod: what was copied into the old one is copied again, as docker keeps it.
    const archives = [...c.copiedArchives, ...c.pendingArchives];
    c.copiedArchives = archives;
    c.pendingArchives = [];
    for (const a of archives) await this.files.extractInPod(podName, a.path, a.tar);
    const r = await this.execCollect(c, ['/bin/sh', '-c', `: > ${READY_FILE}`]);
    if (r.exitCode !== 0) throw new DockerError(500, `could not release container ${c.name} after copying files: ${r.stderr}`);
  }

  /**
   * Files for the init container (containers/file-feed.ts): once it runs, each archive is unpacked into its volume
   * and the volume marked ready; the main container then starts with them mounted.
   */
  private async feedArchives(c: ContainerRecord, podName: string): Promise<void> {
    const deadline = Date.now() + this.opts.startTimeoutMs;
    while (!this.feeding.has(podName) && c.status === 'created' && c.podName === podName) {
      if (Date.now() > deadline)
        return this.startFailed(
          c,
          podName,
          `the init container ${FEED_CONTAINER} of its pod ${podName} (image ${helperImageOf(this.opts.helperImage)}, which delivers the files copied before start) did not run within ${this.opts.startTimeoutMs / 1000} s (see kubectl describe pod ${podName}; --helper-image names an image with sh and tar the cluster can pull)`,
        );
      await this.nextChange(c, deadline - Date.now());
    }
    if (!this.feeding.has(podName)) return;
    this.feeding.delete(podName);
    const archives = [...c.copiedArchives, ...c.pendingArchives];
    c.copiedArchives = archives;
    c.pendingArchives = [];
    for (const [k, a] of archives.entries()) await this.files.extractInPod(podName, feedFolder(k), a.tar, FEED_CONTAINER);
    const r = await this.files.execInPod(podName, FEED_READY_ARGV, undefined, FEED_CONTAINER);
    if (r.exitCode !== 0) throw new DockerError(500, `could not release container ${c.name} after copying files: ${r.stderr}`);
  }

  /** Pods whose file-feed init container runs (seen by the pod watch), waiting for their files. */
  private readonly feeding = new Set<string>();

  private removedMeanwhile(c: ContainerRecord): boolean {
    return this.containers.get(c.id) !== c || c.status === 'removing' || c.status === 'dead';
  }

  /**
   * A start that failed before its container ran: what it created goes (left to expiry and `berth gc`
   * when that fails too, and said so), the container is `created` again (dockerd's semantics; an
   * AutoRemove container is removed, so `docker run --rm` ends), and the caller gets a 500 naming why.
   */
  private async startFailed(c: ContainerRecord, podName: string, why: string): Promise<never> {
    this.ports.close(c);
    const leftovers: string[] = [];
    await this.cluster.deletePod(podName).catch((err: Error) => leftovers.push(`pod ${podName} (${err.message})`));
    leftovers.push(...(await this.networks.deleteAliasServices(c)));
    if (c.podName === podName) {
      c.podName = undefined;
      c.podCreatedAt = undefined;
      c.status = 'created';
      this.changed(c);
    }
    const left = leftovers.length ? `; left behind until their expiry and \`berth gc\`: ${leftovers.join(', ')}` : '';
    // dockerd removes an AutoRemove container whose start failed; `docker run --rm` waits for that removal
    // before it exits. Nothing ran, so there is no output for attached clients to wait for: removed at once
    // (an attach still waiting for the run ends when its container goes).
    await this.autoRemoveFailed(c);
    throw new DockerError(500, `failed to start container ${c.name}: ${why}${left}`);
  }

  /** An AutoRemove container whose start failed is removed, as dockerd does (`docker run --rm` waits for it). */
  private async autoRemoveFailed(c: ContainerRecord): Promise<void> {
    if (c.body.HostConfig?.AutoRemove && this.containers.get(c.id) === c) {
      await this.remove(c.id, true, true).catch((err: Error) => process.stderr.write(`berth serve: auto-remove of ${c.name}: ${err.message}\n`));
    }
  }

  isReaper(c: ContainerRecord): boolean {
    return this.ryuk.isReaper(c);
  }

  private async reap(filters: string[][], self: string): Promise<void> {
    for (const c of [...this.containers.values()]) {
      if (c.id !== self && reaperMatches(filters, c.body.Labels ?? {}))
        await this.remove(c.id, true, true).catch((err: Error) => process.stderr.write(`berth serve: reaper: ${err.message}\n`));
    }
    for (const n of [...this.networks.values()]) {
      if (n.builtin || !reaperMatches(filters, n.labels)) continue;
      try {
        this.networks.remove(n.id);
      } catch {
        /* still in use */
      }
    }
    for (const v of [...this.volumes.values()]) if (reaperMatches(filters, v.labels)) await this.volumes.remove(v.name, true).catch(() => undefined);
  }

  containerPorts(c: ContainerRecord): number[] {
    const keys = new Set([...Object.keys(c.body.ExposedPorts ?? {}), ...Object.keys(c.body.HostConfig?.PortBindings ?? {})]);
    return [...keys].map((k) => parseInt(k, 10)).filter((p) => Number.isInteger(p) && p > 0);
  }

  /** Asked on every connection attempt: a connection made while the container starts (or restarts) waits for its pod. */
  private async portTarget(c: ContainerRecord): Promise<PortTarget> {
    const deadline = Date.now() + this.opts.startTimeoutMs;
    while (c.status === 'created' && Date.now() < deadline) await this.nextChange(c, deadline - Date.now());
    if (c.status !== 'running' || !c.podName) throw new PortTargetGone(`container ${c.name} is ${c.status}`);
    return { podName: c.podName, podIP: c.podIP };
  }

  // ---- stop, kill, restart ----

  async stop(ref: string, timeoutSeconds: number | undefined, signal?: string): Promise<'stopped' | 'already'> {
    const c = this.container(ref);
    if (c.status === 'running' && this.ryuk.isRunning(c)) {
      await this.ryuk.finish(c);
      return 'stopped';
    }
    if (c.status !== 'running' || !c.podName) return 'already';
    // dockerd's order: the stop's own timeout and signal, then the container's (--stop-timeout, --stop-signal or the image's STOPSIGNAL)
    const t = timeoutSeconds ?? c.body.StopTimeout ?? 10;
    if (t > 0) {
      await this.execCollect(c, ['kill', `-${(signal ?? c.body.StopSignal ?? 'TERM').replace(/^SIG/, '')}`, '1']).catch(() => undefined);
      const until = Date.now() + t * 1000;
      while (c.status === 'running' && Date.now() < until) await this.nextChange(c, until - Date.now());
    }
    if (c.status === 'running') await this.killPod(c);
    this.emit('container', 'stop', c);
    return 'stopped';
  }

  /** Ends the pod through its deadline: the kubelet stops it and the object stays (logs, state). */
  private async killPod(c: ContainerRecord): Promise<void> {
    const podName = c.podName as string;
    const pod = await this.cluster.readPod(podName);
    const started = pod.status?.startTime ? new Date(pod.status.startTime).getTime() : Date.now();
    await this.cluster.expirePod(podName, Math.ceil((Date.now() - started) / 1000));
    const until = Date.now() + 30_000;
    while (c.status === 'running' && c.podName === podName && Date.now() < until) await this.nextChange(c, until - Date.now());
    if (c.status === 'running') this.setExited(c, { exitCode: 137 });
  }

  async kill(ref: string, signal: string): Promise<void> {
    const c = this.container(ref);
    if (c.status !== 'running') throw conflict(`Cannot kill container: ${ref}: Container ${c.id} is not running`);
    if (this.ryuk.isRunning(c)) return void (await this.ryuk.finish(c));
    const sig = signal.replace(/^SIG/, '').toUpperCase() || 'KILL';
    this.emit('container', 'kill', c, { signal: sig });
    if (sig === 'KILL' || sig === '9') await this.killPod(c);
    else {
      const r = await this.execCollect(c, ['kill', `-${sig}`, '1']);
      if (r.exitCode !== 0)
        throw new DockerError(
          500,
          `cannot send ${sig} to container ${c.name}: ${r.stderr.trim() || `kill exited ${r.exitCode}`} (the image needs a kill command)`,
        );
    }
  }

  async restart(ref: string, timeoutSeconds?: number): Promise<void> {
    await this.stop(ref, timeoutSeconds);
    await this.start(ref);
    this.emit('container', 'restart', this.container(ref));
  }

  // ---- remove, rename, wait ----

  /**
   * Removes a container and its pod. A removal already under way is joined (same outcome). When the pod
   * or a Service cannot be deleted (after retries) the container is `dead`, the caller gets a 500 naming
   * what is left, `wait condition=removed` ends with that error, and the next `rm` tries again.
   */
  async remove(ref: string, force: boolean, withVolumes = false): Promise<void> {
    const c = this.container(ref);
    // dockerd names the container as the client did
    if (c.status === 'running' && !force)
      throw conflict(`cannot remove container "${ref}": container is running: stop the container before removing or force remove`);
    let removal = this.removals.get(c.id);
    if (!removal) {
      removal = this.removeNow(c, withVolumes).finally(() => this.removals.delete(c.id));
      this.removals.set(c.id, removal);
    }
    return removal;
  }

  private async removeNow(c: ContainerRecord, withVolumes: boolean): Promise<void> {
    await this.ryuk.finish(c);
    c.status = 'removing';
    this.changed(c);
    this.ports.close(c);
    await this.peeks.retire(c.id);
    const failed: string[] = [];
    if (c.podName) {
      const podName = c.podName;
      try {
        if (!(await this.keepIfFailed(c))) await this.cluster.deletePod(podName);
      } catch (err) {
        failed.push(`pod ${podName} (${(err as Error).message})`);
      }
    }
    failed.push(...(await this.networks.deleteAliasServices(c)));
    if (c.plan.hostConfig.denyNetwork) {
      const policy = denyPolicyName(c);
      await this.cluster.deleteNetworkPolicy(policy).catch((err: Error) => failed.push(`networkpolicy ${policy} (${err.message})`));
    }
    if (failed.length) {
      c.status = 'dead';
      c.removalError = `could not remove container ${c.name}: ${failed.join(', ')} could not be deleted; they expire at their berth.dev/expires-at and \`berth gc\` removes them then; \`docker rm -f ${c.name}\` tries again`;
      c.removalFailures = (c.removalFailures ?? 0) + 1;
      this.changed(c);
      throw new DockerError(500, c.removalError);
    }
    this.containers.delete(c.id);
    this.spill.drop([...c.copiedArchives, ...c.pendingArchives]);
    this.execs.forgetContainer(c.id);
    c.health = undefined;
    // before `destroy`: `docker run --rm` ends on it, and its anonymous volumes are gone by then
    if (withVolumes) await this.removeAnonymousVolumes(c);
    this.emit('container', 'destroy', c);
    this.changed(c);
  }

  /** `rm -v` and `--rm`: the container's anonymous volumes go with it (named ones stay), as with dockerd. */
  private async removeAnonymousVolumes(c: ContainerRecord): Promise<void> {
    for (const a of c.anonymousVolumes ?? []) {
      if (!this.volumes.has(a.name)) continue; // never started: no claim was made
      // a volume another container mounts by its name stays, as with dockerd
      await this.volumes.remove(a.name, false).catch((err: Error) => leftBehind(`anonymous volume ${a.name} of container ${c.name}`, err));
    }
  }

  async rename(ref: string, name: string): Promise<void> {
    const c = this.container(ref);
    const clean = name.replace(/^\//, '');
    if (!NAME_RE.test(clean)) throw badRequest(`Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
    for (const o of this.containers.values())
      if (o !== c && o.name === clean)
        throw conflict(
          `Conflict. The container name "/${clean}" is already in use by container "${o.id}". You have to remove (or rename) that container to be able to reuse that name.`,
        );
    const was = c.name;
    c.name = clean;
    this.emit('container', 'rename', c);
    await this.noteRecord(c, `its new name (a berth taking it over would call it ${was})`);
  }

  /** Waits per Docker's conditions; resolves with the exit state. */
  async wait(c: ContainerRecord, condition: string, signal: AbortSignal): Promise<WaitResult> {
    // An error in the answer makes the docker CLI exit 125: a run whose output was cut, or whose
    // removal failed, never looks like a success.
    const result = (): WaitResult => {
      const errors = [c.error, c.outputError].filter(Boolean);
      return { StatusCode: c.exitCode, Error: errors.length ? { Message: errors.join('; ') } : null };
    };
    if (condition === 'removed') {
      const failures = c.removalFailures ?? 0;
      while (this.containers.get(c.id) === c && !signal.aborted && (c.removalFailures ?? 0) === failures) await this.nextChange(c, 60_000);
      if (this.containers.get(c.id) === c && c.removalError) return { StatusCode: c.exitCode, Error: { Message: c.removalError } };
      return result();
    }
    if (condition === 'next-exit') {
      const startGen = c.generation;
      const wasExited = c.status === 'exited';
      while (!signal.aborted && this.containers.get(c.id) === c && (c.status !== 'exited' || (wasExited && c.generation === startGen)))
        await this.nextChange(c, 60_000);
    } else {
      while (!signal.aborted && (c.status === 'running' || (c.status === 'created' && c.podName))) await this.nextChange(c, 60_000);
    }
    // The exit is answered once attached clients have the output (or were cut: then with the error).
    const until = Date.now() + READERS_GRACE_MS;
    while (!signal.aborted && c.status === 'exited' && c.readers > 0 && Date.now() < until) await this.nextChange(c, until - Date.now());
    return result();
  }

  // ---- exec, logs, attach ----

  async execCollect(c: ContainerRecord, argv: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    if (!c.podName) throw conflict(`container ${c.name} is not running`);
    return this.files.execInPod(c.podName, argv);
  }

  async execStream(c: ContainerRecord, argv: string[], io: { stdin?: Readable; stdout: Writable; stderr: Writable; tty?: boolean }): Promise<number> {
    if (!c.podName || c.status !== 'running') throw conflict(`Container ${c.id} is not running`);
    const { done } = await this.cluster.exec(c.podName, SANDBOX_CONTAINER, argv, io);
    return (await done).exitCode;
  }

  openLog(pod: string, q: LogQuery): Promise<Readable> {
    return this.cluster.openLog(pod, SANDBOX_CONTAINER, q);
  }

  attachStdin(pod: string, input: Readable, tty: boolean): Promise<Session> {
    return this.cluster.attachStdin(pod, SANDBOX_CONTAINER, input, tty);
  }

  // ---- networks and archives that name a container ----

  async connect(netRef: string, containerRef: string, aliases: string[]): Promise<void> {
    const n = this.networks.find(netRef);
    const c = this.container(containerRef);
    await this.networks.connect(n.id, c, aliases);
    await this.noteRecord(c, `its connection to ${n.name}`);
    await this.networks.introduce(n.id, c, (o, argv) => this.execCollect(o, argv));
  }

  async disconnect(netRef: string, containerRef: string): Promise<void> {
    const n = this.networks.find(netRef);
    const c = this.container(containerRef);
    await this.networks.disconnect(n.id, c, (o, argv) => this.execCollect(o, argv));
    await this.noteRecord(c, `its disconnection from ${n.name}`);
  }

  /** `archive` may still be arriving (containers/container-files.ts starts the copy meanwhile). */
  async putArchive(ref: string, path: string, archive: Promise<HeldTar>): Promise<void> {
    const c = this.container(ref);
    await this.files.put(c, path, archive);
    // A berth that takes this container over learns from its pod that files were copied in.
    await this.noteRecord(c, 'the copy into it (a berth taking it over would restart it without those files)');
  }

  /** What a berth taking the container over reads back from its pod (recovery.ts). */
  private recordAnnotation(c: ContainerRecord): string {
    return JSON.stringify(savedRecord(c, this.networks));
  }

  /**
   * Writes c's record onto its pod again after a change that a berth taking the container over must know
   * (name, networks, copied files). One container's writes go one after another, each with the record as it
   * is when it goes, so the last one written is the newest. A container without a pod has nothing to note:
   * its next pod is made with the record. A pod gone meanwhile is no failure for the same reason.
   */
  private noteRecord(c: ContainerRecord, what: string): Promise<void> {
    const write = async (): Promise<void> => {
      const pod = c.podName;
      if (!pod || !this.containers.has(c.id)) return;
      try {
        await this.cluster.annotatePod(pod, { [ANNOTATION_CONTAINER]: this.recordAnnotation(c) });
      } catch (err) {
        if (statusOf(err).code === 404) return;
        process.stderr.write(`berth serve: could not note ${what} on the pod ${pod} of ${c.name}: ${(err as Error).message}\n`);
      }
    };
    const next = (this.recordNotes.get(c) ?? Promise.resolve()).then(write, write);
    this.recordNotes.set(c, next);
    return next;
  }

  private peekSource(c: ContainerRecord): PeekSource {
    return {
      name: c.name,
      image: c.image,
      podName: (n) => peekPodName(c, n),
      plan: async (podName) => planPeekPod(c, podName, await this.readTemplate(c.plan.templateName), this.podContext),
      fill: async (podName) => {
        for (const a of [...c.copiedArchives, ...c.pendingArchives]) await this.files.extractInPod(podName, a.path, a.tar);
      },
    };
  }

  // ---- shutdown ----

  async shutdown(): Promise<void> {
    this.stopWatch?.();
    await this.peeks.retireAll();
    await this.ryuk.finishAll();
    for (const c of this.containers.values()) {
      this.ports.close(c);
      await this.keepIfFailed(c).catch(() => false);
    }
    await this.pruneCluster();
    this.spill.close();
  }

  /**
   * `--keep-failed`: a container that exited non-zero (or never started) leaves its pod for debugging,
   * marked so that shutdown, `--prune-start` and recovery pass it by, and expiring when the keep ends.
   */
  private async keepIfFailed(c: ContainerRecord): Promise<boolean> {
    const keep = this.opts.keepFailedSeconds ?? 0;
    if (keep <= 0 || !c.podName || (c.status !== 'exited' && c.status !== 'removing')) return false;
    if (c.exitCode === 0 && !c.error) return false;
    const until = rfc3339(new Date(Date.now() + keep * 1000));
    await this.cluster.annotatePod(c.podName, { [ANNOTATION_EXPIRES_AT]: until, [ANNOTATION_KEPT_FAILED]: until });
    return true;
  }

  /** Deletes every pod, Service and claim of this instance (shutdown, and `--prune-start` for a crashed predecessor). */
  pruneCluster(): Promise<void> {
    return pruneInstance(this.cluster, this.opts.owner);
  }
}

export { SandboxPlanError };
