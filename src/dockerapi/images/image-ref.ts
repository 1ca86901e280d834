/**
 * Image references as dockerd stores and looks them up: every name is normalized to its canonical form
 * (`busybox`, `library/busybox` and `docker.io/library/busybox` are `docker.io/library/busybox:latest`;
 * a digest is kept and gets no tag; a registry with a port stays the registry; podman's local images
 * `localhost/x` stay `localhost/x`), and shown in the familiar form the docker CLI prints (`busybox:latest`).
 */
import { parseImageReference } from '../../registry/reference.js';
import { badRequest } from '../http/http.js';

/** The canonical form; a reference Docker would refuse is a 400 `invalid reference format`. */
export function normalizeImage(ref: string): string {
  let r;
  try {
    r = parseImageReference(ref);
  } catch (err) {
    throw badRequest(`invalid reference format: ${(err as Error).message}`);
  }
  const name = `${r.domain}/${r.repository}`;
  if (r.digest) return `${name}${r.tag ? `:${r.tag}` : ''}@${r.digest}`;
  return `${name}:${r.tag ?? 'latest'}`;
}

/** The canonical form, or undefined for a string that is no reference (an image id, a typo). */
export function tryNormalizeImage(ref: string): string | undefined {
  try {
    return normalizeImage(ref);
  } catch {
    return undefined;
  }
}

/** `docker.io/library/busybox:latest` → `busybox:latest`; `docker.io/user/app:1` → `user/app:1`; others as they are. */
export function familiarImage(canonical: string): string {
  return canonical.replace(/^docker\.io\/library\/(?=[^/]+$|[^/]+[:@])/, '').replace(/^docker\.io\//, '');
}

/** The repository part (no tag, no digest) of a canonical reference. */
export function repositoryOf(canonical: string): string {
  const at = canonical.indexOf('@');
  const name = at >= 0 ? canonical.slice(0, at) : canonical;
  const colon = name.lastIndexOf(':');
  return colon > name.lastIndexOf('/') ? name.slice(0, colon) : name;
}
