// The scheduler's predicate for a one-node cluster: does the pod fit the node, and if not, the sentence
// the default scheduler writes into PodScheduled's message and the FailedScheduling event.
import type { KubeObject } from '../types.js';
import { matchesMap, matchesRequirement, type LabelSelectorRequirement } from './label-selector.js';
import { parseQuantity, podRequests } from './quantity.js';

export type FitResult = { fits: true } | { fits: false; message: string };

/** the PersistentVolumeClaim of that name in the pod's namespace, if it exists */
export type ClaimLookup = (namespace: string, name: string) => KubeObject | undefined;

/** `others` are the non-terminated pods already bound to the node */
export function checkFit(pod: KubeObject, node: KubeObject, others: KubeObject[], claimOf: ClaimLookup = () => undefined): FitResult {
  const claims = claimProblem(pod, claimOf);
  if (claims) return unschedulable(claims, 'Preemption is not helpful for scheduling');
  const labels: Record<string, string> = node.metadata.labels ?? {};
  if (!matchesMap(pod.spec?.nodeSelector, labels) || !matchesNodeAffinity(pod, labels)) {
    return unschedulable("1 node(s) didn't match Pod's node affinity/selector", 'Preemption is not helpful for scheduling');
  }
  const allocatable: Record<string, string> = node.status?.allocatable ?? {};
  if (others.length + 1 > parseQuantity(allocatable.pods ?? '110')) {
    return unschedulable('1 Too many pods', 'No preemption victims found for incoming pod');
  }
  const used: Record<string, number> = {};
  for (const o of others) for (const [k, v] of Object.entries(podRequests(o.spec))) used[k] = (used[k] ?? 0) + v;
  const insufficient: string[] = [];
  for (const [resource, wanted] of Object.entries(podRequests(pod.spec))) {
    const have = allocatable[resource];
    if (have === undefined) {
      if (wanted > 0) insufficient.push(resource);
      continue;
    }
    if ((used[resource] ?? 0) + wanted > parseQuantity(have)) insufficient.push(resource);
  }
  if (insufficient.length > 0) {
    return unschedulable(insufficient.sort().map((r) => `1 Insufficient ${r}`).join(', '), 'No preemption victims found for incoming pod');
  }
  return { fits: true };
}

/**
 * The VolumeBinding plugin's PreFilter: every claim the pod names must exist, not be deleted, and be
 * bound (the dev cluster binds claims at once, as a default class with Immediate binding does).
 */
function claimProblem(pod: KubeObject, claimOf: ClaimLookup): string | undefined {
  const ns = pod.metadata.namespace ?? 'default';
  let unbound = false;
  for (const v of pod.spec?.volumes ?? []) {
    const name: string | undefined = v?.persistentVolumeClaim?.claimName;
    if (!name) continue;
    const claim = claimOf(ns, name);
    if (!claim) return `persistentvolumeclaim "${name}" not found`;
    if (claim.metadata.deletionTimestamp) return `persistentvolumeclaim "${name}" is being deleted`;
    if (claim.status?.phase !== 'Bound') unbound = true;
  }
  return unbound ? 'pod has unbound immediate PersistentVolumeClaims' : undefined;
}

function unschedulable(reason: string, preemption: string): FitResult {
  return { fits: false, message: `0/1 nodes are available: ${reason}. preemption: 0/1 nodes are available: 1 ${preemption}.` };
}

/** requiredDuringSchedulingIgnoredDuringExecution: any term matches, all expressions of a term match */
function matchesNodeAffinity(pod: KubeObject, labels: Record<string, string>): boolean {
  const terms: { matchExpressions?: LabelSelectorRequirement[] }[] | undefined =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return true;
  return terms.some((t) => (t.matchExpressions ?? []).every((r) => matchesRequirement(r, labels)));
}
