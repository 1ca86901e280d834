import { randomBytes } from 'node:crypto';
import { ImagePusher } from './image-push.js';
import type { AssembledImage } from './oci-image.js';

/**
 * Where berth pushes the images it makes (a task step's image artifact, a `docker commit`): a registry the cluster's
 * nodes pull from and a repository prefix below which each image gets a repository of its own.
 */

export interface PushTarget {
  registry: string;
  prefix: string;
}

export class PushTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PushTargetError';
  }
}

const REPOSITORY_PATH = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$/;

/** `127.0.0.1:5115/ci` → registry 127.0.0.1:5115, prefix ci; a registry host has a dot or a port, or is localhost. */
export function parsePushTarget(value: string, source: string): PushTarget {
  const [registry = '', ...rest] = value.replace(/\/+$/, '').split('/');
  const prefix = rest.join('/');
  const isHost = registry === 'localhost' || registry.includes('.') || registry.includes(':');
  if (!isHost || !REPOSITORY_PATH.test(prefix))
    throw new PushTargetError(`${source} ${value}: give REGISTRY/PREFIX, as 127.0.0.1:5115/ci or registry.example.com/team/ci (a lower-case repository path)`);
  return { registry, prefix };
}

/** A name as a repository path component (lower case, separators kept), for `PREFIX/NAME`. */
export function repositoryComponent(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[._-]+|[._-]+$/g, '') || 'image'
  );
}

/** An image berth pushed into a repository of its own: what a pod names, and its deletion. */
export interface OwnImage {
  reference: string;
  digest: string;
  release(): Promise<void>;
}

/**
 * Pushes `image` by digest into `PREFIX/NAME-RANDOM`: a repository of this push's own, since two pushes of the same
 * bytes get one digest, and one's deletion must not take the other's image. `release` deletes the manifest (a
 * registry that refuses is left as it is).
 */
export async function pushToOwnRepository(target: PushTarget, name: string, image: AssembledImage): Promise<OwnImage> {
  const pusher = new ImagePusher(target.registry, `${target.prefix}/${repositoryComponent(name)}-${randomBytes(4).toString('hex')}`);
  const pushed = await pusher.pushImage(image);
  return {
    reference: pushed.reference,
    digest: pushed.digest,
    release: async () => void (await pusher.deleteManifest(pushed.digest).catch(() => false)),
  };
}
