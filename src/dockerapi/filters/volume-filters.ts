/**
 * `docker volume ls --filter …` as dockerd reads it (moby volume/service): `dangling`, `driver`, `label`,
 * `name`; any other key is refused, never ignored.
 */
import { anyMatches, boolFilter, checkKeys, labelsMatch, patternMatchers, type Filters } from './filters.js';
import type { VolumeRecord } from '../model.js';

/** `inUse`: whether a container, in any state, mounts the volume (dockerd's references). */
export function volumeListFilter(filters: Filters, inUse: (name: string) => boolean): (v: VolumeRecord) => boolean {
  checkKeys(filters, ['dangling', 'driver', 'label', 'name']);
  const dangling = boolFilter(filters, 'dangling');
  const names = patternMatchers('name', filters.get('name'));
  return (v) =>
    // every volume is the `local` driver's to clients (inspect says so): another driver matches none
    anyMatches(filters.get('driver'), (d) => d === 'local') &&
    anyMatches(names, (matches) => matches(v.name)) &&
    labelsMatch(filters.get('label'), v.labels) &&
    (dangling === undefined || dangling !== inUse(v.name));
}
