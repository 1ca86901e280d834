/**
 * `docker events --filter …` as dockerd reads it (moby daemon/events/filter.go). Every key dockerd knows does
 * what it does there; any other is refused — dockerd lets an unknown key pass and shows every event, which
 * would leave a script waiting on `--filter contianer=web` reading all of them.
 */
import { anyMatches, checkKeys, labelsMatch, type Filters } from './filters.js';
import { familiarImage, repositoryOf, tryNormalizeImage } from '../images/image-ref.js';
import type { DockerEvent } from '../event-bus.js';

/**
 * The keys that name an object by its id or name, either of them in full or its beginning. dockerd holds each
 * event to all of them whatever its type (`container=web` also passes a network event only when the network
 * is named web…), and so does berth.
 */
const ACTOR_KEYS = ['config', 'container', 'daemon', 'network', 'node', 'plugin', 'secret', 'service', 'volume'];
const KEYS = [...ACTOR_KEYS, 'event', 'image', 'label', 'scope', 'type'];

/** Actions dockerd matches by their beginning when one of them is asked for (`health_status: healthy`). */
const PREFIXED_ACTIONS = ['health_status', 'exec_create', 'exec_start'];

export function eventFilter(filters: Filters): (e: DockerEvent) => boolean {
  checkKeys(filters, KEYS);
  const events = filters.get('event');
  const byPrefix = events?.some((v) => PREFIXED_ACTIONS.includes(v)) ?? false;
  return (e) =>
    anyMatches(events, (v) => e.Action === v || (byPrefix && e.Action.startsWith(v))) &&
    anyMatches(filters.get('type'), (t) => t === e.Type) &&
    anyMatches(filters.get('scope'), (s) => s === e.scope) &&
    ACTOR_KEYS.every((key) => anyMatches(filters.get(key), (v) => e.Actor.ID.startsWith(v) || (e.Actor.Attributes.name ?? '').startsWith(v))) &&
    anyMatches(filters.get('image'), (v) => imageNames(e).includes(v)) &&
    labelsMatch(filters.get('label'), e.Actor.Attributes);
}

/**
 * The names an `image` filter is held to: the actor's id and its image (an image event's name, a container
 * event's image), each also without its tag (`busybox` finds `busybox:1.36` and `docker.io/library/busybox:1`).
 */
function imageNames(e: DockerEvent): string[] {
  const image = e.Actor.Attributes[e.Type === 'image' ? 'name' : 'image'] ?? '';
  return [e.Actor.ID, image, withoutTag(e.Actor.ID), withoutTag(image)];
}

function withoutTag(ref: string): string {
  const norm = tryNormalizeImage(ref);
  return norm === undefined ? ref : familiarImage(repositoryOf(norm));
}
