/**
 * `berth gc --image-registry`: the images a killed berth never released. Every push of berth's own carries its expiry
 * as a tag (push-target.ts); once that has passed, no pod of the push's can still need the image (the pods it was
 * pushed for have ended by their own deadline), so its manifest is deleted by digest, tag and all.
 */
import { RegistryError } from './errors.js';
import { ImagePusher } from './image-push.js';
import { catalogRepositories } from './listing.js';
import { expiryOfTag, plainHttpRegistries, type PushTarget } from './push-target.js';

export interface ImageGcOptions {
  /** As --image-registry named it: only repositories under its `PREFIX/` (berth's pushes) are looked at. */
  target: PushTarget;
  now: Date;
  dryRun: boolean;
  /** Also images whose expiry has not passed (still only those with an expiry tag: berth's). */
  includeUnexpired: boolean;
  /** Names to a catalog or tags request; default 1000 (distribution's own maximum). */
  pageSize?: number;
}

export interface CollectedImage {
  /** `registry/repository@digest`. */
  reference: string;
  repository: string;
  digest: string;
  expiresAt: Date;
}

const CATALOG_REFUSALS = [401, 403, 404];

export async function collectExpiredImages(opts: ImageGcOptions): Promise<CollectedImage[]> {
  const { registry, prefix } = opts.target;
  const clientOpts = { insecure: plainHttpRegistries(opts.target) };
  const repositories = (await listCatalog(registry, { ...clientOpts, pageSize: opts.pageSize })).filter((r) => r.startsWith(`${prefix}/`));
  const collected: CollectedImage[] = [];
  for (const repository of repositories) {
    const pusher = new ImagePusher(registry, repository, clientOpts);
    for (const [digest, expires] of await expiryByDigest(pusher, opts.pageSize)) {
      if (!opts.includeUnexpired && expires * 1000 > opts.now.getTime()) continue;
      // false: released meanwhile (berth itself, finishing late); the goal is reached all the same.
      if (!opts.dryRun) await pusher.deleteManifest(digest);
      collected.push({ reference: pusher.referenceOf(digest), repository, digest, expiresAt: new Date(expires * 1000) });
    }
  }
  return collected;
}

/**
 * The manifests of a repository that carry expiry tags, each with its latest expiry: a manifest tagged twice (the
 * same bytes pushed again into it) lives as long as its longest-lived push needs it.
 */
async function expiryByDigest(pusher: ImagePusher, pageSize: number | undefined): Promise<Map<string, number>> {
  const byDigest = new Map<string, number>();
  for (const tag of await pusher.tags(pageSize)) {
    const expires = expiryOfTag(tag);
    if (expires === undefined) continue;
    // undefined: deleted between the list and now.
    const digest = await pusher.manifestDigest(tag);
    if (digest) byDigest.set(digest, Math.max(expires, byDigest.get(digest) ?? 0));
  }
  return byDigest;
}

async function listCatalog(registry: string, opts: Parameters<typeof catalogRepositories>[1]): Promise<string[]> {
  try {
    return await catalogRepositories(registry, opts);
  } catch (err) {
    if (!(err instanceof RegistryError) || !CATALOG_REFUSALS.includes(err.status ?? 0)) throw err;
    throw new RegistryError(
      `${err.message}; berth finds the images it pushed through the registry's catalog (GET /v2/_catalog), which registry ${registry} does not serve to this identity; many hosted registries have none, or serve it to administrators only. Their images are deleted only as berth releases them (or by the registry's own retention policy)`,
      err.status,
      registry,
    );
  }
}
