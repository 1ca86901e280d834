/**
 * One deny-all NetworkPolicy for all the warm pods of a plan (`--network none`), instead of one per pod: a warm
 * call then deletes only its pod (issue 29: a warm call in 6 requests). The policy selects its pods by a label
 * of its own, exists before any of them is created, and is deleted once the last of them has been deleted (pods
 * go first, as everywhere). Its expiry is moved on to that of every pod it admits before the pod is created,
 * since `berth gc` takes an expiry to mean nobody uses the object any more: it never deletes the policy of a pod
 * that may still run, and after a killed agent it deletes the policy with the last pod.
 */
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import type { KubeCluster } from '../kube/cluster.js';
import { LABEL_RUN, rfc3339 } from './plan.js';
import { ANNOTATION_EXPIRES_AT } from './pod-rules.js';
import { newRunId } from './run-objects.js';

/** What a warm pod carries to be selected by its plan's policy. */
export const LABEL_WARM_POLICY = 'berth.dev/warm-policy';

/** A warm pod's share of its plan's policy. */
export interface PolicyHold {
  /** The labels the pod must carry (added to its own). */
  readonly podLabels: Record<string, string>;
  /**
   * The pod is gone (`podDeleted`), or may still run (its deletion failed, or it is kept): the policy is deleted
   * with the last pod deleted, and never while a pod it isolates may run (then its expiry and `berth gc` do).
   * Resolves once the policy's deletion, when this release began one, has ended.
   */
  release(podDeleted: boolean): Promise<void>;
}

interface SharedPolicy {
  name: string;
  id: string;
  kube: KubeCluster;
  holders: number;
  /** A holder's pod may outlive its release: the policy is left to its expiry. */
  pinned: boolean;
  /** Its expiry as the cluster has it (ms since the epoch), and the renewals in order. */
  expiresAt: number;
  settled: Promise<void>;
}

export class WarmPolicies {
  private readonly byPlan = new Map<string, SharedPolicy>();
  private readonly deletions = new Set<Promise<void>>();

  constructor(private readonly onError: (message: string) => void = () => undefined) {}

  /**
   * A share of the plan's policy for a pod that expires at `podExpiresAt`: the policy is created (from the plan's own
   * per-pod one, `perPod`) or its expiry moved on first. Rejects when the cluster refused; the pod must not be made then.
   */
  async hold(key: string, kube: KubeCluster, perPod: V1NetworkPolicy, podExpiresAt: Date): Promise<PolicyHold> {
    let policy = this.byPlan.get(key);
    if (!policy) {
      const id = newRunId();
      policy = {
        name: `berth-warm-${key.slice(0, 12)}-${id}`,
        id,
        kube,
        holders: 0,
        pinned: false,
        expiresAt: podExpiresAt.getTime(),
        settled: Promise.resolve(),
      };
      const shared = policy;
      shared.settled = kube.createNetworkPolicy(sharedPolicyOf(perPod, shared.name, id, podExpiresAt)).then(() => undefined);
      this.byPlan.set(key, shared);
    } else {
      this.renew(policy, podExpiresAt);
    }
    const shared = policy;
    shared.holders++;
    try {
      await shared.settled;
    } catch (err) {
      // a failed create or renewal: this pod is not made; the policy, if it exists, is not trusted for any other
      if (this.byPlan.get(key) === shared) this.byPlan.delete(key);
      shared.pinned = true;
      shared.holders--;
      throw err;
    }
    let released = false;
    return {
      podLabels: { [LABEL_WARM_POLICY]: shared.id },
      release: async (podDeleted) => {
        if (released) return;
        released = true;
        shared.holders--;
        if (!podDeleted) shared.pinned = true;
        if (shared.holders > 0) return;
        if (this.byPlan.get(key) === shared) this.byPlan.delete(key);
        if (!shared.pinned) await this.remove(shared);
      },
    };
  }

  /** Resolves once every deletion begun has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.deletions]);
  }

  /** Moves the policy's expiry on to the pod's, after any renewal in flight (each waits for the one before). */
  private renew(policy: SharedPolicy, podExpiresAt: Date): void {
    const wanted = podExpiresAt.getTime();
    if (wanted <= policy.expiresAt) return;
    policy.expiresAt = wanted;
    policy.settled = policy.settled.then(() => policy.kube.annotateNetworkPolicy(policy.name, { [ANNOTATION_EXPIRES_AT]: rfc3339(podExpiresAt) }));
  }

  private remove(policy: SharedPolicy): Promise<void> {
    const deletion = policy.kube
      .deleteQuietly('networkpolicies', policy.name)
      .catch((err: unknown) =>
        this.onError(
          `berth: could not delete networkpolicies/${policy.name} in namespace ${policy.kube.namespace}: ${(err as Error).message}; it expires by its deadline and \`berth gc\` removes it`,
        ),
      );
    this.deletions.add(deletion);
    void deletion.finally(() => this.deletions.delete(deletion));
    return deletion;
  }
}

/** The plan's deny-all policy, made to select every warm pod of the plan by its warm-policy label instead of one run. */
function sharedPolicyOf(perPod: V1NetworkPolicy, name: string, id: string, expiresAt: Date): V1NetworkPolicy {
  const labels: Record<string, string> = { ...(perPod.metadata?.labels ?? {}), [LABEL_WARM_POLICY]: id };
  delete labels[LABEL_RUN];
  return {
    ...perPod,
    metadata: { ...perPod.metadata, name, labels, annotations: { ...(perPod.metadata?.annotations ?? {}), [ANNOTATION_EXPIRES_AT]: rfc3339(expiresAt) } },
    spec: { ...perPod.spec, podSelector: { matchLabels: { [LABEL_WARM_POLICY]: id } } },
  };
}
