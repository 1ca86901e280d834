/**
 * Runs a Workload as a pod, docker-run style: side objects, pod, watch until the container runs,
 * attach (stdin streamed then closed with v5; stdout and stderr kept apart, forwarded as they come),
 * exit code from the watched terminated state, then delete everything, on abort too.
 *
 * Output missed by attach: attach does not replay what a container wrote before the session opened.
 * berth attaches as soon as the watch reports `running`; a function that reads stdin first (every
 * KRM function) cannot write before that. If the container has already terminated when berth would
 * attach, its output is read from pods/log and written to stdout (the log merges both streams).
 */
import { randomBytes } from 'node:crypto';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type { V1Pod } from '@kubernetes/client-node';
import { pack } from 'tar-stream';
import type { KubeCluster } from '../kube/cluster.js';
import { KubeError, SHIM_ROLE_PATH } from '../kube/errors.js';
import { openAttach } from '../kube/streams.js';
import { snapshotMounts, DEFAULT_MAX_MOUNT_BYTES } from './mounts.js';
import { MAIN_CONTAINER, planWorkload, type TarEntry, type WorkloadPlan } from './plan.js';
import { viewContainer, type ContainerView } from './pod-status.js';
import { RunError } from './run-error.js';
import type { Workload } from './workload.js';

export interface RunIO {
  stdin?: Readable;
  stdout: Writable;
  stderr: Writable;
  signal?: AbortSignal;
  onProgress?(phase: string): void;
}

export interface RunCluster {
  kube: KubeCluster;
  /** berth instance id, written to the owner label. */
  owner: string;
  /** Objects expire after this (default 3600). */
  ttlSeconds?: number;
  helperImage?: string;
  /** `auto`: attach when the server is ≥ 1.30 (v5 stdin close), else stdin as a file. */
  stdinMode?: 'auto' | 'attach' | 'file';
  keepFailedPods?: boolean;
  mountLimitBytes?: number;
  now?: () => Date;
}

/** A failure of berth or the cluster (not of the workload): docker run exits 125 (126/127 for start errors). */
export { RunError };

const DEFAULT_START_TIMEOUT = 60;

export async function runWorkload(w: Workload, io: RunIO, cluster: RunCluster): Promise<{ exitCode: number }> {
  const kube = cluster.kube;
  const signal = io.signal;
  const progress = io.onProgress ?? (() => undefined);
  throwIfAborted(signal);

  const mounts = w.mounts?.length ? await snapshotMounts(w.mounts, cluster.mountLimitBytes ?? DEFAULT_MAX_MOUNT_BYTES) : [];
  for (const m of w.mounts ?? []) {
    // docker would write changes back to the host; a pod only has a copy. Said once, never silently.
    if (!m.readOnly) io.stderr.write(`berth: ${m.target} is a writable copy of ${m.source}: changes made in the pod are not written back to the host\n`);
  }
  const stdinAsFile = Boolean(w.stdin) && (await chooseStdinAsFile(cluster));
  const plan = planWorkload(w, {
    namespace: kube.namespace,
    owner: cluster.owner,
    now: (cluster.now ?? (() => new Date()))(),
    ttlSeconds: cluster.ttlSeconds ?? 3600,
    runId: randomBytes(5).toString('hex').slice(0, 8),
    mounts,
    helperImage: cluster.helperImage,
    stdinAsFile,
  });
  const podName = plan.pod.metadata?.name as string;

  const created: Array<['pods' | 'configmaps' | 'networkpolicies', string]> = [];
  let exitCode = 125;
  const stopWatch = new AbortController();
  const onAbort = (): void => stopWatch.abort();
  signal?.addEventListener('abort', onAbort);
  // Asked while the side objects are created: a denied attach must fail before a pod exists, not
  // after it started (the WebSocket upgrade is a GET before Kubernetes 1.35, a create from then on).
  const attachAllowed = canAttach(kube);
  try {
    // Side objects first: the pod must never run a moment without its NetworkPolicy or files.
    if (plan.networkPolicy) {
      await kube.createNetworkPolicy(plan.networkPolicy);
      created.push(['networkpolicies', plan.networkPolicy.metadata?.name as string]);
    }
    for (const cm of plan.configMaps) {
      await kube.createConfigMap(cm);
      created.push(['configmaps', cm.metadata?.name as string]);
    }
    throwIfAborted(signal);
    if ((await attachAllowed) === false) {
      throw new RunError(`forbidden: cannot create pods/attach in namespace ${kube.namespace} (berth attaches to the function's container; grant it in the Role: ${SHIM_ROLE_PATH})`);
    }
    const tracker = new PodTracker(kube, podName, stopWatch.signal);
    await kube.createPod(plan.pod);
    created.push(['pods', podName]);
    progress('scheduling');

    const deadline = Date.now() + (w.startTimeoutSeconds ?? DEFAULT_START_TIMEOUT) * 1000;
    if (plan.mountData.initContainer) {
      await feedInitContainer(plan, io, kube, tracker, deadline, stdinAsFile, progress);
    }

    const started = await tracker.until((pod) => settledOrRunning(viewContainer(pod, MAIN_CONTAINER), progress), deadline, `${w.image} did not start`);
    const view = viewContainer(started, MAIN_CONTAINER);
    if (view.state === 'failed') throw new RunError(view.message, view.exitCode);

    if (view.state === 'running') {
      progress('running');
      const attachStdin = w.stdin && !stdinAsFile ? (io.stdin ?? emptyStream()) : undefined;
      const session = await openAttach(kube.kc, kube.namespace, podName, MAIN_CONTAINER, {
        stdin: attachStdin,
        stdout: io.stdout,
        stderr: io.stderr,
        tty: w.tty,
        requireStdinClose: true,
      });
      // The session ends when the container does; its Status says nothing about the exit code.
      const closeOnAbort = (): void => session.close();
      signal?.addEventListener('abort', closeOnAbort);
      // A lost stream is not the verdict: the watch below reports how the container ended.
      await session.done.catch(() => undefined);
      signal?.removeEventListener('abort', closeOnAbort);
      throwIfAborted(signal);
    } else {
      // Finished before we could attach: its output only survives in the log.
      io.stdout.write(await kube.readPodLog(podName, MAIN_CONTAINER));
    }

    const ended = await tracker.until((pod) => isTerminal(viewContainer(pod, MAIN_CONTAINER)), Infinity, `${w.image} did not finish`);
    const final = viewContainer(ended, MAIN_CONTAINER);
    if (final.state === 'failed') throw new RunError(final.message, final.exitCode);
    if (final.state !== 'terminated') throw new RunError(`pod ${podName} ended without an exit code`);
    exitCode = final.exitCode;
    return { exitCode };
  } catch (err) {
    if (signal?.aborted) throw abortError();
    if (err instanceof RunError) throw err;
    if (err instanceof KubeError) throw new RunError(err.message);
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    stopWatch.abort();
    const keep = cluster.keepFailedPods && exitCode !== 0;
    if (!keep) await cleanup(kube, created);
  }
}

