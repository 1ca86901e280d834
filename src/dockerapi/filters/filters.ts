/**
 * The `filters` query parameter: URL-encoded JSON, as a map `{"label":{"a=b":true}}` (moby client) or
 * a list `{"label":["a=b"]}` (dockerode). moby semantics: keys AND together; every `label` value must
 * match; several values of any other key match when one does. What each endpoint makes of its keys:
 * container-filters.ts, image-filters.ts, volume-filters.ts, network-filters.ts, event-filters.ts, prune-filters.ts.
 */
import { setFlagsFromString } from 'node:v8';

// V8's linear-time regexp engine (the `l` flag): patterns a client sends run in time linear in the name,
// never in a backtracking engine (`^/(a+)+$` would take seconds per character). Like Go's RE2, which
// dockerd matches name filters with, it has no backreferences or lookarounds.
setFlagsFromString('--enable-experimental-regexp-engine');
const LINEAR_TIME = 'l';

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
    if (Array.isArray(value)) {
      if (!value.every((v) => typeof v === 'string')) throw new FilterError(`invalid filter ${key}: the values must be strings`);
      out.set(key, value);
    } else if (value && typeof value === 'object')
      out.set(
        key,
        Object.entries(value as Record<string, unknown>)
          .filter(([, v]) => v === true || v === 'true')
          .map(([k]) => k),
      );
    else if (typeof value === 'string') out.set(key, [value]);
    else throw new FilterError(`invalid filter ${key}`);
  }
  return out;
}

export const MAX_PATTERN_LENGTH = 1024;

/**
 * A client's pattern (`name`, `id`: dockerd's Match, the value itself or a Go regexp, unanchored) as a
 * matcher that runs in linear time. A pattern the linear engine cannot run (backreferences, lookarounds:
 * not RE2 syntax either) or that is not a valid pattern at all is the client's error.
 */
export function patternMatcher(key: string, pattern: string): (text: string) => boolean {
  if (pattern.length > MAX_PATTERN_LENGTH)
    throw new FilterError(`invalid filter '${key}=${pattern.slice(0, 40)}…': patterns are at most ${MAX_PATTERN_LENGTH} characters`);
  let re: RegExp;
  try {
    re = new RegExp(pattern, LINEAR_TIME);
  } catch (err) {
    const why = (err as Error).message.replace(/^Invalid regular expression: /, '');
    throw new FilterError(`invalid filter '${key}=${pattern}': ${why} (filters take RE2 syntax: no backreferences or lookarounds)`);
  }
  return (text) => text === pattern || re.test(text);
}

/** `values` as matchers, compiled once per request (not once per container). */
export function patternMatchers(key: string, values: string[] | undefined): Array<(text: string) => boolean> | undefined {
  return values?.map((v) => patternMatcher(key, v));
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
export function anyMatches<T>(wanted: T[] | undefined, test: (w: T) => boolean): boolean {
  if (!wanted || wanted.length === 0) return true;
  return wanted.some(test);
}

/**
 * dockerd's refusal of a filter (`invalid filter 'bogus'`), or of its value (`invalid filter 'status=bogus'`)
 * or values (`invalid filter 'dangling=[maybe]'`, Go's print of a list), and why.
 */
export function invalidFilter(key: string, value?: string | string[], why?: string): FilterError {
  const shown = value === undefined ? '' : `=${Array.isArray(value) ? `[${value.join(' ')}]` : value}`;
  return new FilterError(`invalid filter '${key}${shown}'${why ? `: ${why}` : ''}`);
}

/** Refuses a key the endpoint does not know, as dockerd's Validate does: never a filter silently left out. */
export function checkKeys(filters: Filters, allowed: string[]): void {
  for (const k of filters.keys()) if (!allowed.includes(k)) throw invalidFilter(k);
}

/**
 * `label` and `label!` as dockerd's prunes read them: every `label` holds, and not every `label!` does (with
 * one `label!`, what has that label is kept; with several, what has them all).
 */
export function labelFiltersMatch(filters: Filters, labels: Record<string, string>): boolean {
  const excluded = filters.get('label!');
  return labelsMatch(filters.get('label'), labels) && !(excluded && labelsMatch(excluded, labels));
}

/**
 * A yes/no filter (`dangling`, `is-task`) as dockerd's GetBoolOrDefault reads it: `true`/`1` or `false`/`0`;
 * undefined when absent; anything else, or both, refused.
 */
export function boolFilter(filters: Filters, key: string): boolean | undefined {
  const values = filters.get(key);
  if (!values) return undefined;
  if (values.length === 0) throw invalidFilter(key);
  const yes = values.some((v) => v === 'true' || v === '1');
  const no = values.some((v) => v === 'false' || v === '0');
  if (yes === no) throw invalidFilter(key, values);
  return yes;
}
