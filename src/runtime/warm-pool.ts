/**
 * Warm pods: a run plan started ahead of the call that needs it, so that call finds its function
 * already running and waiting on stdin. A pod is handed to exactly one call (take removes it), only for
 * the exact plan it was started from (the key covers every byte of the pod, its ConfigMaps and its
 * NetworkPolicy, and the cluster, namespace and identity), and only while its container still runs.
 * The pool is bounded (pods per plan, plans) and every pod leaves it after an idle time. A plan called
 * many times in a row (a kustomization using one function for several transformers) keeps as many pods
 * as it was called in the last minute, up to `burstMax`: otherwise each call of the burst waits for the
 * pod the previous call's refill is still starting.
 */
import type { KubeCluster } from '../kube/cluster.js';
import type { PodTracker } from './pod-tracker.js';
import { cleanup, type Created } from './run-objects.js';
import { WarmPolicies, type PolicyHold } from './warm-policy.js';

export interface WarmPodOptions {
  /** Warm pods kept per plan (default 2: a build calls one function many times in a row). */
  perPlan?: number;
  /** The most pods a plan keeps when it was called more than `perPlan` times in the last minute (default 8). */
  burstMax?: number;
  /** Plans kept at once; the least recently used one is dropped beyond it (default 16). */
  maxPlans?: number;
  /** A warm pod not taken within this many seconds is deleted (default 300). */
  idleSeconds?: number;
  /** Told what went wrong starting or deleting a warm pod (it never fails a call). */
  onError?(message: string): void;
}

/** A pod of one plan, running and waiting for its call. */
export interface WarmPod {
  key: string;
  image: string;
  podName: string;
  created: Created[];
  kube: KubeCluster;
  readyAt: number;
  /** False once its container is seen not running (a warm pod that died is never used). */
  alive(): boolean;
  /**
   * The pod's watch, running since it was started: the call that takes the pod goes on with it (it
   * already knows the container runs, and sees its end without opening a watch of its own).
   */
  tracker: PodTracker;
  /** Ends the pod's watch: the pool does when it discards the pod, the call that took it when it ends. */
  release(): void;
  /**
   * Its share of the plan's NetworkPolicy (`--network none`; warm-policy.ts), not in `created`: whoever deletes the
   * pod releases it after the deletion, saying whether the pod is gone.
   */
  policy?: PolicyHold;
}

export interface WarmPodInfo {
  key: string;
  image: string;
  pod: string;
  namespace: string;
  idleSeconds: number;
}

/** How far back a plan's calls count towards its pool size. */
const BURST_WINDOW_MS = 60_000;

export class WarmPool {
  readonly perPlan: number;
  readonly burstMax: number;
  readonly maxPlans: number;
  readonly idleSeconds: number;
  private readonly ready = new Map<string, WarmPod[]>();
  private readonly timers = new Map<WarmPod, NodeJS.Timeout>();
  private readonly deletions = new Set<Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Pods being started, per plan; a call that finds none ready claims one and waits for it. */
  private readonly pending = new Map<string, Array<{ pod: Promise<WarmPod>; claimed: boolean }>>();
  /** Plans in use order, most recent last. */
  private readonly used: string[] = [];
  /** When each plan was called, within the last BURST_WINDOW_MS. */
  private readonly calls = new Map<string, number[]>();
  private draining = false;
  /** The NetworkPolicy each `--network none` plan's warm pods share. */
  readonly policies: WarmPolicies;

  constructor(private readonly opts: WarmPodOptions = {}) {
    this.policies = new WarmPolicies((message) => opts.onError?.(message));
    this.perPlan = opts.perPlan ?? 2;
    this.burstMax = Math.max(this.perPlan, opts.burstMax ?? 8);
    this.maxPlans = opts.maxPlans ?? 16;
    this.idleSeconds = opts.idleSeconds ?? 300;
  }

  /**
   * A running warm pod of this plan for exactly one call, or undefined. Dead ones are deleted. With
   * none ready, a pod still starting is claimed and waited for: it is partway to running already.
   * The caller owns the pod from now on, its watch included (it calls release() when done).
   */
  async take(key: string): Promise<WarmPod | undefined> {
    this.touch(key);
    this.countCall(key);
    const pods = this.ready.get(key) ?? [];
    while (pods.length > 0) {
      const pod = pods.shift() as WarmPod;
      this.forget(pod);
      if (pod.alive()) return pod;
      this.discard(pod);
    }
    const start = this.pending.get(key)?.find((p) => !p.claimed);
    if (!start) return undefined;
    start.claimed = true;
    const pod = await start.pod.catch(() => undefined);
    if (!pod) return undefined;
    if (pod.alive() && !this.draining) return pod;
    this.discard(pod);
    return undefined;
  }

