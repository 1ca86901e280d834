/**
 * Task caches (`caches: [{path}]`) as PersistentVolumeClaims: what a cache is called, how it is
 * labeled, and how a claim is planned. Pure (cache-claims.ts talks to the cluster).
 *
 * A cache belongs to (task identity, cache path, target), as a Concourse cache belongs to (job, step,
 * path) on one worker:
 * - task identity: for `berth task run -c FILE`, FILE's real absolute path (the same file run from any
 *   folder, or through a symlink, finds its cache; an edited file keeps it, as a Concourse step keeps
 *   its caches when its config changes); for a plan step, the plan file's absolute path and the step's name
 *   (Concourse's job and step).
 * - target: where the claim lives; until named targets exist, the kubeconfig context's name.
 * The claim's name is a hash of the three, so it is DNS-safe and bounded whatever the paths are;
 * labels carry label-safe forms (for `caches ls` and selection), annotations the exact values.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { rfc3339 } from '../runtime/plan.js';
import { ANNOTATION_EXPIRES_AT, LABEL_MANAGED_BY, ownershipLabels } from '../runtime/pod-rules.js';
import { parseDuration } from '../runtime/settings.js';
import type { TaskConfig } from './config.js';
import { TaskUsageError } from './layout.js';

export const CACHE_COMPONENT = 'task-cache';
export const LABEL_CACHE_TASK = 'berth.dev/cache-task';
export const LABEL_CACHE_PATH = 'berth.dev/cache-path';
/** A hash of the task identity: `caches rm --task FILE` selects by it exactly. */
export const LABEL_CACHE_OF = 'berth.dev/cache-of';
export const LABEL_TARGET = 'berth.dev/target';
/** Exact values (labels cannot hold paths): the task identity, the cache path, the target. */
export const ANNOTATION_CACHE_TASK = 'berth.dev/cache-task';
export const ANNOTATION_CACHE_PATH = 'berth.dev/cache-path';
export const ANNOTATION_TARGET = 'berth.dev/target';
export const ANNOTATION_LAST_USED = 'berth.dev/last-used';

export const DEFAULT_CACHE_SIZE = '1Gi';
export const DEFAULT_CACHE_TTL_SECONDS = 7 * 24 * 3600;

export interface CacheSettings {
  /** The claim's storage request (a Kubernetes quantity). */
  size: string;
  /** The claim's storageClassName; undefined: the cluster's default class. */
  storageClass?: string;
  /** How long a cache nobody used is kept: its expiry is last use + this. */
  ttlSeconds: number;
}

export class CacheSettingsError extends Error {}

/** BERTH_TASK_CACHE_SIZE, BERTH_TASK_CACHE_STORAGE_CLASS, BERTH_TASK_CACHE_TTL. */
export function cacheSettings(env: NodeJS.ProcessEnv): CacheSettings {
  const size = env.BERTH_TASK_CACHE_SIZE?.trim() || DEFAULT_CACHE_SIZE;
  if (!/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.test(size) || Number.parseFloat(size) <= 0) {
    throw new CacheSettingsError(`BERTH_TASK_CACHE_SIZE "${size}" is not a storage size (examples: 512Mi, 1Gi, 10Gi)`);
  }
  const storageClass = env.BERTH_TASK_CACHE_STORAGE_CLASS?.trim() || undefined;
  if (storageClass !== undefined && !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(storageClass)) {
    throw new CacheSettingsError(`BERTH_TASK_CACHE_STORAGE_CLASS "${storageClass}" is not a storage class name (lower-case letters, digits, '-' and '.')`);
  }
  return { size, storageClass, ttlSeconds: cacheTtl(env.BERTH_TASK_CACHE_TTL?.trim() || undefined) };
}

/** `7d`, `36h`, `90m`: days, then Go-style durations. */
export function cacheTtl(text: string | undefined): number {
  if (text === undefined) return DEFAULT_CACHE_TTL_SECONDS;
  const days = /^(\d+)d$/.exec(text);
  if (days && Number(days[1]) > 0) return Number(days[1]) * 24 * 3600;
  try {
    return parseDuration(text, 'BERTH_TASK_CACHE_TTL');
  } catch {
    throw new CacheSettingsError(`BERTH_TASK_CACHE_TTL "${text}" is not a duration (examples: 7d, 36h, 90m)`);
  }
}

/** A plan step's task identity: the plan file and the step's name, as Concourse keys caches by job and step. */
export function planStepIdentity(planFileRealPath: string, stepName: string): string {
  return `${planFileRealPath}#${stepName}`;
}