async function canAttach(kube: KubeCluster): Promise<boolean | undefined> {
  const [create, get] = await Promise.all([kube.canI('create', 'pods', 'attach'), kube.canI('get', 'pods', 'attach')]);
  if (create === undefined || get === undefined) return undefined;
  return create || get;
}

async function chooseStdinAsFile(cluster: RunCluster): Promise<boolean> {
  const mode = cluster.stdinMode ?? 'auto';
  if (mode !== 'auto') return mode === 'file';
  const v = await cluster.kube.serverVersion().catch(() => undefined);
  // v5.channel.k8s.io (stdin close) is on by default from Kubernetes 1.30.
  return v !== undefined && (v.major < 1 || (v.major === 1 && v.minor < 30));
}

function settledOrRunning(view: ContainerView, progress: (p: string) => void): boolean {
  if (view.state === 'pending') {
    progress(view.progress);
    return false;
  }
  return true;
}

function isTerminal(view: ContainerView): boolean {
  return view.state === 'terminated' || view.state === 'failed';
}

/** Streams the planned tar (mount files, and stdin when it goes as a file) into the init container. */
async function feedInitContainer(
  plan: WorkloadPlan,
  io: RunIO,
  kube: KubeCluster,
  tracker: PodTracker,
  deadline: number,
  stdinAsFile: boolean,
  progress: (p: string) => void,
): Promise<void> {
  const name = plan.mountData.initContainer as string;
  const pod = await tracker.until((p) => settledOrRunning(viewContainer(p, name, true), progress), deadline, `the file copy container did not start`);
  const view = viewContainer(pod, name, true);
  if (view.state === 'failed') throw new RunError(view.message, 125);
  if (view.state !== 'running') return;
  progress('copying files');
  const entries: TarEntry[] = [...plan.mountData.entries];
  if (stdinAsFile && plan.mountData.stdinEntry) {
    entries.push({ name: plan.mountData.stdinEntry, type: 'file', mode: 0o444, data: io.stdin ? await readAll(io.stdin) : Buffer.alloc(0) });
  }
  const tar = tarStream(entries);
  const errors = new PassThrough();
  const errText: Buffer[] = [];
  errors.on('data', (c: Buffer) => errText.push(c));
  const session = await openAttach(kube.kc, kube.namespace, plan.pod.metadata?.name as string, name, { stdin: tar, stderr: errors });
  // tar stops at its end-of-archive marker, so the copy also ends without a v5 stdin close.
  await session.done.catch(() => undefined);
  const done = await tracker.until((p) => isTerminal(viewContainer(p, name, true)), deadline + 60_000, 'the file copy did not finish');
  const end = viewContainer(done, name, true);
  if (end.state === 'terminated' && end.exitCode !== 0) {
    throw new RunError(`copying mounted files into the pod failed (tar exit ${end.exitCode}): ${Buffer.concat(errText).toString('utf8').trim() || end.message || ''}`);
  }
  if (end.state === 'failed') throw new RunError(end.message, 125);
}

