/**
 * What the prunes may remove, as dockerd decides it (moby daemon/prune.go, volume/service): each endpoint's
 * keys, and nothing else. A key it does not know or a value it cannot read throws (a 400) before the caller
 * removes anything: a filter left out would widen the prune to what the user meant to keep.
 */
import { checkKeys, FilterError, invalidFilter, labelFiltersMatch, type Filters } from './filters.js';
import { parseTimeOrDuration, TIME_OR_DURATION_FORMS } from './docker-time.js';
import { compareVersions } from '../http/api-version.js';
import { LABEL_ANONYMOUS } from '../volumes/volumes.js';

export interface Prunable {
  labels: Record<string, string>;
  created: Date;
}

/**
 * `docker container prune` and `docker network prune`: `label`, `label!` and `until` (made at or before
 * it). Whether the object is in use (a running container, a network with one) is the caller's to check.
 */
export function pruneFilter(filters: Filters, now = Date.now()): (o: Prunable) => boolean {
  checkKeys(filters, ['label', 'label!', 'until']);
  const until = untilOf(filters, now);
  return (o) => (until === undefined || o.created.getTime() <= until) && labelFiltersMatch(filters, o.labels);
}

function untilOf(filters: Filters, now: number): number | undefined {
  const values = filters.get('until');
  if (!values?.length) return undefined;
  if (values.length > 1) throw new FilterError('more than one until filter specified');
  const at = parseTimeOrDuration(values[0], now);
  if (at === undefined) {
    throw new FilterError(`failed to parse value as time or duration: "${values[0]}" (until takes ${TIME_OR_DURATION_FORMS})`);
  }
  return at;
}

/**
 * `docker volume prune`: `label`, `label!` and `all`. From API 1.42 on only anonymous volumes (dockerd's
 * label `com.docker.volume.anonymous`) unless `all` is true (`docker volume prune --all`); an older client
 * gets every unused volume, as dockerd adds `all` for it. Whether a container uses it is the caller's.
 */
export function volumePruneFilter(filters: Filters, apiVersion: string): (labels: Record<string, string>) => boolean {
  const all = allOf(filters) || compareVersions(apiVersion, '1.42') < 0;
  checkKeys(filters, ['label', 'label!', 'all']);
  return (labels) => (all || Object.hasOwn(labels, LABEL_ANONYMOUS)) && labelFiltersMatch(filters, labels);
}

/** `all` as dockerd reads it: one value, a Go boolean (strconv.ParseBool). */
function allOf(filters: Filters): boolean {
  const values = filters.get('all');
  if (!values?.length) return false;
  if (values.length > 1) throw invalidFilter('all', values, 'only one value is expected');
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(values[0])) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(values[0])) return false;
  throw new FilterError(`invalid filter 'all': "${values[0]}" is not a boolean (give true or false)`);
}
