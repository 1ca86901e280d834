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
 *
 * With a warm pool (warm-pool.ts) a run takes a pod of its exact plan that is already running and
 * waiting on stdin; one that turns out not to be running is deleted and the run starts its own.
 */
import type { Readable, Writable } from 'node:stream';
import type { KubeCluster } from '../kube/cluster.js';
import { KubeError, SHIM_ROLE_PATH } from '../kube/errors.js';
import { feedMounts } from './mount-feed.js';
import { snapshotMounts, DEFAULT_MAX_MOUNT_BYTES } from './mounts.js';
import { MAIN_CONTAINER, planWorkload, type PlanContext, type WorkloadPlan } from './plan.js';
import { viewContainer } from './pod-status.js';
import { isTerminal, PodTracker, settledOrRunning } from './pod-tracker.js';
import { RunError } from './run-error.js';
import { cleanup, createSideObjects, DEFAULT_START_TIMEOUT, newRunId, type Created } from './run-objects.js';
import { deliverFromAttach, deliverFromLogs } from './run-output.js';
import { noTrace, type Trace } from './trace.js';
import type { WarmPod, WarmPool } from './warm-pool.js';
import type { PolicyHold } from './warm-policy.js';
import { planKey, startWarmPod } from './warm-start.js';
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
  /**
   * Warm pods (a long-lived caller: the shim agent): a run whose plan has one takes it instead of
   * starting a pod, and every run of a poolable plan starts the next call's while it runs.
   */
  pool?: WarmPool;
}

/** A failure of berth or the cluster (not of the workload): docker run exits 125 (126/127 for start errors). */
export { RunError };

export async function runWorkload(w: Workload, io: RunIO, cluster: RunCluster): Promise<{ exitCode: number }> {
  return new WorkloadRun(w, io, cluster).run();
}

/** A warm pod that cannot serve the call (its container is not running): the call starts its own. */
class WarmPodUnusable extends Error {}

/** One run, cold or warm: what it created, whether its container ended, and its cleanup. */
class WorkloadRun {
  private readonly kube: KubeCluster;
  private readonly trace: Trace;
  private readonly progress: (phase: string) => void;
  private created: Created[] = [];
  /** Creations in flight: cleanup waits for them, or one that lands after the deletes would leak. */
  private readonly inFlight: Array<Promise<unknown>> = [];
  private exitCode = 125;
  private podEnded = false;
  /** A warm pod's share of its plan's policy, released once the pod is deleted. */
  private policy: PolicyHold | undefined;
  /** Ends every watch and stream of the run (its end, a failure, an interrupt). */
  private readonly stopWatch = new AbortController();

  constructor(
    private readonly w: Workload,
    private readonly io: RunIO,
    private readonly cluster: RunCluster,
  ) {
    this.kube = cluster.kube;
    this.trace = io.trace ?? noTrace;
    this.progress = io.onProgress ?? (() => undefined);
  }

