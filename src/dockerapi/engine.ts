/**
 * The Docker engine berth pretends to be: containers are pods of one berth instance, watched through
 * one pod watch; networks are records whose aliases become Services (named per instance, so two
 * berths in one namespace never collide) and pod hostAliases; volumes are PersistentVolumeClaims;
 * images are records of pulls (the kubelet pulls for real), with their config when the registry gives it.
 */
import { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import type { V1Pod } from '@kubernetes/client-node';
import { LABEL_OWNER, ANNOTATION_EXPIRES_AT, rfc3339 } from '../runtime/plan.js';
import { ANNOTATION_CONTAINER, DOCKER_IMAGE_CAPABILITIES, LABEL_CONTAINER_ID, READY_FILE, SANDBOX_CONTAINER, SandboxPlanError, ownerLabels, planSandboxPod, sandboxPodName, type SandboxVolume } from '../runtime/sandbox-plan.js';
import type { LogQuery, SandboxCluster } from '../runtime/sandbox.js';
import type { StreamSession } from '../kube/streams.js';
import type { IncomingMessage } from 'node:http';
import { DockerError, badRequest, conflict, notFound } from './http.js';
import { labelsMatch } from './filters.js';
import { Reaper, isReaperImage, parseGoDuration } from './reaper.js';
import { LABEL_PEEK, PeekPods, type PeekSource } from './peek.js';
import { ContainerFiles } from './container-files.js';
import { PortProxy, PortTargetGone, type PortMode, type PortTarget } from './port-proxy.js';
import { PortPublisher } from './published-ports.js';
import { podSettingsFrom, SETTINGS_PREFIX } from '../runtime/sandbox-settings.js';
import { checkOneContainer, loadPodTemplate } from '../runtime/pod-template.js';
import type { PodTemplateSource } from '../runtime/workload.js';
import { statusOf } from '../kube/errors.js';
import type { ImageConfigSource, ImageLookup } from './image-config.js';
import { mergeImageConfig, podUser } from './image-merge.js';
import { Serial } from './serial.js';
import { HostConfigRefused, judgeHostConfig, type HostConfigPlan } from './host-config.js';
import { asArgv, newId, normalizeImage, podState, shortHash, type ContainerRecord, type CreateBody, type ImageRecord, type NetworkRecord, type VolumeRecord } from './model.js';

export interface EngineOptions {
  cluster: SandboxCluster;
  owner: string;
  ttlSeconds: number;
  /** Address published ports listen on when the client names none. */
  publishAddress: string;
  startTimeoutMs: number;
  /** How published ports reach pods: port-forward through the API server (default) or straight to the pod IP. */
  portMode?: PortMode;
  allowPrivileged: boolean;
  /** Given back after dropping ALL; default DOCKER_IMAGE_CAPABILITIES. */
  capabilities?: string[];
  /** Operator's `berth.dev/…` settings (from flags); a container's labels of the same key win. */
  podDefaults?: Record<string, string>;
  /** A failed container's pod outlives `rm`, the reaper and shutdown this long (0: deleted at once). */
  keepFailedSeconds?: number;
  /** Reads image configs from registries; undefined: images stay records (--no-image-config). */
  imageConfigs?: ImageConfigSource;
  /** `--pod-template`: laid under every pod; a container's `berth.dev/pod-template` label wins. */
  podTemplate?: PodTemplateSource;
}

/** A container label naming the PodTemplate object its pod is laid on. */
export const LABEL_POD_TEMPLATE = `${SETTINGS_PREFIX}pod-template`;

/** On a pod kept for debugging after its container was removed: the time it was kept until. */
export const ANNOTATION_KEPT_FAILED = 'berth.dev/kept-failed-until';

/** How long an exit waits for attached readers to deliver the output (AutoRemove, `wait`). */
const READERS_GRACE_MS = 60_000;

/** An unused peek pod waits this long for the next read (`docker cp` makes a HEAD and a GET). */
const PEEK_IDLE_MS = 5000;

const NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
const ALIAS_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

interface SavedContainer {
  id: string;
  name: string;
  created: string;
  image: string;
  body: CreateBody;
  networks: Array<{ id: string; name: string; labels: Record<string, string>; builtin: boolean; aliases: string[] }>;
  restartCount: number;
}

export class Engine {
  readonly containers = new Map<string, ContainerRecord>();
  readonly networks = new Map<string, NetworkRecord>();
  readonly volumes = new Map<string, VolumeRecord>();
  readonly images = new Map<string, ImageRecord>();
  readonly events = new EventEmitter();
  private readonly changes = new EventEmitter();
  private stopWatch?: () => void;
  private readonly cluster: SandboxCluster;
  private readonly peeks: PeekPods;
  private readonly ports: PortPublisher;
  readonly files: ContainerFiles;

  constructor(private readonly opts: EngineOptions) {
    this.cluster = opts.cluster;
    this.peeks = new PeekPods({ cluster: opts.cluster, idleMs: PEEK_IDLE_MS, startTimeoutMs: opts.startTimeoutMs });
    this.files = new ContainerFiles({ cluster: opts.cluster, peeks: this.peeks, isReaper: (c) => this.isReaper(c), peekSource: (c) => this.peekSource(c) });
    this.ports = new PortPublisher({
      publishAddress: opts.publishAddress,
      proxy: new PortProxy({
        mode: opts.portMode ?? 'forward',
        forward: (pod, port) => opts.cluster.forward(pod, port),
        log: (line) => process.stderr.write(`berth serve: ${line}\n`),
      }),
      target: (c) => this.portTarget(c),
    });
    this.changes.setMaxListeners(0);
    this.events.setMaxListeners(0);
    for (const name of ['bridge', 'host', 'none']) {
      const id = shortHash(`${opts.owner}/${name}`, 64);
      this.networks.set(id, { id, name, driver: name === 'bridge' ? 'bridge' : name === 'host' ? 'host' : 'null', created: new Date(), labels: {}, internal: false, builtin: true });
    }
  }

  get publishAddress(): string {
    return this.opts.publishAddress;
  }

  get owner(): string {
    return this.opts.owner;
  }

  /** What a restarted berth needs to take the container over again (kept as a pod annotation). */
  private recordOf(c: ContainerRecord): SavedContainer {
    const networks = [...c.networks].map(([id, aliases]) => {
      const n = this.networks.get(id);
      return { id, name: n?.name ?? id, labels: n?.labels ?? {}, builtin: n?.builtin ?? false, aliases };
    });
    return { id: c.id, name: c.name, created: c.created.toISOString(), image: c.image, body: c.body, networks, restartCount: c.restartCount };
  }

  /**
   * Takes over what an earlier berth with the same instance left running: containers from their pods'
   * annotation, their networks with them, volumes from their claims' annotation.
   */
  async recover(): Promise<number> {
    const selector = `${LABEL_OWNER}=${this.opts.owner}`;
    for (const pvc of await this.cluster.listClaims(selector)) {
      const name = pvc.metadata?.annotations?.['berth.dev/volume'];
      if (name && pvc.metadata?.name) this.volumes.set(name, { name, claim: pvc.metadata.name, created: new Date(pvc.metadata.creationTimestamp ?? Date.now()), labels: {} });
    }
    let count = 0;
    for (const pod of await this.cluster.listPods(selector)) {
      // A peek pod of a berth that died: nobody reads through it any more.
      if (pod.metadata?.labels?.[LABEL_PEEK]) {
        await this.cluster.deletePod(pod.metadata.name!).catch((err: Error) => this.leftBehind(`peek pod ${pod.metadata!.name}`, err));
        continue;
      }
      const raw = pod.metadata?.annotations?.[ANNOTATION_CONTAINER];
      if (!raw || pod.metadata?.deletionTimestamp || pod.metadata?.annotations?.[ANNOTATION_KEPT_FAILED]) continue;
      let saved: SavedContainer;
      try {
        saved = JSON.parse(raw) as SavedContainer;
      } catch {
        continue;
      }
      const networks = new Map<string, string[]>();
      for (const n of saved.networks ?? []) {
        const existing = [...this.networks.values()].find((x) => x.name === n.name);
        const id = existing?.id ?? n.id;
        if (!existing) this.networks.set(id, { id, name: n.name, driver: 'bridge', created: new Date(), labels: n.labels, internal: false, builtin: false });
        networks.set(id, n.aliases);
      }
      const generation = Number(/-(\d+)$/.exec(pod.metadata?.name ?? '')?.[1] ?? 1);
      const c: ContainerRecord = {
        id: saved.id,
        name: saved.name,
        created: new Date(saved.created),
        image: saved.image,
        body: saved.body,
        cmd: asArgv(saved.body.Cmd),
        entrypoint: asArgv(saved.body.Entrypoint),
        podName: pod.metadata?.name,
        podCreatedAt: 0,
        generation,
        status: 'created',
        exitCode: 0,
        error: '',
        oomKilled: false,
        restartCount: saved.restartCount ?? 0,
        pendingArchives: [],
        copiedArchives: [],
        ports: [],
        networks,
        podIP: pod.status?.podIP,
        readers: 0,
      };
      const s = podState(pod);
      c.status = s.status === 'created' ? 'created' : s.status;
      c.startedAt = s.startedAt;
      if (s.status === 'exited') Object.assign(c, { exitCode: s.exitCode ?? 0, error: s.error ?? '', oomKilled: Boolean(s.oomKilled), finishedAt: s.finishedAt });
      this.containers.set(c.id, c);
      this.pull(c.image);
      if (c.status === 'running') await this.ports.open(c).catch(() => undefined);
      count++;
    }
    return count;
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
  private onSync(pods: V1Pod[], listStartedAt: number): void {
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

  /** An object berth could not delete (after retries) is said so, with what ends it. */
  private leftBehind(what: string, err: Error): void {
    process.stderr.write(`berth serve: ${what} could not be deleted (${err.message}); it expires at its berth.dev/expires-at and \`berth gc\` removes it then\n`);
  }

  private onPod(type: string, pod: V1Pod): void {
    if (this.peeks.onPod(type, pod)) return;
    const shortId = pod.metadata?.labels?.[LABEL_CONTAINER_ID];
    const c = [...this.containers.values()].find((x) => x.id.startsWith(shortId ?? '-') && x.podName === pod.metadata?.name);
    if (!c) return;
    if (type === 'DELETED') {
      if (c.status === 'running' || c.status === 'created') this.setExited(c, { exitCode: 137 });
      return;
    }
    c.podIP = pod.status?.podIP ?? c.podIP;
    const s = podState(pod);
    if (s.status === 'running' && c.status !== 'running') {
      c.status = 'running';
      c.startedAt = s.startedAt ?? new Date().toISOString();
      this.emit('container', 'start', c);
      this.changed(c);
    } else if (s.status === 'exited' && (c.status === 'running' || c.status === 'created')) {
      this.setExited(c, s);
    } else {
      this.changed(c);
    }
  }

  private setExited(c: ContainerRecord, s: { exitCode?: number; error?: string; oomKilled?: boolean; startedAt?: string; finishedAt?: string }): void {
    c.status = 'exited';
    c.exitCode = s.exitCode ?? 0;
    c.error = s.error ?? '';
    c.oomKilled = Boolean(s.oomKilled);
    c.startedAt ??= s.startedAt;
    c.finishedAt = s.finishedAt ?? new Date().toISOString();
    this.ports.close(c);
    this.emit('container', 'die', c, { exitCode: String(c.exitCode) });
    this.changed(c);
    if (c.body.HostConfig?.AutoRemove) void this.autoRemove(c);
  }

  private async autoRemove(c: ContainerRecord): Promise<void> {
    // Attached clients read the output from the pod log: let them finish before the pod goes.
    const until = Date.now() + READERS_GRACE_MS;
    while (c.readers > 0 && Date.now() < until) await this.nextChange(c, until - Date.now());
    await this.remove(c.id, true).catch((err: Error) => process.stderr.write(`berth serve: auto-remove of ${c.name}: ${err.message}\n`));
  }

  /** A reader of the container's output is done (AutoRemove may be waiting for it). */
  releaseReader(c: ContainerRecord): void {
    c.readers--;
    this.changed(c);
  }

  private changed(c: ContainerRecord): void {
    this.changes.emit(c.id);
  }

  /** Resolves at the next change of `c` (or after `ms`). */
  nextChange(c: ContainerRecord, ms = 1000): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.changes.off(c.id, done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      this.changes.on(c.id, done);
    });
  }

  emit(type: string, action: string, c: { id: string; name: string; image?: string; body?: CreateBody }, extra: Record<string, string> = {}): void {
    const now = Date.now();
    const attributes: Record<string, string> = { name: c.name, ...(c.image ? { image: c.image } : {}), ...(c.body?.Labels ?? {}), ...extra };
    this.events.emit('event', { Type: type, Action: action, Actor: { ID: c.id, Attributes: attributes }, scope: 'local', time: Math.floor(now / 1000), timeNano: now * 1e6, status: action, id: c.id, from: c.image });
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

  network(ref: string): NetworkRecord {
    if (ref === 'default') ref = 'bridge';
    const byId = this.networks.get(ref);
    if (byId) return byId;
    for (const n of this.networks.values()) if (n.name === ref) return n;
    const matches = [...this.networks.values()].filter((n) => n.id.startsWith(ref));
    if (matches.length === 1) return matches[0];
    throw notFound(`network ${ref} not found`);
  }

  image(ref: string): ImageRecord {
    const norm = normalizeImage(ref);
    for (const img of this.images.values()) if (img.tags.has(norm) || img.id === ref || img.id === `sha256:${ref}` || (ref.length >= 12 && img.id.startsWith(`sha256:${ref}`))) return img;
    throw notFound(`No such image: ${ref}`);
  }

  // ---- images ----

  pull(ref: string): ImageRecord {
    const norm = normalizeImage(ref);
    const existing = [...this.images.values()].find((i) => i.tags.has(norm));
    if (existing) return existing;
    const id = `sha256:${shortHash(norm, 64)}`;
    const img: ImageRecord = { id, ref: norm, tags: new Set([norm]), created: new Date() };
    this.images.set(id, img);
    this.emit('image', 'pull', { id: norm, name: norm });
    return img;
  }

  /** Reads the image's config from its registry: again on every pull, once before a create. */
  async readImageConfig(img: ImageRecord, fresh: boolean): Promise<ImageLookup | undefined> {
    if (!this.opts.imageConfigs || isReaperImage(img.ref)) return undefined;
    const found = await this.opts.imageConfigs.lookUp(img.ref, fresh);
    if ('info' in found) img.info = found.info;
    return found;
  }

  /** Before create: the config of a pulled image not yet looked up (an unknown image is create's 404). */
  async prepareImage(ref: unknown): Promise<void> {
    if (typeof ref !== 'string') return;
    let img: ImageRecord;
    try {
      img = this.image(ref);
    } catch {
      return;
    }
    if (!img.info) await this.readImageConfig(img, false);
  }

  // ---- containers ----

  /**
   * The template of a container's pod: its label `berth.dev/pod-template` names a PodTemplate object in
   * the namespace (read at every start, so edits apply), else the operator's `--pod-template`. Never a
   * file: API clients must not read files on berth's machine.
   */
  async podTemplateFor(labels: Record<string, string> | null | undefined): Promise<PodTemplateSource | undefined> {
    const name = labels?.[LABEL_POD_TEMPLATE]?.trim();
    if (!name) return this.opts.podTemplate;
    if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name)) throw badRequest(`${LABEL_POD_TEMPLATE}="${name}" must name a PodTemplate object in namespace ${this.cluster.namespace} (files are for the operator's --pod-template)`);
    try {
      const template = await loadPodTemplate(name, (n) => this.cluster.readPodTemplate(n), `label ${LABEL_POD_TEMPLATE}`);
      checkOneContainer(template);
      return template;
    } catch (err) {
      if (statusOf(err).code === 404 || /not found/i.test((err as Error).message)) {
        throw badRequest(`${LABEL_POD_TEMPLATE}: PodTemplate ${name} not found in namespace ${this.cluster.namespace} (create it with kubectl apply, or drop the label)`);
      }
      throw err;
    }
  }

  create(name: string | null, body: CreateBody): ContainerRecord {
    if (!body.Image || typeof body.Image !== 'string') throw badRequest('config is missing the Image');
    if (name !== null && name !== '' && !NAME_RE.test(name.replace(/^\//, ''))) throw badRequest(`Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
    const img = this.image(body.Image);
    const hc = body.HostConfig ?? {};
    if (hc.Privileged && !this.opts.allowPrivileged) throw new DockerError(403, 'privileged containers are refused by this berth serve (start it with --allow-privileged)');
    const warnings = isReaperImage(body.Image) ? [] : this.hostConfigPlan(body).warnings;
    if (body.Env && !Array.isArray(body.Env)) throw badRequest('Env must be a list of "KEY=VALUE"');
    if (body.User && !/^\d+(:\d+)?$/.test(body.User)) throw badRequest(`user "${body.User}" must be numeric (uid or uid:gid): pods cannot resolve user names`);
    Object.assign(body, mergeImageConfig(body, img.info?.config)); // the request's own object: what follows sees the merged config
    if (!isReaperImage(body.Image)) {
      this.resolveMounts(body);
      podSettingsFrom(this.opts.podDefaults, body.Labels);
    }
    const id = newId();
    const clean = name ? name.replace(/^\//, '') : generatedName(id);
    for (const c of this.containers.values()) {
      if (c.name === clean) throw conflict(`Conflict. The container name "/${clean}" is already in use by container "${c.id}". You have to remove (or rename) that container to be able to reuse that name.`);
    }
    const networks = new Map<string, string[]>();
    const mode = hc.NetworkMode && hc.NetworkMode !== 'default' ? hc.NetworkMode : 'bridge';
    const modeNet = this.network(mode);
    networks.set(modeNet.id, []);
    for (const [netName, ep] of Object.entries(body.NetworkingConfig?.EndpointsConfig ?? {})) {
      const n = this.network(netName);
      const aliases = ep?.Aliases ?? [];
      for (const a of aliases) if (!ALIAS_RE.test(a)) throw badRequest(`network alias "${a}" must be a DNS label (lower-case letters, digits and '-')`);
      networks.set(n.id, [...(networks.get(n.id) ?? []), ...aliases]);
    }
    const c: ContainerRecord = {
      id,
      name: clean,
      created: new Date(),
      image: body.Image,
      body,
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
      networks,
      readers: 0,
      warnings,
    };
    this.containers.set(id, c);
    this.emit('container', 'create', c);
    return c;
  }

  /** The HostConfig's verdicts (host-config.ts): refused fields are create's 400. */
  private hostConfigPlan(body: CreateBody): HostConfigPlan {
    try {
      return judgeHostConfig(body.HostConfig as Record<string, unknown> | null | undefined, { baseCapabilities: this.opts.capabilities ?? DOCKER_IMAGE_CAPABILITIES, allowPrivileged: this.opts.allowPrivileged });
    } catch (err) {
      if (err instanceof HostConfigRefused) throw badRequest(err.message);
      throw err;
    }
  }

  /** Named volumes → claims; host paths are refused (a pod cannot see the caller's disk). */
  private resolveMounts(body: CreateBody): SandboxVolume[] {
    const hc = body.HostConfig ?? {};
    const out: SandboxVolume[] = [];
    for (const bind of hc.Binds ?? []) {
      const [source, target, mode] = bind.split(':');
      if (!source || !target) throw badRequest(`invalid bind "${bind}": expected source:target[:ro]`);
      if (source.startsWith('/') || source.startsWith('.')) {
        throw badRequest(`bind mount of host path ${source} is not supported: a pod cannot see this machine's disk; use a named volume or copy files with docker cp / PUT archive`);
      }
      out.push({ claim: source, target, readOnly: (mode ?? '').split(',').includes('ro') });
    }
    for (const m of hc.Mounts ?? []) {
      if (m.Type === 'volume' && m.Source && m.Target) out.push({ claim: m.Source, target: m.Target, readOnly: Boolean(m.ReadOnly) });
      else if (m.Type === 'tmpfs' && m.Target) out.push({ target: m.Target, readOnly: false, memory: true });
      else throw badRequest(`mount type ${m.Type ?? '?'} of ${m.Source ?? ''} is not supported (named volumes and tmpfs are)`);
    }
    for (const target of Object.keys(hc.Tmpfs ?? {})) out.push({ target, readOnly: false, memory: true });
    return out;
  }

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

  private readonly starts = new Serial();

  private async startNow(c: ContainerRecord): Promise<'started' | 'already'> {
    if (this.containers.get(c.id) !== c) throw notFound(`No such container: ${c.id}`);
    if (c.status === 'running') return 'already';
    if (c.status === 'removing' || c.status === 'dead') throw conflict(`container ${c.name} is being removed (or its removal failed): remove it again`);
    if (isReaperImage(c.image)) return this.startReaper(c);
    await this.peeks.retire(c.id);
    if (c.podName) {
      // A stopped container starts again as a new pod: the old one keeps nothing a restart needs.
      const old = c.podName;
      await this.cluster.deletePod(old).catch((err: Error) => this.leftBehind(`pod ${old} of container ${c.name}`, err));
      c.restartCount += c.status === 'exited' ? 1 : 0;
    }
    const volumes = this.resolveMounts(c.body);
    for (const v of volumes) if (v.claim) v.claim = (await this.ensureVolume(v.claim)).claim;
    c.generation++;
    const shortId = c.id.slice(0, 12);
    const settings = podSettingsFrom(this.opts.podDefaults, c.body.Labels);
    const template = await this.podTemplateFor(c.body.Labels);
    const hostConfig = this.hostConfigPlan(c.body);
    const podName = sandboxPodName(c.name, `${shortId}-${c.generation}`, settings.namePrefix);
    const pod = planSandboxPod(
      {
        podName,
        shortId,
        image: c.image,
        entrypoint: c.entrypoint,
        cmd: c.cmd,
        env: c.body.Env ?? [],
        workingDir: c.body.WorkingDir,
        user: podUser(c.body.User),
        // Docker's hostname is the short id unless one was given (clients such as the Kafka module read it).
        hostname: (c.body.Hostname || shortId).toLowerCase(),
        tty: c.body.Tty,
        openStdin: c.body.OpenStdin,
        stdinOnce: c.body.StdinOnce,
        labels: c.body.Labels ?? {},
        ports: this.containerPorts(c),
        volumes,
        memory: c.body.HostConfig?.Memory,
        nanoCpus: c.body.HostConfig?.NanoCpus,
        hostAliases: [...this.hostAliasesFor(c), ...hostConfig.extraHosts],
        waitForFiles: c.pendingArchives.length + c.copiedArchives.length > 0,
        capabilities: hostConfig.capabilities,
        privileged: hostConfig.privileged,
        readOnlyRootFilesystem: hostConfig.readOnlyRootFilesystem,
        supplementalGroups: hostConfig.supplementalGroups,
        record: JSON.stringify(this.recordOf(c)),
        settings,
        template,
      },
      { namespace: this.cluster.namespace, owner: this.opts.owner, now: new Date(), ttlSeconds: this.opts.ttlSeconds },
    );
    c.podName = podName;
    c.podCreatedAt = undefined;
    c.status = 'created';
    c.startedAt = undefined;
    c.finishedAt = undefined;
    c.exitCode = 0;
    c.error = '';
    c.outputError = undefined;
    c.podIP = undefined;
    try {
      await this.ensureAliasServices(c);
      await this.cluster.createPod(pod);
      c.podCreatedAt = Date.now();
    } catch (err) {
      return this.startFailed(c, podName, `could not create its pod ${podName}: ${(err as Error).message}`);
    }
    if (this.removedMeanwhile(c)) {
      await this.cluster.deletePod(podName).catch((err: Error) => this.leftBehind(`pod ${podName} of removed container ${c.name}`, err));
      await this.deleteAliasServices(c);
      throw conflict(`container ${c.name} was removed while it started`);
    }
    try {
      await this.ports.open(c);
    } catch (err) {
      return this.startFailed(c, podName, `could not publish its ports: ${(err as Error).message}`);
    }
    const deadline = Date.now() + this.opts.startTimeoutMs;
    const status = (): string => c.status;
    while (status() === 'created' && c.podName === podName) {
      if (Date.now() > deadline) return this.startFailed(c, podName, `its pod ${podName} did not run within ${this.opts.startTimeoutMs / 1000} s (raise --start-timeout, or see kubectl describe pod ${podName})`);
      await this.nextChange(c, deadline - Date.now());
    }
    if (this.removedMeanwhile(c)) throw conflict(`container ${c.name} was removed while it started`);
    if (status() === 'exited' && c.error) throw new DockerError(500, `failed to start container ${c.name}: ${c.error}`);
    if (c.pendingArchives.length + c.copiedArchives.length > 0 && status() === 'running') {
      // A restart is a new pod: what was copied into the old one is copied again, as docker keeps it.
      const archives = [...c.copiedArchives, ...c.pendingArchives];
      c.copiedArchives = archives;
      c.pendingArchives = [];
      for (const a of archives) await this.files.extractInPod(podName, a.path, a.tar);
      const r = await this.execCollect(c, ['/bin/sh', '-c', `: > ${READY_FILE}`]);
      if (r.exitCode !== 0) throw new DockerError(500, `could not release container ${c.name} after copying files: ${r.stderr}`);
    }
    if (c.body.Healthcheck?.Test?.length && c.body.Healthcheck.Test[0] !== 'NONE') this.runHealthcheck(c, c.generation);
    return 'started';
  }

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
    leftovers.push(...(await this.deleteAliasServices(c)));
    if (c.podName === podName) {
      c.podName = undefined;
      c.podCreatedAt = undefined;
      c.status = 'created';
      this.changed(c);
    }
    const left = leftovers.length ? `; left behind until their expiry and \`berth gc\`: ${leftovers.join(', ')}` : '';
    if (c.body.HostConfig?.AutoRemove && this.containers.get(c.id) === c) void this.autoRemove(c);
    throw new DockerError(500, `failed to start container ${c.name}: ${why}${left}`);
  }

  private readonly reapers = new Map<string, Reaper>();

  private async startReaper(c: ContainerRecord): Promise<'started'> {
    const env = new Map((c.body.Env ?? []).map((kv) => [kv.split('=')[0], kv.slice(kv.indexOf('=') + 1)] as [string, string]));
    const binding = c.body.HostConfig?.PortBindings?.['8080/tcp']?.[0];
    const reaper = new Reaper({
      host: this.opts.publishAddress,
      port: Number(binding?.HostPort || 0),
      connectionTimeoutMs: parseGoDuration(env.get('RYUK_CONNECTION_TIMEOUT'), 60_000),
      reconnectionTimeoutMs: parseGoDuration(env.get('RYUK_RECONNECTION_TIMEOUT'), 10_000),
      reap: (filters) => this.reap(filters, c.id),
      onDone: () => {
        this.reapers.delete(c.id);
        if (c.status === 'running') this.setExited(c, { exitCode: 0 });
      },
    });
    const port = await reaper.start();
    this.reapers.set(c.id, reaper);
    c.generation++;
    c.status = 'running';
    c.startedAt = new Date().toISOString();
    c.finishedAt = undefined;
    c.ports = [{ key: '8080/tcp', containerPort: 8080, hostIp: this.opts.publishAddress, reportedIp: binding?.HostIp || '0.0.0.0', hostPort: port }];
    this.emit('container', 'start', c);
    this.changed(c);
    return 'started';
  }

  isReaper(c: ContainerRecord): boolean {
    return this.reapers.has(c.id) || isReaperImage(c.image);
  }

  private async reap(filters: string[][], self: string): Promise<void> {
    const matches = (labels: Record<string, string>): boolean => filters.some((f) => labelsMatch(f, labels));
    for (const c of [...this.containers.values()]) {
      if (c.id !== self && matches(c.body.Labels ?? {})) await this.remove(c.id, true).catch((err: Error) => process.stderr.write(`berth serve: reaper: ${err.message}\n`));
    }
    for (const n of [...this.networks.values()]) if (!n.builtin && matches(n.labels)) {
      try {
        this.removeNetwork(n.id);
      } catch {
        /* still in use */
      }
    }
    for (const v of [...this.volumes.values()]) if (matches(v.labels)) await this.removeVolume(v.name, true).catch(() => undefined);
  }

  /** HEALTHCHECK run by berth through exec, as dockerd does: interval, timeout, retries, start period. */
  private runHealthcheck(c: ContainerRecord, generation: number): void {
    const hc = c.body.Healthcheck!;
    const test = hc.Test!;
    const argv = test[0] === 'CMD-SHELL' ? ['/bin/sh', '-c', test.slice(1).join(' ')] : test[0] === 'CMD' ? test.slice(1) : test;
    // 0 means the default, as on dockerd (image configs carry zeros for flags HEALTHCHECK was not given).
    const interval = Math.max(100, (hc.Interval || 30e9) / 1e6);
    const timeout = Math.max(100, (hc.Timeout || 30e9) / 1e6);
    const retries = hc.Retries || 3;
    const startPeriod = (hc.StartPeriod ?? 0) / 1e6;
    const began = Date.now();
    c.health = { status: 'starting', failingStreak: 0, log: [] };
    const tick = async (): Promise<void> => {
      if (c.status !== 'running' || c.generation !== generation || !c.health) return;
      const start = new Date();
      let exitCode = 1;
      let output: string;
      try {
        const r = await Promise.race([this.execCollect(c, argv), new Promise<never>((_r, rej) => setTimeout(() => rej(new Error('timed out')), timeout).unref())]);
        exitCode = r.exitCode;
        output = r.stdout + r.stderr;
      } catch (err) {
        output = (err as Error).message;
      }
      if (c.generation !== generation || !c.health) return;
      c.health.log = [...c.health.log, { Start: start.toISOString(), End: new Date().toISOString(), ExitCode: exitCode, Output: output }].slice(-5);
      if (exitCode === 0) {
        c.health.status = 'healthy';
        c.health.failingStreak = 0;
      } else if (Date.now() - began >= startPeriod) {
        c.health.failingStreak++;
        if (c.health.failingStreak >= retries) c.health.status = 'unhealthy';
      }
      this.changed(c);
      setTimeout(() => void tick(), interval).unref();
    };
    setTimeout(() => void tick(), Math.min(interval, 1000)).unref();
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

  hostAliasesFor(c: ContainerRecord): Array<{ ip: string; hostnames: string[] }> {
    const byIp = new Map<string, Set<string>>();
    for (const [netId] of c.networks) {
      const n = this.networks.get(netId);
      if (!n || n.builtin) continue;
      for (const other of this.containers.values()) {
        if (other === c || other.status !== 'running' || !other.podIP) continue;
        const aliases = other.networks.get(netId);
        if (!aliases) continue;
        const names = byIp.get(other.podIP) ?? new Set<string>();
        for (const a of [...aliases, other.name.toLowerCase()]) if (ALIAS_RE.test(a)) names.add(a);
        byIp.set(other.podIP, names);
      }
    }
    return [...byIp].map(([ip, names]) => ({ ip, hostnames: [...names] }));
  }

  /** One Service per alias and network, named uniquely for this berth instance. */
  serviceName(netId: string, alias: string): string {
    const suffix = shortHash(`${this.opts.owner}/${netId}`, 8);
    return `${alias.slice(0, 50).replace(/-+$/, '')}-${suffix}`;
  }

  private async ensureAliasServices(c: ContainerRecord): Promise<void> {
    const expires = rfc3339(new Date(Date.now() + this.opts.ttlSeconds * 1000));
    for (const [netId, aliases] of c.networks) {
      const n = this.networks.get(netId);
      if (!n || n.builtin) continue;
      for (const alias of aliases) {
        const name = this.serviceName(netId, alias);
        await this.cluster.deleteService(name);
        await this.cluster.createService({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: {
            name,
            labels: { ...ownerLabels(this.opts.owner), [LABEL_CONTAINER_ID]: c.id.slice(0, 12) },
            annotations: { [ANNOTATION_EXPIRES_AT]: expires, 'berth.dev/alias': alias, 'berth.dev/network': n.name },
          },
          spec: { clusterIP: 'None', selector: { [LABEL_CONTAINER_ID]: c.id.slice(0, 12), [LABEL_OWNER]: this.opts.owner } },
        });
      }
    }
  }

  /** Deletes the container's alias Services; returns the ones that could not be deleted (after retries). */
  private async deleteAliasServices(c: ContainerRecord): Promise<string[]> {
    const failed: string[] = [];
    for (const [netId, aliases] of c.networks) {
      for (const alias of aliases) {
        const name = this.serviceName(netId, alias);
        await this.cluster.deleteService(name).catch((err: Error) => failed.push(`service ${name} (${err.message})`));
      }
    }
    return failed;
  }

  async stop(ref: string, timeoutSeconds: number | undefined, signal?: string): Promise<'stopped' | 'already'> {
    const c = this.container(ref);
    if (c.status === 'running' && this.reapers.has(c.id)) {
      await this.reapers.get(c.id)!.finish(false);
      return 'stopped';
    }
    if (c.status !== 'running' || !c.podName) return 'already';
    const t = timeoutSeconds ?? 10;
    if (t > 0) {
      await this.execCollect(c, ['kill', `-${(signal ?? 'TERM').replace(/^SIG/, '')}`, '1']).catch(() => undefined);
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
    if (this.reapers.has(c.id)) return void (await this.reapers.get(c.id)!.finish(false));
    const sig = signal.replace(/^SIG/, '').toUpperCase() || 'KILL';
    this.emit('container', 'kill', c, { signal: sig });
    if (sig === 'KILL' || sig === '9') await this.killPod(c);
    else {
      const r = await this.execCollect(c, ['kill', `-${sig}`, '1']);
      if (r.exitCode !== 0) throw new DockerError(500, `cannot send ${sig} to container ${c.name}: ${r.stderr.trim() || `kill exited ${r.exitCode}`} (the image needs a kill command)`);
    }
  }

  async restart(ref: string, timeoutSeconds?: number): Promise<void> {
    await this.stop(ref, timeoutSeconds);
    await this.start(ref);
    this.emit('container', 'restart', this.container(ref));
  }

  /**
   * Removes a container and its pod. A removal already under way is joined (same outcome). When the pod
   * or a Service cannot be deleted (after retries) the container is `dead`, the caller gets a 500 naming
   * what is left, `wait condition=removed` ends with that error, and the next `rm` tries again.
   */
  async remove(ref: string, force: boolean): Promise<void> {
    const c = this.container(ref);
    if (c.status === 'running' && !force) throw conflict(`You cannot remove a running container ${c.id}. Stop the container before attempting removal or force remove`);
    let removal = this.removals.get(c.id);
    if (!removal) {
      removal = this.removeNow(c).finally(() => this.removals.delete(c.id));
      this.removals.set(c.id, removal);
    }
    return removal;
  }

  private readonly removals = new Map<string, Promise<void>>();

  private async removeNow(c: ContainerRecord): Promise<void> {
    await this.reapers.get(c.id)?.finish(false);
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
    failed.push(...(await this.deleteAliasServices(c)));
    if (failed.length) {
      c.status = 'dead';
      c.removalError = `could not remove container ${c.name}: ${failed.join(', ')} could not be deleted; they expire at their berth.dev/expires-at and \`berth gc\` removes them then; \`docker rm -f ${c.name}\` tries again`;
      c.removalFailures = (c.removalFailures ?? 0) + 1;
      this.changed(c);
      throw new DockerError(500, c.removalError);
    }
    this.containers.delete(c.id);
    c.health = undefined;
    this.emit('container', 'destroy', c);
    this.changed(c);
  }

  rename(ref: string, name: string): void {
    const c = this.container(ref);
    const clean = name.replace(/^\//, '');
    if (!NAME_RE.test(clean)) throw badRequest(`Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
    for (const o of this.containers.values()) if (o !== c && o.name === clean) throw conflict(`Conflict. The container name "/${clean}" is already in use by container "${o.id}". You have to remove (or rename) that container to be able to reuse that name.`);
    c.name = clean;
    this.emit('container', 'rename', c);
  }

  /** Waits per Docker's conditions; resolves with the exit state. */
  async wait(c: ContainerRecord, condition: string, signal: AbortSignal): Promise<{ StatusCode: number; Error: { Message: string } | null }> {
    // An error in the answer makes the docker CLI exit 125: a run whose output was cut, or whose
    // removal failed, never looks like a success.
    const result = (): { StatusCode: number; Error: { Message: string } | null } => {
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
      while (!signal.aborted && this.containers.get(c.id) === c && (c.status !== 'exited' || (wasExited && c.generation === startGen))) await this.nextChange(c, 60_000);
    } else {
      while (!signal.aborted && (c.status === 'running' || (c.status === 'created' && c.podName))) await this.nextChange(c, 60_000);
    }
    // The exit is answered once attached clients have the output (or were cut: then with the error).
    const until = Date.now() + READERS_GRACE_MS;
    while (!signal.aborted && c.status === 'exited' && c.readers > 0 && Date.now() < until) await this.nextChange(c, until - Date.now());
    return result();
  }

  // ---- exec into the running container ----

  async execCollect(c: ContainerRecord, argv: string[], stdin?: Buffer[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    if (!c.podName) throw conflict(`container ${c.name} is not running`);
    return this.files.execInPod(c.podName, argv, stdin);
  }

  async execStream(c: ContainerRecord, argv: string[], io: { stdin?: Readable; stdout: Writable; stderr: Writable; tty?: boolean }): Promise<number> {
    if (!c.podName || c.status !== 'running') throw conflict(`Container ${c.id} is not running`);
    const { done, session } = await this.cluster.exec(c.podName, SANDBOX_CONTAINER, argv, io);
    void session;
    return (await done).exitCode;
  }

  openLog(pod: string, q: LogQuery): Promise<IncomingMessage> {
    return this.cluster.openLog(pod, SANDBOX_CONTAINER, q);
  }

  attachStdin(pod: string, input: Readable, tty: boolean): Promise<StreamSession> {
    return this.cluster.attachStdin(pod, SANDBOX_CONTAINER, input, tty);
  }

  // ---- archives (container-files.ts) ----

  async putArchive(ref: string, path: string, tar: Buffer): Promise<void> {
    await this.files.put(this.container(ref), path, tar);
  }

  private peekSource(c: ContainerRecord): PeekSource {
    return {
      name: c.name,
      image: c.image,
      podName: (n) => sandboxPodName(c.name, `${c.id.slice(0, 12)}-peek${n}`, podSettingsFrom(this.opts.podDefaults, c.body.Labels).namePrefix),
      plan: async (podName) => {
        const shortId = c.id.slice(0, 12);
        const pod = planSandboxPod(
          {
            podName,
            shortId,
            image: c.image,
            entrypoint: ['sleep'],
            cmd: [String(this.opts.ttlSeconds)],
            env: c.body.Env ?? [],
            workingDir: c.body.WorkingDir,
            user: podUser(c.body.User),
            capabilities: this.opts.capabilities ?? DOCKER_IMAGE_CAPABILITIES,
            settings: podSettingsFrom(this.opts.podDefaults, c.body.Labels),
            template: await this.podTemplateFor(c.body.Labels),
          },
          { namespace: this.cluster.namespace, owner: this.opts.owner, now: new Date(), ttlSeconds: this.opts.ttlSeconds },
        );
        // Not the container's pod: its Services must not select it, and recovery must not take it for one.
        const labels = pod.metadata!.labels!;
        delete labels[LABEL_CONTAINER_ID];
        labels[LABEL_PEEK] = shortId;
        return pod;
      },
      fill: async (podName) => {
        for (const a of [...c.copiedArchives, ...c.pendingArchives]) await this.files.extractInPod(podName, a.path, a.tar);
      },
    };
  }

  // ---- networks ----

  createNetwork(body: { Name?: string; Driver?: string; Labels?: Record<string, string> | null; Internal?: boolean; CheckDuplicate?: boolean }): NetworkRecord {
    const name = body.Name;
    if (!name || !NAME_RE.test(name)) throw badRequest(`invalid network name "${name ?? ''}"`);
    for (const n of this.networks.values()) if (n.name === name) throw conflict(`network with name ${name} already exists`);
    const id = newId();
    const rec: NetworkRecord = { id, name, driver: body.Driver || 'bridge', created: new Date(), labels: body.Labels ?? {}, internal: Boolean(body.Internal), builtin: false };
    this.networks.set(id, rec);
    this.emit('network', 'create', { id, name });
    return rec;
  }

  async connect(netRef: string, containerRef: string, aliases: string[]): Promise<void> {
    const n = this.network(netRef);
    const c = this.container(containerRef);
    for (const a of aliases) if (!ALIAS_RE.test(a)) throw badRequest(`network alias "${a}" must be a DNS label (lower-case letters, digits and '-')`);
    c.networks.set(n.id, [...new Set([...(c.networks.get(n.id) ?? []), ...aliases])]);
    if (c.status === 'running') await this.ensureAliasServices(c);
    this.emit('network', 'connect', { id: n.id, name: n.name }, { container: c.id });
  }

  async disconnect(netRef: string, containerRef: string): Promise<void> {
    const n = this.network(netRef);
    const c = this.container(containerRef);
    for (const a of c.networks.get(n.id) ?? []) await this.cluster.deleteService(this.serviceName(n.id, a)).catch(() => undefined);
    c.networks.delete(n.id);
    this.emit('network', 'disconnect', { id: n.id, name: n.name }, { container: c.id });
  }

  removeNetwork(ref: string): void {
    const n = this.network(ref);
    if (n.builtin) throw new DockerError(403, `${n.name} is a pre-defined network and cannot be removed`);
    const users = [...this.containers.values()].filter((c) => c.networks.has(n.id) && c.status === 'running');
    if (users.length) throw new DockerError(403, `error while removing network: network ${n.name} id ${n.id} has active endpoints`);
    for (const c of this.containers.values()) c.networks.delete(n.id);
    this.networks.delete(n.id);
    this.emit('network', 'destroy', { id: n.id, name: n.name });
  }

  // ---- volumes ----

  async ensureVolume(name: string, labels: Record<string, string> = {}): Promise<VolumeRecord> {
    const existing = this.volumes.get(name);
    if (existing) return existing;
    if (!NAME_RE.test(name)) throw badRequest(`invalid volume name "${name}"`);
    const claim = `${name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'vol'}-${shortHash(`${this.opts.owner}/${name}`, 8)}`;
    await this.cluster.createClaim({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: claim,
        labels: ownerLabels(this.opts.owner),
        annotations: { [ANNOTATION_EXPIRES_AT]: rfc3339(new Date(Date.now() + this.opts.ttlSeconds * 1000)), 'berth.dev/volume': name },
      },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    const rec: VolumeRecord = { name, claim, created: new Date(), labels };
    this.volumes.set(name, rec);
    this.emit('volume', 'create', { id: name, name });
    return rec;
  }

  async removeVolume(name: string, force: boolean): Promise<void> {
    const v = this.volumes.get(name);
    if (!v) throw notFound(`get ${name}: no such volume`);
    const users = [...this.containers.values()].filter((c) => (c.body.HostConfig?.Binds ?? []).some((b) => b.split(':')[0] === name) || (c.body.HostConfig?.Mounts ?? []).some((m) => m.Source === name));
    if (users.length && !force) throw conflict(`remove ${name}: volume is in use - [${users.map((u) => u.id).join(', ')}]`);
    await this.cluster.deleteClaim(v.claim);
    this.volumes.delete(name);
    this.emit('volume', 'destroy', { id: name, name });
  }

  // ---- shutdown ----

  async shutdown(): Promise<void> {
    this.stopWatch?.();
    await this.peeks.retireAll();
    for (const r of this.reapers.values()) await r.finish(false);
    for (const c of this.containers.values()) {
      this.ports.close(c);
      await this.keepIfFailed(c).catch(() => false);
    }
    await this.pruneCluster();
  }

  /**
   * `--keep-failed`: a container that exited non-zero (or never started) leaves its pod for debugging,
   * marked so that shutdown, `--prune-start` and recovery pass it by, and expiring when the keep ends.
   */
  private async keepIfFailed(c: ContainerRecord): Promise<boolean> {
    const keep = this.opts.keepFailedSeconds ?? 0;
    if (keep <= 0 || !c.podName || c.status !== 'exited' && c.status !== 'removing') return false;
    if (c.exitCode === 0 && !c.error) return false;
    const until = rfc3339(new Date(Date.now() + keep * 1000));
    await this.cluster.annotatePod(c.podName, { [ANNOTATION_EXPIRES_AT]: until, [ANNOTATION_KEPT_FAILED]: until });
    return true;
  }

  /** Deletes every pod, Service and claim of this instance (shutdown, and `--prune-start` for a crashed predecessor). */
  async pruneCluster(): Promise<void> {
    const selector = `${LABEL_OWNER}=${this.opts.owner}`;
    const listed = <T>(what: string) => (err: Error): T[] => {
      process.stderr.write(`berth serve: could not list ${what} to delete them (${err.message}); they expire at their berth.dev/expires-at and \`berth gc\` removes them then\n`);
      return [];
    };
    const pods = (await this.cluster.listPods(selector).catch(listed<V1Pod>('pods'))).filter((p) => !p.metadata?.annotations?.[ANNOTATION_KEPT_FAILED]);
    await Promise.all(pods.map((p) => this.cluster.deletePod(p.metadata!.name!).catch((err: Error) => this.leftBehind(`pod ${p.metadata!.name}`, err))));
    const services = await this.cluster.listServices(selector).catch(listed<{ metadata?: { name?: string } }>('services'));
    await Promise.all(services.map((s) => this.cluster.deleteService(s.metadata!.name!).catch((err: Error) => this.leftBehind(`service ${s.metadata!.name}`, err))));
    const claims = await this.cluster.listClaims(selector).catch(listed<{ metadata?: { name?: string } }>('claims'));
    await Promise.all(claims.map((s) => this.cluster.deleteClaim(s.metadata!.name!).catch((err: Error) => this.leftBehind(`claim ${s.metadata!.name}`, err))));
  }
}

function generatedName(id: string): string {
  const adjectives = ['brave', 'calm', 'eager', 'keen', 'quiet', 'swift', 'bold', 'fond'];
  const nouns = ['turing', 'hopper', 'lovelace', 'curie', 'noether', 'ritchie', 'knuth', 'liskov'];
  const n = parseInt(id.slice(0, 8), 16);
  return `${adjectives[n % 8]}_${nouns[(n >> 3) % 8]}_${id.slice(0, 6)}`;
}

export { SandboxPlanError };
