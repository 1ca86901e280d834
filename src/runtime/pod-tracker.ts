/**
 * One watch per pod for a whole run: `until` resolves with the first pod state (the latest seen, or the
 * next ones) that satisfies a condition, or rejects at a deadline or when the pod goes away.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeCluster } from '../kube/cluster.js';
import { MAIN_CONTAINER } from './plan.js';
import { deletedByCluster, type ContainerView } from './pod-status.js';
import { RunError } from './run-error.js';
import type { Trace } from './trace.js';

export class PodTracker {
  private latest: V1Pod | undefined;

  /** True once the pod is gone or its watch failed for good. */
  failed(): boolean {
    return this.failure !== undefined;
  }

  /** The latest state seen (undefined before the first event). */
  current(): V1Pod | undefined {
    return this.latest;
  }
  private waiters: Array<{ test: (p: V1Pod) => boolean; resolve: (p: V1Pod) => void }> = [];
  private failure: Error | undefined;
  private failWaiters: Array<(e: Error) => void> = [];

  constructor(kube: Pick<KubeCluster, 'watchPod'>, name: string, signal: AbortSignal, trace: Trace) {
    let seen = '';
    kube
      .watchPod(
        name,
        (pod, type) => {
          if (type === 'DELETED') {
            this.fail(new RunError(deletedByCluster(pod) ?? `pod ${name} was deleted while berth was running it`));
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
        timer = setTimeout(
          () => {
            this.waiters = this.waiters.filter((w) => w !== waiter);
            reject(
              new RunError(`${timeoutMessage} within the start timeout (raise startTimeout in the berth config; last state: ${describeLatest(this.latest)})`),
            );
          },
          Math.max(0, deadline - Date.now()),
        );
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

/** Until the container runs or can no longer run; tells each waiting phase on the way. */
export function settledOrRunning(view: ContainerView, progress: (p: string) => void): boolean {
  if (view.state === 'pending') {
    progress(view.progress);
    return false;
  }
  return true;
}

export function isTerminal(view: ContainerView): boolean {
  return view.state === 'terminated' || view.state === 'failed';
}
