/**
 * The `filters` query parameter: URL-encoded JSON, as a map `{"label":{"a=b":true}}` (moby client) or
 * a list `{"label":["a=b"]}` (dockerode). moby semantics: keys AND together; every `label` value must
 * match; several values of any other key match when one does.
 */

export type Filters = Map<string, string[]>;

export class FilterError extends Error {}

export function parseFilters(raw: string | null | undefined): Filters {
  const out: Filters = new Map();
  if (!raw) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new FilterError(`invalid filters: ${raw}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new FilterError(`invalid filters: ${raw}`);
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (Array.isArray(value)) out.set(key, value.map(String));
    else if (value && typeof value === 'object') out.set(key, Object.entries(value as Record<string, unknown>).filter(([, v]) => v === true || v === 'true').map(([k]) => k));
    else if (typeof value === 'string') out.set(key, [value]);
    else throw new FilterError(`invalid filter ${key}`);
  }
  return out;
}

/** `key` = the label exists, `key=value` = equal. All must hold. */
export function labelsMatch(wanted: string[] | undefined, labels: Record<string, string>): boolean {
  if (!wanted) return true;
  return wanted.every((w) => {
    const eq = w.indexOf('=');
    if (eq < 0) return Object.prototype.hasOwnProperty.call(labels, w);
    return labels[w.slice(0, eq)] === w.slice(eq + 1);
  });
}

/** Any of `wanted` accepts `test`; no values = no constraint. */
export function anyMatches(wanted: string[] | undefined, test: (w: string) => boolean): boolean {
  if (!wanted || wanted.length === 0) return true;
  return wanted.some(test);
}

export function checkKeys(filters: Filters, allowed: string[]): void {
  for (const k of filters.keys()) if (!allowed.includes(k)) throw new FilterError(`invalid filter '${k}'`);
}
