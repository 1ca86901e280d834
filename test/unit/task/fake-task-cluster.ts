/**
 * An in-memory cluster for task runs (src/task/task-cluster.ts): objects kept in maps, a pod watch fed
 * from them, logs served from what the task wrote, and a kubelet the test drives. A created pod's `inputs`
 * container starts at once and ends when berth's stream into it ended; then the task container starts and
 * writes `output`; it ends only when the test says so (exit, or a delete from outside). No HTTP, no client-node.
 */
import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { V1ContainerStatus, V1PersistentVolumeClaim, V1Pod, V1PodTemplate, V1Secret } from '@kubernetes/client-node';
import { KubeError } from '../../../src/kube/errors.js';
import type { PodLogQuery } from '../../../src/kube/pod-log.js';
import { INPUTS_CONTAINER, TASK_CONTAINER } from '../../../src/task/pod-plan.js';
import type { FeedSession } from '../../../src/runtime/file-feed.js';
import type { TaskCluster } from '../../../src/task/task-cluster.js';

type Watcher = (pod: V1Pod, type: string) => boolean;

const notFound = (what: string): KubeError => new KubeError(`${what} not found`, 404, 'NotFound');

export class FakeTaskCluster implements TaskCluster {
  readonly namespace = 'ci';
  readonly pods = new Map<string, V1Pod>();
  readonly secrets = new Map<string, V1Secret>();
  readonly claims = new Map<string, V1PersistentVolumeClaim>();
  /** Every pod as berth asked for it, in order. */
  readonly created: V1Pod[] = [];
  /** Every call that creates or deletes, in order: `create pod task-…`, `delete secret task-…-params`. */
  readonly calls: string[] = [];
  /** What berth streamed into each pod's `inputs` container. */
  readonly inputs = new Map<string, Buffer>();
  /** What the task container writes once it runs. */
  output = { stdout: '', stderr: '' };
  /** Rights the server denies, as `verb resource[/subresource]`. */
  readonly denied = new Set<string>();
  private readonly watchers = new Map<string, Set<Watcher>>();
  private readonly follows = new Map<string, Set<PassThrough>>();
  private readonly started = new Map<string, () => void>();

  // --- the kubelet, driven by the test

  /** Resolves once the task container of the pod runs (and has written its output). */
  taskRunning(name: string): Promise<void> {
    if (this.taskState(name)?.running) return Promise.resolve();
    return new Promise((resolve) => this.started.set(name, resolve));
  }

  /** The task container ends with `code`. */
  exit(name: string, code: number): void {
    const pod = this.pod(name);
    this.setTask(pod, { terminated: { exitCode: code, startedAt: new Date(), finishedAt: new Date() } }, code === 0 ? 'Succeeded' : 'Failed');
  }

  /**
   * `kubectl delete pod` while the task runs: the kubelet stops it (it traps SIGTERM and exits 0); the pod is
   * gone at once, or stays terminating a while (its log still served) until berth deletes it.
   */
  deleteFromOutside(name: string, podGone: boolean): void {
    const pod = this.pod(name);
    const now = new Date();
    pod.metadata = { ...pod.metadata, deletionTimestamp: new Date(now.getTime() + 10_000), deletionGracePeriodSeconds: 10 };
    this.setTask(pod, { terminated: { exitCode: 0, startedAt: now, finishedAt: now } }, 'Succeeded');
    if (podGone) this.remove(name);
  }

  /** The first pod berth created (tests of a single run). */
  firstPod(): string {
    const name = this.created[0]?.metadata?.name;
    if (!name) throw new Error('no pod was created');
    return name;
  }

  // --- TaskCluster

  async createPod(pod: V1Pod): Promise<V1Pod> {
    const name = pod.metadata?.name ?? '';
    this.calls.push(`create pod ${name}`);
    this.created.push(structuredClone(pod));
    const stored: V1Pod = { ...structuredClone(pod), status: { phase: 'Pending' } };
    stored.metadata = { ...stored.metadata, uid: `uid-${name}` };
    this.pods.set(name, stored);
    this.notify(name, 'ADDED');
    setImmediate(() => this.startPod(name));
    return structuredClone(stored);
  }

  async deletePod(name: string): Promise<void> {
    this.calls.push(`delete pod ${name}`);
    if (this.pods.has(name)) this.remove(name);
  }

  async createSecret(secret: V1Secret): Promise<V1Secret> {
    this.calls.push(`create secret ${secret.metadata?.name ?? ''}`);
    this.secrets.set(secret.metadata?.name ?? '', structuredClone(secret));
    return secret;
  }

  async deleteSecret(name: string): Promise<void> {
    this.calls.push(`delete secret ${name}`);
    this.secrets.delete(name);
  }

  watchPod(name: string, onPod: Watcher, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(new KubeError('aborted'));
    return new Promise((resolve, reject) => {
      const set = this.watchers.get(name) ?? new Set<Watcher>();
      this.watchers.set(name, set);
      const watcher: Watcher = (pod, type) => {
        const done = onPod(pod, type);
        if (done) {
          set.delete(watcher);
          resolve();
        }
        return done;
      };
      set.add(watcher);
      signal?.addEventListener('abort', () => {
        set.delete(watcher);
        reject(new KubeError('aborted'));
      });
      // a watch begins with the pod as it is, as the API server's does
      const now = this.pods.get(name);
      if (now) queueMicrotask(() => watcher(structuredClone(now), 'ADDED'));
    });
  }

