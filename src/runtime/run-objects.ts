/**
 * The objects of one run: created together (side objects before the pod that needs them), each
 * recorded as soon as it exists, and deleted together, pod first while it may still run.
 */
import { randomBytes } from 'node:crypto';
import type { KubeCluster } from '../kube/cluster.js';
import type { WorkloadPlan } from './plan.js';
import type { Trace } from './trace.js';

/** Seconds a container may take to run when the workload does not say. */
export const DEFAULT_START_TIMEOUT = 60;

/** Unique per run: the suffix of its objects' names and the value of its run label. */
export function newRunId(): string {
  return randomBytes(5).toString('hex').slice(0, 8);
}

export type Created = ['pods' | 'configmaps' | 'networkpolicies', string];

export /** NetworkPolicy and ConfigMaps at once; each is recorded for cleanup as soon as it exists. */
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

export /**
 * Deletes what the run created, all at once when the container has ended. While it may still run
 * (interrupted, failed start) the pod goes first: its NetworkPolicy must outlive the pod it isolates.
 * True when everything was deleted.
 */
async function cleanup(kube: KubeCluster, created: Created[], podEnded: boolean, report: (line: string) => void): Promise<boolean> {
  // Retried inside deleteQuietly; what still fails is said, never swallowed: the object's expiry and
  // `berth gc` are what remove it then.
  const remove = async (items: Created[]): Promise<boolean> => {
    const deleted = await Promise.all(
      items.map(([kind, name]) =>
        kube.deleteQuietly(kind, name).then(
          () => true,
          (err: unknown) => {
            report(
              `berth: could not delete ${kind}/${name} in namespace ${kube.namespace}: ${(err as Error).message}; it expires by its deadline and \`berth gc\` removes it\n`,
            );
            return false;
          },
        ),
      ),
    );
    return deleted.every(Boolean);
  };
  if (podEnded) return remove(created);
  const podsDeleted = await remove(created.filter(([kind]) => kind === 'pods'));
  if (podsDeleted) return remove(created.filter(([kind]) => kind !== 'pods'));
  // a pod that may still run keeps its policy: both expire together and `berth gc` removes them then
  await remove(created.filter(([kind]) => kind === 'configmaps'));
  return false;
}
