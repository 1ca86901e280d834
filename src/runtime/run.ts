/**
 * Runs a Workload as a pod, docker-run style: side objects, pod, watch until the container runs,
 * attach (stdin streamed then closed with v5; stdout and stderr kept apart, forwarded as they come),
 * exit code from the watched terminated state, then delete everything, on abort too.
 *
 * Nothing waits that need not: the attach check, the server version and the side objects go out
 * together; only the pod waits, for all of them. Deletions run together once the container has
 * ended (pod first while it may still run) and can be left to a caller that outlives the run.
 *
 * Output is delivered exactly once or the run fails (run-output.ts): from the log where the cluster
 * serves stdout and stderr apart, else from attach checked against the log once the container ended.
 */
import { randomBytes } from 'node:crypto';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type { V1Pod } from '@kubernetes/client-node';
import { pack } from 'tar-stream';
import type { KubeCluster } from '../kube/cluster.js';
import { KubeError, SHIM_ROLE_PATH } from '../kube/errors.js';
import { openAttach } from '../kube/streams.js';
import { deliverFromAttach, deliverFromLogs } from './run-output.js';
import { snapshotMounts, DEFAULT_MAX_MOUNT_BYTES } from './mounts.js';
import { FILES_COMPLETE_MARKER, MAIN_CONTAINER, planWorkload, type PlanContext, type TarEntry, type WorkloadPlan } from './plan.js';
import { viewContainer, type ContainerView } from './pod-status.js';
import { RunError } from './run-error.js';
import { noTrace, type Trace } from './trace.js';
import type { Workload } from './workload.js';

export interface RunIO {
  stdin?: Readable;
  stdout: Writable;
  stderr: Writable;
  signal?: AbortSignal;
  onProgress?(phase: string): void;
  /** BERTH_TRACE: told each phase as it ends. */
  trace?: Trace;
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
  /**
   * Given, a run whose container has ended returns its exit code without waiting for the deletions:
   * they are handed over here and the caller keeps its process alive until they settle (the shim
   * agent outlives its clients). Interrupted and failed runs still delete before they return.
   */
  background?: (deletions: Promise<void>) => void;
}

/** A failure of berth or the cluster (not of the workload): docker run exits 125 (126/127 for start errors). */
export { RunError };

const DEFAULT_START_TIMEOUT = 60;

