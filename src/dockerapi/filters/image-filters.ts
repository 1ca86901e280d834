/**
 * `docker images --filter …` as dockerd reads it (moby daemon/images/image_list.go): `dangling`, `label`,
 * `before`, `since`, `until` and `reference`; values are checked before anything is listed, and any other key
 * is refused. None is accepted and ignored: `docker rmi $(docker images -qf dangling=true)` must not see
 * every image.
 */
import { boolFilter, checkKeys, FilterError, invalidFilter, labelsMatch, type Filters } from './filters.js';
import { parseTimeOrDuration, TIME_OR_DURATION_FORMS } from './docker-time.js';
import { imageCreatedMs, imageReferences, isTag } from '../images/image-view.js';
import { familiarImage, repositoryOf } from '../images/image-ref.js';
import { pathPattern, PatternSyntaxError } from './path-pattern.js';
import type { ImageRecord } from '../model.js';

const KEYS = ['before', 'dangling', 'label', 'reference', 'since', 'until'];

export interface ImageListing {
  /** Whether the image is listed. */
  includes(img: ImageRecord): boolean;
  /** The image's references the list shows (canonical): with a `reference` filter, only those it matches. */
  references(img: ImageRecord): string[];
}

/**
 * `find`: the image a `before` or `since` names (a 404 when there is none, as dockerd answers). `now` is what
 * an `until` duration counts back from.
 */
export function imageListFilter(filters: Filters, find: (ref: string) => ImageRecord, now = Date.now()): ImageListing {
  checkKeys(filters, KEYS);
  // berth's images have no layers, so none is dangling as dockerd's untagged parents are: dangling is an image
  // with no tag, only digests (pulled by digest, or whose tags were removed), shown as <none>
  const dangling = boolFilter(filters, 'dangling');
  // several values of one key all hold (dockerd keeps the oldest `before` and the newest `since`)
  const before = [...(filters.get('before') ?? []).map((ref) => imageCreatedMs(find(ref))), ...untilOf(filters, now)];
  const since = (filters.get('since') ?? []).map((ref) => imageCreatedMs(find(ref)));
  const references = referenceFilter(filters);
  const includes = (img: ImageRecord): boolean => {
    const created = imageCreatedMs(img);
    return (
      before.every((t) => created < t) &&
      since.every((t) => created > t) &&
      labelsMatch(filters.get('label'), img.info?.config.Labels ?? {}) &&
      (dangling === undefined || dangling === !imageReferences(img).some(isTag)) &&
      references(img).length > 0
    );
  };
  return { includes, references };
}

/** The `until` times: made before each (a duration back from now, an RFC 3339 time or unix seconds). */
function untilOf(filters: Filters, now: number): number[] {
  return (filters.get('until') ?? []).map((value) => {
    const at = parseTimeOrDuration(value, now);
    if (at === undefined)
      throw new FilterError(`invalid value for 'until' filter: failed to parse value as time or duration: "${value}" (until takes ${TIME_OR_DURATION_FORMS})`);
    return at;
  });
}

/**
 * `reference` as dockerd matches it: a shell pattern (path-pattern.ts) against each of the image's references
 * in four forms — familiar and canonical, with and without the tag — so `busybox`, `busy*`, `busybox:1.*` and
 * `docker.io/library/busybox` all find `busybox:1.36`, and `*` alone only images of Docker Hub's library.
 */
function referenceFilter(filters: Filters): (img: ImageRecord) => string[] {
  const values = filters.get('reference');
  if (!values) return imageReferences;
  const patterns = values.map((value) => {
    try {
      return pathPattern(value);
    } catch (err) {
      if (err instanceof PatternSyntaxError) throw invalidFilter('reference', value, err.message);
      throw err;
    }
  });
  return (img) => imageReferences(img).filter((ref) => referenceForms(ref).some((form) => patterns.some((matches) => matches(form))));
}

/** `docker.io/library/busybox:1.36` → busybox:1.36, busybox, itself, docker.io/library/busybox. */
function referenceForms(canonical: string): string[] {
  const name = repositoryOf(canonical);
  return [familiarImage(canonical), familiarImage(name), canonical, name];
}
