/**
 * Docker image references as the docker CLI reads them: `busybox` is docker.io/library/busybox:latest,
 * `user/app` is docker.io/user/app; a first component with a dot or a port, or `localhost`, names the
 * registry.
 */

export interface ImageReference {
  /** The registry's `host[:port]` as named (`docker.io` for Docker Hub). */
  domain: string;
  /** The host requests go to (`registry-1.docker.io` for Docker Hub). */
  registry: string;
  /** Repository path in the registry (`library/busybox`). */
  repository: string;
  tag?: string;
  digest?: string;
  /** The name as the docker CLI shows it (`busybox`, `ghcr.io/x/y`): the repository part of RepoDigests. */
  familiar: string;
}

const DOCKER_HUB = 'docker.io';

export class ImageReferenceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageReferenceError';
  }
}

export function parseImageReference(ref: string): ImageReference {
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!/^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/.test(digest)) throw new ImageReferenceError(`${ref}: the digest ${digest} is not algorithm:hex`);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!/^\w[\w.-]{0,127}$/.test(tag)) throw new ImageReferenceError(`${ref}: the tag ${tag} is not valid`);
  }
  const slash = rest.indexOf('/');
  const first = slash >= 0 ? rest.slice(0, slash) : '';
  const namesRegistry = slash >= 0 && (/[.:]/.test(first) || first === 'localhost' || first !== first.toLowerCase());
  let domain = namesRegistry ? first : DOCKER_HUB;
  let repository = namesRegistry ? rest.slice(slash + 1) : rest;
  if (domain === 'index.docker.io') domain = DOCKER_HUB;
  if (domain === DOCKER_HUB && !repository.includes('/')) repository = `library/${repository}`;
  if (!/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(repository))
    throw new ImageReferenceError(`${ref}: ${repository} is not a repository name (lower-case letters, digits, separators)`);
  const familiar = domain === DOCKER_HUB ? repository.replace(/^library\//, '') : `${domain}/${repository}`;
  return { domain, registry: domain === DOCKER_HUB ? 'registry-1.docker.io' : domain, repository, tag, digest, familiar };
}