  /**
   * Starts warm pods for this plan up to its size (ready and unclaimed starts): `perPlan`, or its calls of the
   * last minute up to `burstMax`; in the background, a failure is only reported.
   */
  refill(key: string, start: () => Promise<WarmPod>): void {
    if (this.draining || this.perPlan <= 0) return;
    this.touch(key);
    this.evictBeyondMaxPlans();
    const pending = this.pending.get(key) ?? [];
    this.pending.set(key, pending);
    const have = (this.ready.get(key)?.length ?? 0) + pending.filter((p) => !p.claimed).length;
    const size = this.sizeOf(key);
    for (let i = have; i < size; i++) {
      const entry = { pod: start(), claimed: false };
      pending.push(entry);
      const landed: Promise<void> = entry.pod
        .then((pod) => {
          // A claimed pod belongs to the call that claimed it.
          if (entry.claimed) return;
          if (this.draining || !this.used.includes(key)) return this.discard(pod);
          this.keepReady(key, pod);
        })
        // a plan forgotten meanwhile (its call failed) says nothing more: its call reported why
        .catch((err: Error) => {
          if (this.used.includes(key)) this.opts.onError?.(`berth: a warm pod could not be started: ${err.message}`);
        })
        .finally(() => {
          const list = this.pending.get(key) ?? [];
          list.splice(list.indexOf(entry), 1);
          this.inFlight.delete(landed);
        });
      this.inFlight.add(landed);
    }
  }

  private keepReady(key: string, pod: WarmPod): void {
    const pods = this.ready.get(key) ?? [];
    pods.push(pod);
    this.ready.set(key, pods);
    this.timers.set(
      pod,
      setTimeout(() => {
        this.ready.set(
          key,
          (this.ready.get(key) ?? []).filter((p) => p !== pod),
        );
        this.forget(pod);
        this.discard(pod);
      }, this.idleSeconds * 1000).unref(),
    );
  }

  /** The warm pods a call could take now: one whose process has ended is not listed (take() deletes it). */
  list(): WarmPodInfo[] {
    const now = Date.now();
    return [...this.ready.values()]
      .flat()
      .filter((p) => p.alive())
      .map((p) => ({
        key: p.key.slice(0, 12),
        image: p.image,
        pod: p.podName,
        namespace: p.kube.namespace,
        idleSeconds: Math.round((now - p.readyAt) / 1000),
      }));
  }

  /** Deletes every warm pod, and those still starting once they exist; the pool takes no more. */
  async drain(): Promise<number> {
    this.draining = true;
    const pods = [...this.ready.values()].flat();
    this.ready.clear();
    for (const p of pods) {
      this.forget(p);
      this.discard(p);
    }
    // Starts in flight land in refill's then(), which discards them while draining (claimed ones
    // are discarded by the call that waits for them).
    await Promise.allSettled([...this.inFlight]);
    await Promise.allSettled([...this.deletions]);
    // the shared policies go once their last pod has (a pod taken by a call still running keeps its policy)
    await this.policies.settled();
    return pods.length;
  }

  /** Takes new pods again after a drain. */
  reopen(): void {
    this.draining = false;
  }

  /** How many pods this plan keeps now. */
  sizeOf(key: string): number {
    if (this.perPlan <= 0) return 0;
    return Math.min(this.burstMax, Math.max(this.perPlan, this.recentCalls(key).length));
  }

  private countCall(key: string): void {
    const recent = this.recentCalls(key);
    recent.push(Date.now());
    this.calls.set(key, recent);
  }

  private recentCalls(key: string): number[] {
    const since = Date.now() - BURST_WINDOW_MS;
    return (this.calls.get(key) ?? []).filter((t) => t >= since);
  }

  private touch(key: string): void {
    const at = this.used.indexOf(key);
    if (at >= 0) this.used.splice(at, 1);
    this.used.push(key);
  }

  /**
   * A call of this plan failed before its function ran (image missing, pod refused, start failed): its warm pods
   * would fail the same way. Those ready are deleted, those still starting are deleted when they land.
   */
  forgetPlan(key: string): void {
    const at = this.used.indexOf(key);
    if (at >= 0) this.used.splice(at, 1);
    for (const p of this.ready.get(key) ?? []) {
      this.forget(p);
      this.discard(p);
    }
    this.ready.delete(key);
    this.calls.delete(key);
  }

  private evictBeyondMaxPlans(): void {
    while (this.used.length > this.maxPlans) {
      const oldest = this.used.shift() as string;
      for (const p of this.ready.get(oldest) ?? []) {
        this.forget(p);
        this.discard(p);
      }
      this.ready.delete(oldest);
      this.calls.delete(oldest);
    }
  }

  private forget(pod: WarmPod): void {
    clearTimeout(this.timers.get(pod));
    this.timers.delete(pod);
  }

  private discard(pod: WarmPod): void {
    pod.release();
    const deletion = cleanup(pod.kube, pod.created, false, (line) => this.opts.onError?.(line.trimEnd())).then((deleted) => pod.policy?.release(deleted));
    this.deletions.add(deletion);
    void deletion.finally(() => this.deletions.delete(deletion));
  }
}
