/**
 * Task caches in the cluster: the claims a run mounts (made on first use, their expiry pushed on at
 * every use), and what `berth task caches ls|rm` list and delete. Naming and labels: caches.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { statusOf } from '../kube/errors.js';
import { ANNOTATION_EXPIRES_AT } from '../runtime/pod-rules.js';
import {
  ANNOTATION_CACHE_PATH,
  ANNOTATION_CACHE_TASK,
  ANNOTATION_LAST_USED,
  ANNOTATION_TARGET,
  cacheClaimName,
  cachePath,
  cacheSelector,
  planCacheClaim,
  useAnnotations,
  type CacheKey,
  type CacheSettings,
} from './caches.js';

/** What the cache functions need of a cluster client (kube/client.ts's ClusterClient). */
export interface CacheCluster {
  namespace: string;
  readClaim(name: string): Promise<V1PersistentVolumeClaim>;
  createClaim(pvc: V1PersistentVolumeClaim): Promise<V1PersistentVolumeClaim>;
  annotateClaim(name: string, annotations: Record<string, string>): Promise<void>;
  deleteClaim(name: string): Promise<void>;
  listClaims(labelSelector: string): Promise<V1PersistentVolumeClaim[]>;
  listPods(labelSelector: string): Promise<V1Pod[]>;
}

/** What a run needs of the cluster for its caches (useCaches). */
export type CacheUse = Pick<CacheCluster, 'namespace' | 'readClaim' | 'createClaim' | 'annotateClaim'>;

export class CacheError extends Error {}

/**
 * The target a cache belongs to. Until berth has named targets (`berth task target`), the target is
 * the kubeconfig context berth runs in; this is the one place that decides it.
 */
export function currentTarget(kc: Pick<KubeConfig, 'getCurrentContext'>): string {
  return kc.getCurrentContext();
}

export interface CacheMount {
  path: string;
  claim: string;
}

/** How long a run waits for a cache that `caches rm` is deleting to be gone before it makes it anew. */
const DELETING_WAIT_MS = 60_000;

/** The claim of each cache, made if missing, marked used now (its expiry pushed on). */
export async function useCaches(kube: CacheUse, keys: CacheKey[], ctx: { owner: string; now: Date; settings: CacheSettings }): Promise<CacheMount[]> {
  return Promise.all(
    keys.map(async (key) => {
      const claim = cacheClaimName(key);
      const planned = planCacheClaim(key, { namespace: kube.namespace, owner: ctx.owner, now: ctx.now, settings: ctx.settings });
      for (const deadline = Date.now() + DELETING_WAIT_MS; ;) {
        const found = await readOrUndefined(kube, claim);
        if (found && !found.metadata?.deletionTimestamp) {
          await kube.annotateClaim(claim, useAnnotations(ctx.now, ctx.settings.ttlSeconds));
          return { path: key.path, claim };
        }
        if (!found) {
          try {
            await kube.createClaim(planned);
            return { path: key.path, claim };
          } catch (err) {
            // Another run made it first: use theirs.
            if (statusOf(err).code !== 409) throw err;
            continue;
          }
        }
        if (Date.now() > deadline)
          throw new CacheError(
            `the cache ${key.path} (claim ${claim}) is being deleted and still exists after ${DELETING_WAIT_MS / 1000}s: a pod may still use it`,
          );
        await sleep(250);
      }
    }),
  );
}

async function readOrUndefined(kube: Pick<CacheCluster, 'readClaim'>, name: string): Promise<V1PersistentVolumeClaim | undefined> {
  try {
    return await kube.readClaim(name);
  } catch (err) {
    if (statusOf(err).code === 404) return undefined;
    throw err;
  }
}

export interface CacheEntry {
  task: string;
  path: string;
  claim: string;
  size: string;
  storageClass?: string;
  phase: string;
  lastUsed?: string;
  expiresAt?: string;
  target: string;
  namespace: string;
}

