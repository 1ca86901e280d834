// Pod volumes as host directories the containers bind-mount: emptyDir, configMap, secret, downwardAPI,
// projected, persistentVolumeClaim (a directory per bound claim, shared by every pod that names it; claim-controller.ts) and hostPath.
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { resourceByKind } from '../api/resources.js';
import type { KubeObject, ObjectStore } from '../types.js';
import { claimVolumeDir } from './claim-controller.js';
import { ConfigError } from './config-error.js';
import { configMapBytes, fieldValue, secretData } from './env.js';
import { emptyDirMemoryBytes, mountMemoryVolume } from './memory-volumes.js';

export interface VolumeDirs {
  /** per pod: <stateDir>/pods/<uid>/volumes */
  podVolumes: string;
  /** per pod, on tmpfs: for emptyDir medium Memory */
  podMemoryVolumes: string;
  /** persistentVolumeClaim volumes: <root>/<volumeName> */
  claims: string;
}

export interface VolumeContext {
  store: ObjectStore;
  pod: KubeObject;
  nodeName: string;
  hostIP: string;
  podIP?: string;
  /** the node's allocatable memory in bytes: what a memory-backed emptyDir is sized to at most */
  nodeMemory: number;
  dirs: VolumeDirs;
  /** a token bound to this pod from the API server, as the kubelet's token manager requests it; throws ConfigError when refused */
  serviceAccountToken?: (projection: { audience?: string; expirationSeconds?: number }) => string;
}

/** the host path of a volume, creating or refreshing its content; throws ConfigError when a source is missing */
export function materializeVolume(volume: any, ctx: VolumeContext): string {
  const ns = ctx.pod.metadata.namespace ?? 'default';
  const dir = join(ctx.dirs.podVolumes, safeName(volume.name));
  if (volume.persistentVolumeClaim) {
    const claimName: string = volume.persistentVolumeClaim.claimName;
    const claim = ctx.store.tryGet(resourceByKind('PersistentVolumeClaim'), ns, claimName);
    // the scheduler placed the pod with the claim bound; gone since, it cannot be mounted
    if (!claim || claim.status?.phase !== 'Bound') throw new ConfigError(`persistentvolumeclaim "${claimName}" ${claim ? 'is not bound' : 'not found'}`);
    const claimDir = claimVolumeDir(ctx.dirs.claims, claim);
    mkdirSync(claimDir, { recursive: true, mode: 0o777 });
    chmodSync(claimDir, 0o777);
    return claimDir;
  }
  if (volume.hostPath) {
    const p: string = volume.hostPath.path;
    if ((volume.hostPath.type === 'DirectoryOrCreate' || !volume.hostPath.type) && !existsSync(p)) mkdirSync(p, { recursive: true, mode: 0o755 });
    if (volume.hostPath.type === 'FileOrCreate' && !existsSync(p)) {
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, '');
    }
    return p;
  }
  if (volume.emptyDir) {
    const d = volume.emptyDir.medium === 'Memory' ? join(ctx.dirs.podMemoryVolumes, safeName(volume.name)) : dir;
    if (!existsSync(d)) {
      mkdirSync(d, { recursive: true });
      chmodSync(d, 0o777); // as the kubelet makes emptyDir: writable by any user the container runs as
    }
    if (volume.emptyDir.medium === 'Memory') mountMemoryVolume(d, emptyDirMemoryBytes(volume, ctx.pod.spec, ctx.nodeMemory));
    return d;
  }
  const files = volumeFiles(volume, ctx, ns);
  if (files === undefined) {
    mkdirSync(dir, { recursive: true });
    return dir;
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  for (const f of files) {
    const target = join(dir, f.path);
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    writeFileSync(target, f.data);
    chmodSync(target, f.mode);
  }
  return dir;
}

/** the token sources of a projected volume */
function tokenSources(volume: any): any[] {
  const sources: any[] = Array.isArray(volume?.projected?.sources) ? volume.projected.sources : [];
  return sources.filter((s) => s?.serviceAccountToken).map((s) => s.serviceAccountToken);
}

/**
 * How long until the kubelet's token manager would replace a projected volume's tokens: at 80% of the
 * requested lifetime, or after a day; undefined when the volume holds no token.
 */
export function tokenRefreshSeconds(volume: any): number | undefined {
  const lifetimes = tokenSources(volume).map((t) => Math.min(0.8 * (t.expirationSeconds ?? 3600), 24 * 60 * 60));
  return lifetimes.length ? Math.min(...lifetimes) : undefined;
}