export async function runWorkload(w: Workload, io: RunIO, cluster: RunCluster): Promise<{ exitCode: number }> {
  const kube = cluster.kube;
  const signal = io.signal;
  const progress = io.onProgress ?? (() => undefined);
  const trace = io.trace ?? noTrace;
  throwIfAborted(signal);
  trace('run begins');

  // Questions that depend on nothing go out at once and overlap the local work below. Neither rejects.
  // The attach check must still be answered before a pod exists: a denied attach fails before the pod
  // starts, not after (the WebSocket upgrade is a GET before Kubernetes 1.35, a create from then on).
  const rightMissing = missingRight(kube);
  const splitLogs = kube.servesSplitLogs();
  const stdinAsFileAnswer = w.stdin ? chooseStdinAsFile(cluster) : Promise.resolve(false);

  const mounts = w.mounts?.length ? await snapshotMounts(w.mounts, cluster.mountLimitBytes ?? DEFAULT_MAX_MOUNT_BYTES) : [];
  for (const m of w.mounts ?? []) {
    // docker would write changes back to the host; a pod only has a copy. Said once, never silently.
    if (!m.readOnly) io.stderr.write(`berth: ${m.target} is a writable copy of ${m.source}: changes made in the pod are not written back to the host\n`);
  }
  const context: PlanContext = {
    namespace: kube.namespace,
    owner: cluster.owner,
    now: (cluster.now ?? (() => new Date()))(),
    ttlSeconds: cluster.ttlSeconds ?? 3600,
    runId: randomBytes(5).toString('hex').slice(0, 8),
    mounts,
    helperImage: cluster.helperImage,
  };
  // How stdin travels changes only the pod (planning is pure: same run id, same side objects), so
  // the side objects need not wait for the server's version.
  const sidePlan = planWorkload(w, { ...context, stdinAsFile: false });
  const podName = sidePlan.pod.metadata?.name as string;

  const created: Created[] = [];
  /** Creations in flight: cleanup waits for them, or one that lands after the deletes would leak. */
  const inFlight: Array<Promise<unknown>> = [];
  let exitCode = 125;
  let podEnded = false;
  const stopWatch = new AbortController();
  const onAbort = (): void => stopWatch.abort();
  signal?.addEventListener('abort', onAbort);
  try {
    const sideObjects = createSideObjects(kube, sidePlan, created, trace);
    inFlight.push(sideObjects);
    // Its failure is read below, after the stdin mode; until then it must not count as unhandled.
    sideObjects.catch(() => undefined);
    const stdinAsFile = await stdinAsFileAnswer;
    trace(`stdin mode known (${stdinAsFile ? 'file' : 'attach'})`);
    const plan = stdinAsFile ? planWorkload(w, { ...context, stdinAsFile }) : sidePlan;
    if (plan !== sidePlan && sideObjectsOf(plan) !== sideObjectsOf(sidePlan)) throw new Error('berth bug: the side objects depend on the stdin mode');

    // The pod waits for all of its side objects: it must never run a moment without its
    // NetworkPolicy (a policy applies from when it exists), nor start without its files.
    await sideObjects;
    throwIfAborted(signal);
    const missing = await rightMissing;
    if (missing) throw new RunError(missing);
    trace('attach and delete allowed');
    const tracker = new PodTracker(kube, podName, stopWatch.signal, trace);
    const podCreated = kube.createPod(plan.pod);
    inFlight.push(podCreated);
    await podCreated;
    created.push(['pods', podName]);
    trace('pod created');
    progress('scheduling');

    const deadline = Date.now() + (w.startTimeoutSeconds ?? DEFAULT_START_TIMEOUT) * 1000;
    if (plan.mountData.initContainer) {
      await feedInitContainer(plan, io, kube, tracker, deadline, stdinAsFile, progress);
      trace('files copied');
    }

    const started = await tracker.until((pod) => settledOrRunning(viewContainer(pod, MAIN_CONTAINER), progress), deadline, `${w.image} did not start`);
    const view = viewContainer(started, MAIN_CONTAINER);
    if (view.state === 'failed') throw new RunError(view.message, view.exitCode);
    if (view.state === 'running') progress('running');

    const endedPod = tracker.until((pod) => isTerminal(viewContainer(pod, MAIN_CONTAINER)), Infinity, `${w.image} did not finish`);
    endedPod.catch(() => undefined);
    const streams = { kube, podName, workload: w, io, stdinAsFile, running: view.state === 'running', ended: endedPod, signal: stopWatch.signal, trace };
    const output = !w.tty && (await splitLogs) ? await deliverFromLogs(streams) : await deliverFromAttach(streams);
    throwIfAborted(signal);

    const ended = await endedPod;
    podEnded = true;
    const final = viewContainer(ended, MAIN_CONTAINER);
    trace(`container ${final.state}`);
    if (final.state === 'failed') throw new RunError(final.message, final.exitCode);
    if (final.state !== 'terminated') throw new RunError(`pod ${podName} ended without an exit code`);
    await output.settle(final.exitCode);
    trace('output complete');
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
    if (!keep) {
      const deleted = (async () => {
        await Promise.allSettled(inFlight);
        await cleanup(kube, created, podEnded && !signal?.aborted, (line) => {
          if (io.stderr.writable) io.stderr.write(line);
        });
        trace('cleaned up');
      })();
      // Only a run whose container has ended may leave its deletions to the caller: an interrupted
      // one deletes before it returns (SIGTERM must not leave a pod running behind the shim).
      if (cluster.background && podEnded && !signal?.aborted) cluster.background(deleted);
      else await deleted;
    }
  }
}

type Created = ['pods' | 'configmaps' | 'networkpolicies', string];

