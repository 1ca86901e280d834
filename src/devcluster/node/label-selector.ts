// The two selector shapes pods meet, matched through the one label matcher of the API (api/selectors.ts):
// plain maps (Service.spec.selector, nodeSelector) and LabelSelector objects (NetworkPolicy.spec.podSelector)
// with matchLabels and matchExpressions, whose Gt/Lt (node selector terms) are the API's GreaterThan/LessThan.
import { matchesLabels, type LabelOperator, type LabelRequirement } from '../api/selectors.js';

export interface LabelSelectorRequirement {
  key: string;
  operator: string; // In NotIn Exists DoesNotExist (Gt Lt for node selector terms)
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

const OPERATORS: Record<string, LabelOperator> = { In: 'In', NotIn: 'NotIn', Exists: 'Exists', DoesNotExist: 'DoesNotExist', Gt: 'GreaterThan', Lt: 'LessThan' };

/** every pair of the map is in labels; an empty map matches everything */
export function matchesMap(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  return matchesLabels(Object.entries(selector ?? {}).map(([key, value]): LabelRequirement => ({ key, operator: 'Equals', values: [value] })), labels);
}

/** an unknown operator matches nothing, as the API server's own selectors refuse it */
export function matchesRequirement(req: LabelSelectorRequirement, labels: Record<string, string> | undefined): boolean {
  const operator = OPERATORS[req.operator];
  return operator !== undefined && matchesLabels([{ key: req.key, operator, values: req.values ?? [] }], labels);
}

/** a LabelSelector; `{}` selects everything, as it does for NetworkPolicy.podSelector */
export function matchesSelector(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  return matchesMap(selector.matchLabels, labels) && (selector.matchExpressions ?? []).every((r) => matchesRequirement(r, labels));
}