function entryOf(pvc: V1PersistentVolumeClaim, namespace: string): CacheEntry {
  const a = pvc.metadata?.annotations ?? {};
  return {
    task: a[ANNOTATION_CACHE_TASK] ?? '',
    path: a[ANNOTATION_CACHE_PATH] ?? '',
    claim: pvc.metadata?.name ?? '',
    size: pvc.status?.capacity?.storage ?? pvc.spec?.resources?.requests?.storage ?? '',
    ...(pvc.spec?.storageClassName ? { storageClass: pvc.spec.storageClassName } : {}),
    phase: pvc.metadata?.deletionTimestamp ? 'Terminating' : (pvc.status?.phase ?? ''),
    ...(a[ANNOTATION_LAST_USED] ? { lastUsed: a[ANNOTATION_LAST_USED] } : {}),
    ...(a[ANNOTATION_EXPIRES_AT] ? { expiresAt: a[ANNOTATION_EXPIRES_AT] } : {}),
    target: a[ANNOTATION_TARGET] ?? '',
    namespace: pvc.metadata?.namespace ?? namespace,
  };
}

/** The caches of this target (of one task when `task` is given), by task then path. */
export async function listCaches(kube: CacheCluster, target: string, task?: string): Promise<CacheEntry[]> {
  const claims = await kube.listClaims(cacheSelector(target, task));
  return (
    claims
      .map((c) => entryOf(c, kube.namespace))
      // The label is a label-safe form of the target; the annotation is exact.
      .filter((e) => e.target === target && (task === undefined || e.task === task))
      .sort((a, b) => a.task.localeCompare(b.task) || a.path.localeCompare(b.path))
  );
}

export interface RemoveFilter {
  task?: string;
  path?: string;
}

/**
 * Deletes the caches that match, once none is in use: a cache a pod still mounts is refused (deleting
 * it would leave it Terminating until the pod ends, and the next run could not make it anew). Waits
 * until the claims are gone, so the next run starts with an empty cache.
 */
export async function removeCaches(kube: CacheCluster, target: string, filter: RemoveFilter, opts: { waitMs?: number } = {}): Promise<CacheEntry[]> {
  const wantedPath = filter.path === undefined ? undefined : cachePath(filter.path);
  const matching = (await listCaches(kube, target, filter.task)).filter((e) => wantedPath === undefined || e.path === wantedPath);
  if (!matching.length) {
    const what = [filter.task !== undefined ? `task ${filter.task}` : '', wantedPath !== undefined ? `path ${wantedPath}` : ''].filter(Boolean).join(' and ');
    throw new CacheError(`no cache${what ? ` of ${what}` : ''} on target ${target} (namespace ${kube.namespace}): \`berth task caches ls\` lists them`);
  }
  const pods = await kube.listPods('');
  const users = (claim: string): string[] =>
    pods
      .filter(
        (p) =>
          p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed' && (p.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === claim),
      )
      .map((p) => p.metadata?.name ?? '');
  const busy = matching.map((e) => ({ e, by: users(e.claim) })).filter((x) => x.by.length);
  if (busy.length) {
    throw new CacheError(
      `${busy.map(({ e, by }) => `the cache ${e.path} of ${e.task} (claim ${e.claim}) is in use by pod ${by.join(', ')}`).join('; ')}: nothing was deleted; run \`berth task caches rm\` again once the task ended`,
    );
  }
  await Promise.all(matching.map((e) => kube.deleteClaim(e.claim)));
  const deadline = Date.now() + (opts.waitMs ?? 60_000);
  for (const e of matching) {
    while (await readOrUndefined(kube, e.claim)) {
      if (Date.now() > deadline)
        throw new CacheError(`the claim ${e.claim} was deleted but is still there (Terminating): a pod may have started to use it; it goes once that pod ends`);
      await sleep(250);
    }
  }
  return matching;
}