  async run(): Promise<{ exitCode: number }> {
    const { w, io, kube, trace } = this;
    const signal = io.signal;
    throwIfAborted(signal);
    trace('run begins');

    // Questions that depend on nothing go out at once and overlap the local work below. None rejects.
    // The attach check must still be answered before a pod exists: a denied attach fails before the pod
    // starts, not after (the WebSocket upgrade is a GET before Kubernetes 1.35, a create from then on).
    // A warm pod needs no answer (the cold call that made its plan warm had one): with a pool, the check
    // goes out only once no warm pod served the call, saving a warm call its three access reviews.
    let rights: Promise<string | undefined> | undefined;
    const rightMissing = (): Promise<string | undefined> => (rights ??= missingRight(kube));
    if (!this.cluster.pool) void rightMissing();
    const splitLogs = kube.servesSplitLogs();
    const stdinAsFile = w.stdin ? chooseStdinAsFile(this.cluster) : Promise.resolve(false);

    const mounts = w.mounts?.length ? await snapshotMounts(w.mounts, this.cluster.mountLimitBytes ?? DEFAULT_MAX_MOUNT_BYTES) : [];
    for (const m of w.mounts ?? []) {
      // docker would write changes back to the host; a pod only has a copy. Said once, never silently.
      if (!m.readOnly) io.stderr.write(`berth: ${m.target} is a writable copy of ${m.source}: changes made in the pod are not written back to the host\n`);
    }
    const context: PlanContext = {
      namespace: kube.namespace,
      owner: this.cluster.owner,
      now: (this.cluster.now ?? (() => new Date()))(),
      ttlSeconds: this.cluster.ttlSeconds ?? 3600,
      runId: newRunId(),
      mounts,
      helperImage: this.cluster.helperImage,
    };
    // How stdin travels changes only the pod (planning is pure: same run id, same side objects), so
    // the side objects need not wait for the server's version.
    const sidePlan = planWorkload(w, { ...context, stdinAsFile: false });
    const poolKey = await this.poolKeyOf(sidePlan, context, stdinAsFile);

    const onAbort = (): void => this.stopWatch.abort();
    signal?.addEventListener('abort', onAbort);
    try {
      const pool = this.cluster.pool;
      const warm = poolKey && pool ? await pool.take(poolKey) : undefined;
      // The next call of this plan starts now, while this one runs.
      if (poolKey && pool) pool.refill(poolKey, () => startWarmPod(w, context, kube, poolKey, pool));
      if (warm) {
        const result = await this.runWarm(warm, splitLogs);
        if (result) return result;
      }
      const { tracker, podName, fileStdin } = await this.startCold(sidePlan, context, rightMissing(), stdinAsFile);
      return await this.execute(tracker, podName, fileStdin, splitLogs, false);
    } catch (err) {
      if (signal?.aborted) throw abortError();
      // the function did not run (a function's own failure is an exit code, not an error): warm pods of its plan would not either
      if (poolKey && (err instanceof RunError || err instanceof KubeError)) this.cluster.pool?.forgetPlan(poolKey);
      if (err instanceof RunError) throw err;
      if (err instanceof KubeError) throw new RunError(err.message);
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.stopWatch.abort();
      await this.finish();
    }
  }

  /** The plan's pool key when a warm pod can serve it: a function reading stdin over attach, no files to feed. */
  private async poolKeyOf(plan: WorkloadPlan, context: PlanContext, stdinAsFile: Promise<boolean>): Promise<string | undefined> {
    const w = this.w;
    if (!this.cluster.pool || !w.stdin || w.tty || plan.mountData.feed) return undefined;
    if (await stdinAsFile) return undefined;
    return planKey(w, context, this.kube);
  }

  /** Serves the call with a warm pod; undefined when it turned out unusable (then deleted, nothing delivered). */
  private async runWarm(warm: WarmPod, splitLogs: Promise<boolean>): Promise<{ exitCode: number } | undefined> {
    this.trace(`warm pod ${warm.podName} taken`);
    this.created = [...warm.created];
    this.policy = warm.policy;
    // The pool's watch of the pod goes on for the call: it knows the container runs already.
    const tracker = warm.tracker;
    if (this.stopWatch.signal.aborted) warm.release();
    else this.stopWatch.signal.addEventListener('abort', () => warm.release(), { once: true });
    try {
      return await this.execute(tracker, warm.podName, false, splitLogs, true);
    } catch (err) {
      if (!(err instanceof WarmPodUnusable)) throw err;
      this.trace(`warm pod ${warm.podName} unusable (${err.message}): starting a pod`);
      warm.release();
      const deleted = await cleanup(this.kube, this.created, false, (line) => this.report(line));
      await this.policy?.release(deleted);
      this.policy = undefined;
      this.created = [];
      return undefined;
    }
  }

  /** Side objects, then the pod, then its files: the pod never runs without its NetworkPolicy or files. */
  private async startCold(sidePlan: WorkloadPlan, context: PlanContext, rightMissing: Promise<string | undefined>, stdinAsFileAnswer: Promise<boolean>) {
    const { w, kube, trace } = this;
    const podName = sidePlan.pod.metadata?.name as string;
    const sideObjects = createSideObjects(kube, sidePlan, this.created, trace);
    this.inFlight.push(sideObjects);
    // Its failure is read below, after the stdin mode; until then it must not count as unhandled.
    sideObjects.catch(() => undefined);
    const fileStdin = await stdinAsFileAnswer;
    trace(`stdin mode known (${fileStdin ? 'file' : 'attach'})`);
    const plan = fileStdin ? planWorkload(w, { ...context, stdinAsFile: true }) : sidePlan;
    if (plan !== sidePlan && sideObjectsOf(plan) !== sideObjectsOf(sidePlan)) throw new Error('berth bug: the side objects depend on the stdin mode');

    // A policy applies from when it exists: the pod waits for all of its side objects.
    await sideObjects;
    throwIfAborted(this.io.signal);
    const missing = await rightMissing;
    if (missing) throw new RunError(missing);
    trace('attach and delete allowed');
    const tracker = new PodTracker(kube, podName, this.stopWatch.signal, trace);
    const podCreated = kube.createPod(plan.pod);
    this.inFlight.push(podCreated);
    await podCreated;
    this.created.push(['pods', podName]);
    trace(`pod ${podName} created`);
    this.progress('scheduling');
    if (plan.mountData.feed) {
      const stdin = w.stdin ? this.io.stdin : undefined;
      await feedMounts({ plan, stdin, stdinAsFile: fileStdin, kube, tracker, deadline: this.startDeadline(), progress: this.progress });
      trace('files copied');
    }
    return { tracker, podName, fileStdin };
  }

