/**
 * Whether the task container's end was its own. A container stopped from outside (its pod deleted by
 * `kubectl delete` or `berth task target retire`, evicted, or past its deadline) gets SIGTERM, and a task
 * that traps it may exit 0: that 0 is not a success, and berth must not report one. A task whose node stopped
 * reporting has no end anyone can know. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { deletedByCluster, lostNode } from '../runtime/pod-status.js';

export type StoppedFromOutside = { kind: 'deleted' | 'deadline' | 'evicted' | 'lost'; message: string };

/** Why the task did not end on its own, or undefined when it did. */
export function stoppedFromOutside(pod: V1Pod, container: string): StoppedFromOutside | undefined {
  const name = pod.metadata?.name ?? '';
  const reason = pod.status?.reason;
  if (reason === 'DeadlineExceeded') {
    return {
      kind: 'deadline',
      message: `pod ${name} hit its deadline (activeDeadlineSeconds ${pod.spec?.activeDeadlineSeconds ?? '?'}: raise BERTH_TTL) and the task was stopped`,
    };
  }
  if (reason === 'Evicted')
    return { kind: 'evicted', message: `pod ${name} was evicted and the task was stopped${pod.status?.message ? `: ${pod.status.message}` : ''}` };
  const terminated = pod.status?.containerStatuses?.find((s) => s.name === container)?.state?.terminated;
  const lost = lostNode(pod, container);
  if (lost) return { kind: 'lost', message: lost };
  const byCluster = deletedByCluster(pod);
  if (byCluster && !terminated) return { kind: 'lost', message: `${byCluster}; the task was stopped` };
  const deletion = pod.metadata?.deletionTimestamp;
  if (deletion === undefined) return undefined;
  // deletionTimestamp is when the pod must be gone: the delete was asked its grace period earlier.
  const asked = new Date(deletion).getTime() - (pod.metadata?.deletionGracePeriodSeconds ?? 0) * 1000;
  const finished = terminated?.finishedAt;
  // Both times have whole seconds: an end in the second of the delete may be the delete's doing.
  if (finished !== undefined && new Date(finished).getTime() < Math.floor(asked / 1000) * 1000) return undefined;
  return {
    kind: 'deleted',
    message: `pod ${name} was deleted while the task ran (kubectl delete, berth task target retire, a drain) and the task was stopped`,
  };
}