  async readPodTemplate(name: string): Promise<V1PodTemplate> {
    throw notFound(`podtemplates "${name}"`);
  }

  async readPodLog(name: string, container: string, q?: Omit<PodLogQuery, 'follow'>): Promise<Buffer> {
    this.pod(name);
    return Buffer.from(container === TASK_CONTAINER && this.taskState(name) ? this.logOf(q?.stream) : '');
  }

  async openPodLog(name: string, container: string, q?: PodLogQuery): Promise<IncomingMessage> {
    this.pod(name);
    const stream = new PassThrough();
    if (container === TASK_CONTAINER) stream.write(this.logOf(q?.stream));
    const state = this.taskState(name);
    if (!q?.follow || !state?.running) stream.end();
    else {
      const set = this.follows.get(name) ?? new Set<PassThrough>();
      this.follows.set(name, set.add(stream));
    }
    return stream as unknown as IncomingMessage;
  }

  async servesSplitLogs(): Promise<boolean> {
    return true;
  }

  async reviewAccess(verb: string, resource: string, subresource?: string): Promise<boolean> {
    return !this.denied.has(`${verb} ${resource}${subresource ? `/${subresource}` : ''}`);
  }

  async attachFeed(pod: string, container: string, stdin: Readable): Promise<FeedSession> {
    this.pod(pod);
    if (container !== INPUTS_CONTAINER) throw new Error(`attach to ${container}: berth feeds only the inputs container`);
    const sent = buffer(stdin);
    const done = sent.then((tar) => {
      this.inputs.set(pod, tar);
      // the inputs are in place: the init container ends, the task starts
      if (!this.pods.has(pod)) return;
      this.setInit(this.pod(pod), { terminated: { exitCode: 0 } });
      this.runTask(pod);
    });
    return { done, supportsStdinClose: true, stdinSent: sent.then(() => undefined), close: () => stdin.destroy() };
  }

  async exec(pod: string, container: string): Promise<never> {
    throw new Error(`exec in ${pod}/${container}: not faked (no test reads outputs)`);
  }

  async readClaim(name: string): Promise<V1PersistentVolumeClaim> {
    const claim = this.claims.get(name);
    if (!claim) throw notFound(`persistentvolumeclaims "${name}"`);
    return claim;
  }

  async createClaim(pvc: V1PersistentVolumeClaim): Promise<V1PersistentVolumeClaim> {
    this.calls.push(`create claim ${pvc.metadata?.name ?? ''}`);
    this.claims.set(pvc.metadata?.name ?? '', structuredClone(pvc));
    return pvc;
  }

  async annotateClaim(name: string, annotations: Record<string, string>): Promise<void> {
    const claim = await this.readClaim(name);
    claim.metadata = { ...claim.metadata, annotations: { ...claim.metadata?.annotations, ...annotations } };
  }

  // --- inside the fake

  private pod(name: string): V1Pod {
    const pod = this.pods.get(name);
    if (!pod) throw notFound(`pods "${name}"`);
    return pod;
  }

  /** Scheduled: the `inputs` container waits for berth's stream; a pod without one runs its task at once. */
  private startPod(name: string): void {
    const pod = this.pods.get(name);
    if (!pod) return;
    pod.spec = { ...pod.spec, nodeName: 'node-1', containers: pod.spec?.containers ?? [] };
    if (pod.spec.initContainers?.some((c) => c.name === INPUTS_CONTAINER)) this.setInit(pod, { running: { startedAt: new Date() } });
    else this.runTask(name);
  }

  private runTask(name: string): void {
    const pod = this.pod(name);
    this.setTask(pod, { running: { startedAt: new Date() } }, 'Running');
    this.started.get(name)?.();
  }

  private setInit(pod: V1Pod, state: V1ContainerStatus['state']): void {
    pod.status = { ...pod.status, initContainerStatuses: [status(INPUTS_CONTAINER, state)] };
    this.notify(pod.metadata?.name ?? '', 'MODIFIED');
  }

  private setTask(pod: V1Pod, state: V1ContainerStatus['state'], phase: string): void {
    const name = pod.metadata?.name ?? '';
    pod.status = { ...pod.status, phase, podIP: '10.0.0.7', containerStatuses: [status(TASK_CONTAINER, state)] };
    this.notify(name, 'MODIFIED');
    // a log follow ends with its container
    if (state?.terminated) this.endFollows(name);
  }

  private taskState(name: string): V1ContainerStatus['state'] | undefined {
    return this.pods.get(name)?.status?.containerStatuses?.find((c) => c.name === TASK_CONTAINER)?.state;
  }

  private logOf(stream: PodLogQuery['stream']): string {
    return stream === 'Stdout' ? this.output.stdout : stream === 'Stderr' ? this.output.stderr : this.output.stdout + this.output.stderr;
  }

  private remove(name: string): void {
    const pod = this.pod(name);
    this.pods.delete(name);
    this.endFollows(name);
    for (const w of this.watchers.get(name) ?? []) w(structuredClone(pod), 'DELETED');
  }

  private endFollows(name: string): void {
    for (const s of this.follows.get(name) ?? []) s.end();
    this.follows.delete(name);
  }

  private notify(name: string, type: string): void {
    const pod = this.pods.get(name);
    if (!pod) return;
    for (const w of [...(this.watchers.get(name) ?? [])]) w(structuredClone(pod), type);
  }
}

function status(name: string, state: V1ContainerStatus['state']): V1ContainerStatus {
  return { name, image: '', imageID: '', ready: Boolean(state?.running), restartCount: 0, state };
}
