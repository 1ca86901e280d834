// Matching of the two selector shapes pods meet: plain maps (Service.spec.selector, nodeSelector) and
// LabelSelector objects (NetworkPolicy.spec.podSelector) with matchLabels and matchExpressions.

export interface LabelSelectorRequirement {
  key: string;
  operator: string; // In NotIn Exists DoesNotExist (Gt Lt for node selector terms)
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** every pair of the map is in labels; an empty map matches everything */
export function matchesMap(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  for (const [k, v] of Object.entries(selector ?? {})) if ((labels ?? {})[k] !== v) return false;
  return true;
}

export function matchesRequirement(req: LabelSelectorRequirement, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  const has = Object.prototype.hasOwnProperty.call(l, req.key);
  const value = l[req.key];
  switch (req.operator) {
    case 'In':
      return has && (req.values ?? []).includes(value!);
    case 'NotIn':
      return !has || !(req.values ?? []).includes(value!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
      return has && Number(value) > Number(req.values?.[0]);
    case 'Lt':
      return has && Number(value) < Number(req.values?.[0]);
    default:
      return false;
  }
}

/** a LabelSelector; `{}` selects everything, as it does for NetworkPolicy.podSelector */
export function matchesSelector(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  return matchesMap(selector.matchLabels, labels) && (selector.matchExpressions ?? []).every((r) => matchesRequirement(r, labels));
}