/** writes fresh tokens into a projected volume that is already mounted (a rename inside the bind-mounted directory) */
export function refreshVolumeTokens(volume: any, ctx: VolumeContext): void {
  const dir = join(ctx.dirs.podVolumes, safeName(volume.name));
  if (!existsSync(dir)) return;
  const mode: number = volume.projected?.defaultMode ?? 0o644;
  for (const t of tokenSources(volume)) {
    const target = join(dir, checkPath(t.path ?? 'token'));
    const temp = `${target}.refresh`;
    writeFileSync(temp, requestToken(ctx, { audience: t.audience, expirationSeconds: t.expirationSeconds }));
    chmodSync(temp, mode);
    renameSync(temp, target);
  }
}

interface VolumeFile {
  path: string;
  data: Buffer;
  mode: number;
}

/** the files of a content volume (configMap, secret, downwardAPI, projected); undefined for unknown kinds */
function volumeFiles(volume: any, ctx: VolumeContext, ns: string): VolumeFile[] | undefined {
  const defaultMode: number = volume.configMap?.defaultMode ?? volume.secret?.defaultMode ?? volume.downwardAPI?.defaultMode ?? volume.projected?.defaultMode ?? 0o644;
  if (volume.configMap) return sourceFiles('configMap', volume.configMap, ctx, ns, defaultMode);
  if (volume.secret) return sourceFiles('secret', volume.secret, ctx, ns, defaultMode);
  if (volume.downwardAPI) return downwardFiles(volume.downwardAPI.items ?? [], ctx, defaultMode);
  if (volume.projected) {
    const out: VolumeFile[] = [];
    for (const src of volume.projected.sources ?? []) {
      if (src.configMap) out.push(...sourceFiles('configMap', src.configMap, ctx, ns, defaultMode));
      else if (src.secret) out.push(...sourceFiles('secret', src.secret, ctx, ns, defaultMode));
      else if (src.downwardAPI) out.push(...downwardFiles(src.downwardAPI.items ?? [], ctx, defaultMode));
      else if (src.serviceAccountToken) {
        if (!ctx.serviceAccountToken) throw new ConfigError('this node cannot request service account tokens');
        const token = requestToken(ctx, { audience: src.serviceAccountToken.audience, expirationSeconds: src.serviceAccountToken.expirationSeconds });
        // the kubelet writes the token with the projection's mode (default 0644), like the other files
        out.push({ path: checkPath(src.serviceAccountToken.path ?? 'token'), data: Buffer.from(token), mode: defaultMode });
      }
    }
    return out;
  }
  return undefined;
}

/** the API server's refusal (a deleted ServiceAccount, say) keeps the container from starting, as the kubelet's mount fails */
function requestToken(ctx: VolumeContext, projection: { audience?: string; expirationSeconds?: number }): string {
  try {
    return ctx.serviceAccountToken!(projection);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(`failed to fetch token: ${(e as Error).message}`);
  }
}

function sourceFiles(kind: 'configMap' | 'secret', src: any, ctx: VolumeContext, ns: string, defaultMode: number): VolumeFile[] {
  const name: string = kind === 'configMap' ? src.name : (src.secretName ?? src.name);
  const data = kind === 'configMap' ? configMapBytes(ctx.store, ns, name, src.optional) : secretData(ctx.store, ns, name, src.optional);
  if (data === undefined) return [];
  if (!src.items || src.items.length === 0) {
    return Object.entries(data).map(([k, v]) => ({ path: checkPath(k), data: v, mode: defaultMode }));
  }
  const out: VolumeFile[] = [];
  for (const item of src.items) {
    const v = data[item.key];
    if (v === undefined) {
      if (src.optional) continue;
      throw new ConfigError(`${kind === 'configMap' ? 'configmap' : 'secret'} references non-existent config key: ${item.key}`);
    }
    out.push({ path: checkPath(item.path), data: v, mode: item.mode ?? defaultMode });
  }
  return out;
}

function downwardFiles(items: any[], ctx: VolumeContext, defaultMode: number): VolumeFile[] {
  return items.map((item) => {
    let value = '';
    if (item.fieldRef) value = fieldValue(item.fieldRef.fieldPath, ctx);
    return { path: checkPath(item.path), data: Buffer.from(value), mode: item.mode ?? defaultMode };
  });
}

/** a relative path that stays inside the volume (the API server validates this too) */
function checkPath(p: string): string {
  const n = normalize(String(p));
  if (n.startsWith('/') || n === '..' || n.startsWith('../')) throw new ConfigError(`invalid path in volume item: ${p}`);
  return n;
}

function safeName(s: string): string {
  return String(s).replace(/[^A-Za-z0-9._-]/g, '_');
}