  /** Running → output → exit code, from the pod's terminated state. */
  private async execute(tracker: PodTracker, podName: string, stdinAsFile: boolean, splitLogs: Promise<boolean>, warm: boolean): Promise<{ exitCode: number }> {
    const { w, io, trace } = this;
    const started = await tracker.until(
      (pod) => settledOrRunning(viewContainer(pod, MAIN_CONTAINER), this.progress),
      this.startDeadline(),
      `${w.image} did not start`,
    );
    const view = viewContainer(started, MAIN_CONTAINER);
    if (warm && view.state !== 'running') throw new WarmPodUnusable(`its container is ${view.state}`);
    if (view.state === 'failed') throw new RunError(view.message, view.exitCode);
    if (view.state === 'running') this.progress('running');

    const endedPod = tracker.until((pod) => isTerminal(viewContainer(pod, MAIN_CONTAINER)), Infinity, `${w.image} did not finish`);
    endedPod.catch(() => undefined);
    const streams = {
      kube: this.kube,
      podName,
      workload: w,
      io,
      stdinAsFile,
      running: view.state === 'running',
      ended: endedPod,
      signal: this.stopWatch.signal,
      trace,
      warm,
    };
    let output;
    try {
      const fromLogs = !w.tty && (await splitLogs);
      // Attach only sees what comes after it: a warm process that wrote before this call (a function that logs as it
      // starts) would leave bytes attach cannot place, so such a pod is not used. One that writes between this look
      // and the attach fails the call when the log is checked (deliverFromAttach), never silently.
      if (warm && !fromLogs && (await this.kube.readPodLog(podName, MAIN_CONTAINER, { limitBytes: 1 })).length)
        throw new WarmPodUnusable('its process wrote before this call');
      output = fromLogs ? await deliverFromLogs(streams) : await deliverFromAttach(streams);
    } catch (err) {
      // Nothing was delivered yet: the stdin attach comes before any output is read.
      if (warm && err instanceof KubeError) throw new WarmPodUnusable(err.message);
      throw err;
    }
    throwIfAborted(io.signal);

    const ended = await endedPod;
    this.podEnded = true;
    const final = viewContainer(ended, MAIN_CONTAINER);
    trace(`container ${final.state}`);
    if (final.state === 'failed') throw new RunError(final.message, final.exitCode);
    if (final.state !== 'terminated') throw new RunError(`pod ${podName} ended without an exit code`);
    await output.settle(final.exitCode);
    trace('output complete');
    this.exitCode = final.exitCode;
    return { exitCode: this.exitCode };
  }

  private startDeadline(): number {
    return Date.now() + (this.w.startTimeoutSeconds ?? DEFAULT_START_TIMEOUT) * 1000;
  }

  /** Deletes what the run created, unless a failed run's pod is kept; in the background when the caller takes it. */
  private async finish(): Promise<void> {
    const signal = this.io.signal;
    if (this.cluster.keepFailedPods && this.exitCode !== 0) {
      // the kept pod keeps its policy: both are left to their expiry and `berth gc`
      await this.policy?.release(false);
      return;
    }
    const deleted = (async () => {
      await Promise.allSettled(this.inFlight);
      const allDeleted = await cleanup(this.kube, this.created, this.podEnded && !signal?.aborted, (line) => this.report(line));
      await this.policy?.release(allDeleted);
      this.trace('cleaned up');
    })();
    // Only a run whose container has ended may leave its deletions to the caller: an interrupted
    // one deletes before it returns (SIGTERM must not leave a pod running behind the shim).
    if (this.cluster.background && this.podEnded && !signal?.aborted) this.cluster.background(deleted);
    else await deleted;
  }

  private report(line: string): void {
    if (this.io.stderr.writable) this.io.stderr.write(line);
  }
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

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortError();
}

function abortError(): RunError {
  return new RunError('interrupted: the pod and its objects were deleted', 130);
}
