/**
 * NetworkMode=none: a pod always has an interface on the pod network, so berth takes the network away as
 * the docker shim does for `--network none`: a NetworkPolicy with no ingress and no egress rules selecting
 * exactly this container's pods. It exists before the pod does (no moment with network), lives as long as
 * the container, and expires like every berth object (`berth gc`).
 */
import { rfc3339 } from '../../runtime/plan.js';
import { ANNOTATION_EXPIRES_AT, LABEL_OWNER, ownershipLabels } from '../../runtime/pod-rules.js';
import { LABEL_CONTAINER_ID } from '../../runtime/sandbox-plan.js';
import type { NetworkPolicy } from '../cluster.js';
import type { ContainerRecord } from '../model.js';

export function denyPolicyName(c: ContainerRecord): string {
  return `berth-deny-${c.id.slice(0, 12)}`;
}

export function planDenyPolicy(c: ContainerRecord, owner: string, ttlSeconds: number): NetworkPolicy {
  const shortId = c.id.slice(0, 12);
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: denyPolicyName(c),
      labels: { ...ownershipLabels(owner), [LABEL_CONTAINER_ID]: shortId },
      annotations: { [ANNOTATION_EXPIRES_AT]: rfc3339(new Date(Date.now() + ttlSeconds * 1000)) },
    },
    // No ingress and no egress rules with both policy types: nothing in, nothing out (DNS included).
    spec: { podSelector: { matchLabels: { [LABEL_CONTAINER_ID]: shortId, [LABEL_OWNER]: owner } }, policyTypes: ['Ingress', 'Egress'] },
  };
}