/** The cache path as the folder below the working directory it is mounted on. */
export function cachePath(path: string): string {
  return (
    posix
      .normalize(path)
      .replace(/^(\.\/)+/, '')
      .replace(/\/+$/, '') || '.'
  );
}

/**
 * The cache paths must be folders below the working directory that no input or output shares: a
 * cache under an input would receive the input's files, an output inside a cache would be kept.
 */
export function checkCachePaths(config: TaskConfig): void {
  const seen = new Set<string>();
  const nested = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
  for (const c of config.caches) {
    const p = cachePath(c.path);
    if (c.path.startsWith('/') || p === '.' || p === '..' || p.startsWith('../'))
      throw new TaskUsageError(`caches: path "${c.path}" must be a folder below the working directory`);
    if (seen.has(p)) throw new TaskUsageError(`caches: path "${c.path}" is listed twice`);
    seen.add(p);
    for (const x of [
      ...config.inputs.map((i) => ({ kind: 'input', name: i.name, path: i.path })),
      ...config.outputs.map((o) => ({ kind: 'output', name: o.name, path: o.path })),
    ]) {
      const xp = cachePath(x.path);
      if (nested(p, xp))
        throw new TaskUsageError(`caches: path "${c.path}" overlaps the ${x.kind} \`${x.name}\` (path "${x.path}"): give the cache a folder of its own`);
    }
  }
}

export interface CacheKey {
  /** The task identity (see the module comment). */
  task: string;
  /** The cache path, as cachePath() gives it. */
  path: string;
  target: string;
}

function hash(text: string, hexChars: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, hexChars);
}

/** `task-cache-<task's file name>-<16 hex of the key>`: at most 63 characters, DNS-safe. */
export function cacheClaimName(key: CacheKey): string {
  const base = posix.basename(key.task.replace(/#.*$/, '')).replace(/\.ya?ml$/i, '');
  const slug = base
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 24)
    .replace(/-+$/, '');
  return `task-cache-${slug ? `${slug}-` : ''}${hash(`${key.target}\0${key.task}\0${key.path}`, 16)}`;
}

/** The identity's label: a hash, so `--task FILE` selects exactly that task's caches. */
export function taskHash(task: string): string {
  return hash(task, 16);
}

/** A label value for any text: label characters kept, the rest '-', long values cut and told apart by a hash. */
export function labelValue(text: string): string {
  let v = text.replace(/[^A-Za-z0-9._-]+/g, '-');
  if (v.length > 63) v = `${v.slice(0, 46)}-${hash(text, 16)}`;
  v = v.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return v || hash(text, 16);
}

/** A short name of the task for labels and tables: its file, or for a plan step `plan.yml#step`. */
export function taskLabel(task: string): string {
  const [file, step] = task.split('#');
  return labelValue(step === undefined ? posix.basename(file) : `${posix.basename(file)}-${step}`);
}

export function cacheSelector(target: string, task?: string): string {
  return [
    `${LABEL_MANAGED_BY}=berth`,
    `app.kubernetes.io/component=${CACHE_COMPONENT}`,
    `${LABEL_TARGET}=${labelValue(target)}`,
    ...(task !== undefined ? [`${LABEL_CACHE_OF}=${taskHash(task)}`] : []),
  ].join(',');
}

/** The expiry and last use a run writes on each of its caches. */
export function useAnnotations(now: Date, ttlSeconds: number): Record<string, string> {
  return { [ANNOTATION_LAST_USED]: rfc3339(now), [ANNOTATION_EXPIRES_AT]: rfc3339(new Date(now.getTime() + ttlSeconds * 1000)) };
}

export function planCacheClaim(key: CacheKey, ctx: { namespace: string; owner: string; now: Date; settings: CacheSettings }): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: cacheClaimName(key),
      namespace: ctx.namespace,
      labels: {
        ...ownershipLabels(ctx.owner),
        'app.kubernetes.io/component': CACHE_COMPONENT,
        [LABEL_CACHE_TASK]: taskLabel(key.task),
        [LABEL_CACHE_PATH]: labelValue(key.path),
        [LABEL_CACHE_OF]: taskHash(key.task),
        [LABEL_TARGET]: labelValue(key.target),
      },
      annotations: {
        [ANNOTATION_CACHE_TASK]: key.task,
        [ANNOTATION_CACHE_PATH]: key.path,
        [ANNOTATION_TARGET]: key.target,
        ...useAnnotations(ctx.now, ctx.settings.ttlSeconds),
      },
    },
    spec: {
      // One node at a time: see docs/task.md (a claim pins the steps using it to the node it is bound on).
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: ctx.settings.size } },
      ...(ctx.settings.storageClass ? { storageClassName: ctx.settings.storageClass } : {}),
    },
  };
}