/** NetworkPolicy and ConfigMaps at once; each is recorded for cleanup as soon as it exists. */
async function createSideObjects(kube: KubeCluster, plan: WorkloadPlan, created: Created[], trace: Trace): Promise<void> {
  const creations: Array<Promise<void>> = [];
  if (plan.networkPolicy) {
    const np = plan.networkPolicy;
    creations.push(
      kube.createNetworkPolicy(np).then(() => {
        created.push(['networkpolicies', np.metadata?.name as string]);
        trace('networkpolicy created');
      }),
    );
  }
  for (const cm of plan.configMaps) {
    creations.push(
      kube.createConfigMap(cm).then(() => {
        created.push(['configmaps', cm.metadata?.name as string]);
        trace('configmap created');
      }),
    );
  }
  // All settle before the verdict: a failure must not leave a sibling landing after cleanup ran.
  const results = await Promise.allSettled(creations);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

function sideObjectsOf(plan: WorkloadPlan): string {
  return JSON.stringify([plan.networkPolicy, plan.configMaps]);
}

/**
 * The rights a run needs beyond creating its objects, asked before anything exists: attach (a create
 * from Kubernetes 1.35, a GET before) and delete (without it every run would leave its pod behind).
 * Returns the missing one's sentence, or undefined when all are granted or the server cannot say.
 */
async function missingRight(kube: KubeCluster): Promise<string | undefined> {
  const [create, get, del] = await Promise.all([kube.canI('create', 'pods', 'attach'), kube.canI('get', 'pods', 'attach'), kube.canI('delete', 'pods')]);
  if (create === false && get === false) {
    return `forbidden: cannot create pods/attach in namespace ${kube.namespace} (berth attaches to the function's container; grant it in the Role: ${SHIM_ROLE_PATH})`;
  }
  if (del === false) {
    return `forbidden: cannot delete pods in namespace ${kube.namespace} (berth deletes every pod it creates; grant it in the Role: ${SHIM_ROLE_PATH})`;
  }
  return undefined;
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
  if (view.state === 'failed') throw new RunError(`${view.message} (the helper image ${plan.pod.spec?.initContainers?.[0]?.image ?? ''} copies mounted files into the pod: set BERTH_HELPER_IMAGE to an image with sh and tar that the cluster can pull)`, 125);
  if (view.state !== 'running') return;
  progress('copying files');
  const entries: TarEntry[] = [...plan.mountData.entries];
  if (stdinAsFile && plan.mountData.stdinEntry) {
    entries.push({ name: plan.mountData.stdinEntry, type: 'file', mode: 0o444, data: io.stdin ? await readAll(io.stdin) : Buffer.alloc(0) });
  }
  entries.push({ name: FILES_COMPLETE_MARKER, type: 'file', mode: 0o444, data: Buffer.alloc(0) });
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


/**
 * Deletes what the run created, all at once when the container has ended. While it may still run
 * (interrupted, failed start) the pod goes first: its NetworkPolicy must outlive the pod it isolates.
 */
async function cleanup(kube: KubeCluster, created: Created[], podEnded: boolean, report: (line: string) => void): Promise<void> {
  // Retried inside deleteQuietly; what still fails is said, never swallowed: the object's expiry and
  // `berth gc` are what remove it then.
  const remove = (items: Created[]) =>
    Promise.all(
      items.map(([kind, name]) =>
        kube.deleteQuietly(kind, name).catch((err: unknown) => report(`berth: could not delete ${kind}/${name} in namespace ${kube.namespace}: ${(err as Error).message}; it expires by its deadline and \`berth gc\` removes it\n`)),
      ),
    );
  if (podEnded) {
    await remove(created);
    return;
  }
  await remove(created.filter(([kind]) => kind === 'pods'));
  await remove(created.filter(([kind]) => kind !== 'pods'));
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

  constructor(kube: KubeCluster, name: string, signal: AbortSignal, trace: Trace) {
    let seen = '';
    kube
      .watchPod(
        name,
        (pod, type) => {
          if (type === 'DELETED') {
            this.fail(new RunError(`pod ${name} was deleted while berth was running it`));
            return true;
          }
          this.latest = pod;
          const cs = pod.status?.containerStatuses?.find((c) => c.name === MAIN_CONTAINER)?.state;
          const state = `${describeLatest(pod)}${cs?.running ? ', running' : cs?.terminated ? ', terminated' : ''}`;
          if (state !== seen) trace(`watch: pod ${(seen = state)}`);
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
