/**
 * `docker network ls --filter …` as dockerd reads it (moby daemon/network/filter.go): `dangling`, `driver`,
 * `id`, `label`, `name`, `scope`, `type`; any other key is refused, never ignored.
 */
import { anyMatches, checkKeys, FilterError, labelsMatch, patternMatchers, type Filters } from './filters.js';
import type { NetworkRecord } from '../model.js';

/** `hasActiveEndpoints`: whether a running container is on the network (what makes it not dangling). */
export function networkListFilter(filters: Filters, hasActiveEndpoints: (id: string) => boolean): (n: NetworkRecord) => boolean {
  checkKeys(filters, ['dangling', 'driver', 'id', 'label', 'name', 'scope', 'type']);
  const dangling = danglingOf(filters);
  for (const t of filters.get('type') ?? [])
    if (t !== 'builtin' && t !== 'custom') throw new FilterError(`invalid filter: 'type'='${t}' (give builtin or custom)`);
  const names = patternMatchers('name', filters.get('name'));
  const ids = patternMatchers('id', filters.get('id'));
  return (n) =>
    anyMatches(filters.get('driver'), (d) => d === n.driver) &&
    anyMatches(names, (matches) => matches(n.name)) &&
    anyMatches(ids, (matches) => matches(n.id)) &&
    labelsMatch(filters.get('label'), n.labels) &&
    // every network is local to its berth (inspect's Scope): swarm and global match none
    anyMatches(filters.get('scope'), (s) => s === 'local') &&
    // dangling: a network of the user's with no running container on it; bridge, host and none never are
    (dangling === undefined || dangling === (!n.builtin && !hasActiveEndpoints(n.id))) &&
    anyMatches(filters.get('type'), (t) => (t === 'builtin') === n.builtin);
}

/** `dangling` as dockerd's network list reads it: one value, true/1 or false/0. */
function danglingOf(filters: Filters): boolean | undefined {
  const values = filters.get('dangling');
  if (!values?.length) return undefined;
  if (values.length > 1) throw new FilterError('got more than one value for filter key "dangling"');
  if (values[0] === 'true' || values[0] === '1') return true;
  if (values[0] === 'false' || values[0] === '0') return false;
  throw new FilterError(`invalid value for filter 'dangling', must be "true" (or "1"), or "false" (or "0")`);
}
