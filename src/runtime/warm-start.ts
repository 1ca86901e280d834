/**
 * What the warm pool needs of a run: the key of a plan (equal keys, interchangeable pods) and the start
 * of a pod of that plan for a later call.
 */
import { createHash } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeCluster } from '../kube/cluster.js';
import { MAIN_CONTAINER, planWorkload, type PlanContext } from './plan.js';
import { ANNOTATION_EXPIRES_AT } from './pod-rules.js';
import { viewContainer } from './pod-status.js';
import { PodTracker, settledOrRunning } from './pod-tracker.js';
import { RunError } from './run-error.js';
import { cleanup, createSideObjects, DEFAULT_START_TIMEOUT, newRunId, type Created } from './run-objects.js';
import { noTrace } from './trace.js';
import type { WarmPod, WarmPool } from './warm-pool.js';
import type { PolicyHold } from './warm-policy.js';
import type { Workload } from './workload.js';

/**
 * Every byte of what the plan makes (pod, ConfigMaps with the mounts' content, NetworkPolicy), with
 * the run id and clock held still, plus where and as whom it runs: equal keys, interchangeable pods.
 */
export function planKey(w: Workload, context: PlanContext, kube: KubeCluster): string {
  const plan = planWorkload(w, { ...context, runId: 'warmkey0', now: new Date(0), stdinAsFile: false });
  const user = kube.kc.getCurrentUser?.()?.name ?? '';
  return createHash('sha256')
    .update(JSON.stringify([kube.server, kube.namespace, user, plan.pod, plan.configMaps, plan.networkPolicy ?? null]))
    .digest('hex');
}

/**
 * A pod of the plan started for a later call: a run id of its own, and a deadline and expiry that
 * also cover its wait in the pool. Resolves once its container runs (waiting on stdin).
 */
export async function startWarmPod(w: Workload, context: PlanContext, kube: KubeCluster, key: string, pool: WarmPool): Promise<WarmPod> {
  const wait = pool.idleSeconds;
  const warmWorkload: Workload = { ...w, deadlineSeconds: (w.deadlineSeconds ?? context.ttlSeconds) + wait };
  const plan = planWorkload(warmWorkload, { ...context, runId: newRunId(), now: new Date(), ttlSeconds: context.ttlSeconds + wait, stdinAsFile: false });
  const podName = plan.pod.metadata?.name as string;
  const created: Created[] = [];
  const stop = new AbortController();
  let policy: PolicyHold | undefined;
  try {
    if (plan.networkPolicy) {
      // the plan's warm pods share one policy, which outlives each of them (warm-policy.ts)
      policy = await pool.policies.hold(key, kube, plan.networkPolicy, expiryOf(plan.pod));
      plan.pod.metadata = { ...plan.pod.metadata, labels: { ...plan.pod.metadata?.labels, ...policy.podLabels } };
      delete plan.networkPolicy;
    }
    await createSideObjects(kube, plan, created, noTrace);
    const tracker = new PodTracker(kube, podName, stop.signal, noTrace);
    await kube.createPod(plan.pod);
    created.push(['pods', podName]);
    const deadline = Date.now() + (w.startTimeoutSeconds ?? DEFAULT_START_TIMEOUT) * 1000;
    const pod = await tracker.until(
      (p) => settledOrRunning(viewContainer(p, MAIN_CONTAINER), () => undefined),
      deadline,
      `warm pod of ${w.image} did not start`,
    );
    const view = viewContainer(pod, MAIN_CONTAINER);
    if (view.state !== 'running') throw new RunError(`warm pod ${podName} did not run (${view.state})`);
    return {
      key,
      image: w.image,
      podName,
      created,
      kube,
      readyAt: Date.now(),
      alive: () => {
        const now = tracker.current();
        return !tracker.failed() && now !== undefined && viewContainer(now, MAIN_CONTAINER).state === 'running' && !now.metadata?.deletionTimestamp;
      },
      tracker,
      release: () => stop.abort(),
      policy,
    };
  } catch (err) {
    stop.abort();
    const deleted = await cleanup(kube, created, false, () => undefined);
    await policy?.release(deleted);
    throw err;
  }
}

/** The expiry the plan wrote on the pod. */
function expiryOf(pod: V1Pod): Date {
  return new Date(pod.metadata?.annotations?.[ANNOTATION_EXPIRES_AT] as string);
}
