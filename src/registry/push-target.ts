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
  /** Spoken to over plain http: given as `http://REGISTRY/PREFIX` (loopback registries always are). */
  plainHttp: boolean;
}

export class PushTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PushTargetError';
  }
}

const REPOSITORY_PATH = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$/;

/**
 * `registry.example.com/team/ci` → registry registry.example.com, prefix team/ci, over https; `http://10.244.0.1:5115/ci`
 * names a plain-http registry (dockerd's --insecure-registry). A registry host has a dot or a port, or is localhost.
 */
export function parsePushTarget(value: string, source: string): PushTarget {
  const plainHttp = value.startsWith('http://');
  const [registry = '', ...rest] = value
    .replace(/^https?:\/\//, '')
    .replace(/\/+$/, '')
    .split('/');
  const prefix = rest.join('/');
  const isHost = registry === 'localhost' || registry.includes('.') || registry.includes(':');
  if (!isHost || !REPOSITORY_PATH.test(prefix))
    throw new PushTargetError(
      `${source} ${value}: give REGISTRY/PREFIX, as registry.example.com/team/ci, or http://10.244.0.1:5115/ci for a plain-http registry (a lower-case repository path)`,
    );
  return { registry, prefix, plainHttp };
}

/** The registries a client of this target speaks plain http to. */
export function plainHttpRegistries(target: PushTarget): string[] {
  return target.plainHttp ? [target.registry] : [];
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
  /** The pod serving it, where it is served from one (runtime/image-serving.ts): the image lives as long as that pod. */
  pod?: string;
  release(): Promise<void>;
}

/**
 * How long a push of berth's own lives, after which `berth gc --image-registry` deletes it: its TTL from the push (as
 * long as the pod it is pushed for), or an expiry given outright.
 */
export type OwnPushOptions = { ttlSeconds: number } | { expiresAt: Date };

/**
 * The tag that records a push's expiry in the registry, which keeps no annotations: `berth-expires-UNIX_SECONDS`.
 * Pods still name the digest; the tag is only what `berth gc` reads.
 */
export const EXPIRY_TAG_PREFIX = 'berth-expires-';
/** The prefix holds no character a pattern reads (letters and `-`), so it is matched as written. */
const EXPIRY_TAG = new RegExp(`^${EXPIRY_TAG_PREFIX}(\\d{1,15})$`);

export function expiryTag(expiresAt: Date): string {
  return `${EXPIRY_TAG_PREFIX}${Math.ceil(expiresAt.getTime() / 1000)}`;
}

/** The expiry (epoch seconds) an expiry tag records; undefined for any other tag. */
export function expiryOfTag(tag: string): number | undefined {
  const m = EXPIRY_TAG.exec(tag);
  return m ? Number(m[1]) : undefined;
}

/**
 * Pushes `image` into `PREFIX/NAME-RANDOM`: a repository of this push's own, since two pushes of the same bytes get
 * one digest, and one's deletion must not take the other's image. The manifest is put under its expiry tag alone (one
 * PUT), so that no moment passes in which a killed berth would leave it untagged, where no gc could find it; callers
 * still get the digest reference. `release` deletes the manifest, which takes its tag with it (a registry that
 * refuses is left as it is: gc deletes it once expired).
 */
export async function pushToOwnRepository(target: PushTarget, name: string, image: AssembledImage, opts: OwnPushOptions): Promise<OwnImage> {
  const repository = `${target.prefix}/${repositoryComponent(name)}-${randomBytes(4).toString('hex')}`;
  const pusher = new ImagePusher(target.registry, repository, { insecure: plainHttpRegistries(target) });
  const expiresAt = 'expiresAt' in opts ? opts.expiresAt : new Date(Date.now() + opts.ttlSeconds * 1000);
  const pushed = await pusher.pushImage(image, { tag: expiryTag(expiresAt) });
  return {
    reference: pushed.reference,
    digest: pushed.digest,
    release: async () => void (await pusher.deleteManifest(pushed.digest).catch(() => false)),
  };
}