/** GNU tar reads whole 10 KiB records: pad so it reaches the end marker without waiting for EOF. */
function tarStream(entries: TarEntry[]): Readable {
  const p = pack();
  for (const e of entries) {
    if (e.type === 'file') p.entry({ name: e.name, type: 'file', mode: e.mode, size: e.data?.length ?? 0 }, e.data ?? Buffer.alloc(0));
    else if (e.type === 'directory') p.entry({ name: e.name, type: 'directory', mode: e.mode });
    else p.entry({ name: e.name, type: 'symlink', linkname: e.linkname ?? '' });
  }
  p.finalize();
  const out = new PassThrough();
  let size = 0;
  p.on('data', (c: unknown) => {
    const chunk = c as Buffer;
    size += chunk.length;
    out.write(chunk);
  });
  p.on('end', () => {
    const pad = (10240 - (size % 10240)) % 10240;
    if (pad > 0) out.write(Buffer.alloc(pad));
    out.end();
  });
  p.on('error', (err: Error) => out.destroy(err));
  return out;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks);
}

function emptyStream(): Readable {
  const s = new PassThrough();
  s.end();
  return s;
}

async function cleanup(kube: KubeCluster, created: Array<['pods' | 'configmaps' | 'networkpolicies', string]>): Promise<void> {
  // Pod first: the NetworkPolicy must outlive the pod it isolates.
  const order = [...created].sort((a, b) => (a[0] === 'pods' ? -1 : b[0] === 'pods' ? 1 : 0));
  for (const [kind, name] of order) {
    await kube.deleteQuietly(kind, name).catch(() => undefined);
  }
}

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortError();
}

function abortError(): RunError {
  return new RunError('interrupted: the pod and its objects were deleted', 130);
}

/**
 * One watch for the whole run; `until` resolves with the first pod state (latest seen, or the next
 * ones) that satisfies a condition, or rejects at the deadline.
 */
class PodTracker {
  private latest: V1Pod | undefined;
  private waiters: Array<{ test: (p: V1Pod) => boolean; resolve: (p: V1Pod) => void }> = [];
  private failure: Error | undefined;
  private failWaiters: Array<(e: Error) => void> = [];

  constructor(kube: KubeCluster, name: string, signal: AbortSignal) {
    kube
      .watchPod(
        name,
        (pod, type) => {
          if (type === 'DELETED') {
            this.fail(new RunError(`pod ${name} was deleted while berth was running it`));
            return true;
          }
          this.latest = pod;
          this.waiters = this.waiters.filter((w) => (w.test(pod) ? (w.resolve(pod), false) : true));
          return false;
        },
        signal,
      )
      .catch((err: Error) => this.fail(err));
  }

  private fail(err: Error): void {
    this.failure = err;
    for (const f of this.failWaiters) f(err);
    this.failWaiters = [];
  }

  until(test: (p: V1Pod) => boolean, deadline: number, timeoutMessage: string): Promise<V1Pod> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.latest && test(this.latest)) return Promise.resolve(this.latest);
    return new Promise<V1Pod>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter = {
        test,
        resolve: (p: V1Pod) => {
          if (timer) clearTimeout(timer);
          resolve(p);
        },
      };
      this.waiters.push(waiter);
      this.failWaiters.push((e) => {
        if (timer) clearTimeout(timer);
        reject(e);
      });
      if (Number.isFinite(deadline)) {
        timer = setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(new RunError(`${timeoutMessage} within the start timeout (raise startTimeout in the berth config; last state: ${describeLatest(this.latest)})`));
        }, Math.max(0, deadline - Date.now()));
      }
    });
  }
}

function describeLatest(pod: V1Pod | undefined): string {
  if (!pod) return 'not seen yet';
  const cs = pod.status?.containerStatuses?.[0]?.state;
  const waiting = cs?.waiting?.reason;
  return `${pod.status?.phase ?? 'Pending'}${waiting ? `/${waiting}` : ''}`;
}
