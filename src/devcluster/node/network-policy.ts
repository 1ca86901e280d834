// The one NetworkPolicy shape the node enforces: deny all ingress and all egress for the pods it selects.
// Anything less than full isolation cannot be expressed with podman's bridge and is not enforced.
import type { KubeObject } from '../types.js';
import { matchesSelector } from './label-selector.js';

/** policyTypes as the API server defaults them: Ingress always, Egress when egress rules exist */
function policyTypes(p: KubeObject): string[] {
  const given: string[] | undefined = p.spec?.policyTypes;
  if (given && given.length > 0) return given;
  return p.spec?.egress && p.spec.egress.length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
}

/** true when the policies of the pod's namespace leave it with neither ingress nor egress */
export function isFullyIsolated(pod: KubeObject, policies: KubeObject[]): boolean {
  const selecting = policies.filter((p) => p.metadata.namespace === pod.metadata.namespace && matchesSelector(p.spec?.podSelector ?? {}, pod.metadata.labels));
  const ingress = selecting.filter((p) => policyTypes(p).includes('Ingress'));
  const egress = selecting.filter((p) => policyTypes(p).includes('Egress'));
  if (ingress.length === 0 || egress.length === 0) return false;
  return ingress.every((p) => (p.spec?.ingress ?? []).length === 0) && egress.every((p) => (p.spec?.egress ?? []).length === 0);
}
