/**
 * kpt v1 resource selection for one function: a Kptfile entry's `selectors` and `exclude`, or
 * `fn eval`'s --match-* / --exclude-* flags. A resource goes to the function when it matches ANY
 * selector (no selectors: every resource) and no non-empty exclusion; within one selector every given
 * field must match (labels and annotations as subsets). The function sees only the selected
 * resources; its output is merged back, and the resources it never saw stay as they were.
 */
import { PackageError, type KrmObject } from './package.js';

export interface ResourceSelector {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface Selection {
  selectors: ResourceSelector[];
  exclusions: ResourceSelector[];
}

/** Tags each resource the function is given, so its output can be put back where it came from. */
export const ANN_SELECTION_ID = 'internal.config.kubernetes.io/kpt-resource-id';

const STRING_FIELDS = ['apiVersion', 'kind', 'name', 'namespace'] as const;
const MAP_FIELDS = ['labels', 'annotations'] as const;

export function isEmptySelector(s: ResourceSelector): boolean {
  return STRING_FIELDS.every((f) => !s[f]) && MAP_FIELDS.every((f) => !s[f] || !Object.keys(s[f]!).length);
}

/** Whether a Kptfile entry or the eval flags asked for any selection at all (else: all in, all out). */
export function selectionActive(sel: Selection | undefined): sel is Selection {
  return !!sel && (sel.selectors.length > 0 || sel.exclusions.length > 0);
}

export function matchesSelector(item: KrmObject, s: ResourceSelector): boolean {
  const meta = (item.metadata ?? {}) as { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  const actual: Record<(typeof STRING_FIELDS)[number], string> = {
    apiVersion: String(item.apiVersion ?? ''),
    kind: String(item.kind ?? ''),
    name: String(meta.name ?? ''),
    namespace: String(meta.namespace ?? ''),
  };
  if (STRING_FIELDS.some((f) => s[f] && s[f] !== actual[f])) return false;
  return MAP_FIELDS.every((f) => Object.entries(s[f] ?? {}).every(([k, v]) => (meta[f] ?? {})[k] === v));
}

/** The resources, in their order, that the function gets. Each appears once even if several selectors match it. */
export function selectResources(items: KrmObject[], sel: Selection): KrmObject[] {
  const picked = sel.selectors.length ? items.filter((i) => sel.selectors.some((s) => matchesSelector(i, s))) : items;
  const exclusions = sel.exclusions.filter((e) => !isEmptySelector(e));
  return picked.filter((i) => !exclusions.some((e) => matchesSelector(i, e)));
}

/**
 * Copies of the selected resources, each tagged with its position in `items`, ready to send. Copies,
 * so a function run that fails leaves the caller's resources untouched.
 */
export function tagSelected(items: KrmObject[], selected: KrmObject[]): KrmObject[] {
  return selected.map((item) => {
    const copy = structuredClone(item);
    const ann = ((copy.metadata ??= {}).annotations ??= {});
    ann[ANN_SELECTION_ID] = String(items.indexOf(item));
    return copy;
  });
}

/**
 * All resources after the function ran on the tagged selection, in input order: unselected ones
 * unchanged, selected ones replaced by the output carrying their tag (dropped when the output lacks
 * it: the function deleted them), then the untagged output (new resources) at the end. Tags removed.
 */
export function mergeSelectionOutput(items: KrmObject[], selected: KrmObject[], output: KrmObject[]): KrmObject[] {
  const byTag = new Map<string, KrmObject>();
  const created: KrmObject[] = [];
  for (const o of output) {
    const tag = o.metadata?.annotations?.[ANN_SELECTION_ID];
    if (tag === undefined) created.push(o);
    else byTag.set(tag, o);
  }
  const merged: KrmObject[] = [];
  items.forEach((item, index) => {
    if (!selected.includes(item)) merged.push(item);
    else {
      const replaced = byTag.get(String(index));
      if (replaced) merged.push(replaced);
    }
  });
  return [...merged, ...created].map(untag);
}

function untag(item: KrmObject): KrmObject {
  const ann = item.metadata?.annotations;
  if (!ann || !(ANN_SELECTION_ID in ann)) return item;
  delete ann[ANN_SELECTION_ID];
  if (!Object.keys(ann).length) delete item.metadata!.annotations;
  return item;
}

/** A Kptfile entry's `selectors` or `exclude` list, checked: a mistyped selector must not silently select everything. */
export function parseSelectorList(raw: unknown, where: string): ResourceSelector[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new PackageError(`${where}: must be a list of selectors`);
  return raw.map((entry, i) => {
    const at = `${where}[${i}]`;
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new PackageError(`${at}: must be a mapping`);
    const out: ResourceSelector = {};
    for (const [key, value] of Object.entries(entry as Record<string, unknown>)) {
      if ((STRING_FIELDS as readonly string[]).includes(key)) {
        if (typeof value !== 'string') throw new PackageError(`${at}.${key}: must be a string`);
        out[key as (typeof STRING_FIELDS)[number]] = value;
      } else if ((MAP_FIELDS as readonly string[]).includes(key)) {
        if (!value || typeof value !== 'object' || Array.isArray(value)) throw new PackageError(`${at}.${key}: must be a mapping of strings`);
        out[key as (typeof MAP_FIELDS)[number]] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
      } else throw new PackageError(`${at}: unknown field ${key} (a selector has apiVersion, kind, name, namespace, labels, annotations)`);
    }
    return out;
  });
}

/** `key=value` flag values (--match-labels, --exclude-annotations, ...) as a map. */
export function parseKeyValueFlags(flag: string, values: string[] | undefined): Record<string, string> | undefined {
  if (!values?.length) return undefined;
  const out: Record<string, string> = {};
  for (const kv of values) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new PackageError(`${flag} ${kv}: expected key=value`);
    out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}
