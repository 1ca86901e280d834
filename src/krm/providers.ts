/**
 * From a function config to something runnable: its own `config.kubernetes.io/function` annotation
 * (KEP-2906 step 1: it bypasses catalogs), else the first trusted catalog match. A catalog's
 * requireNetwork / requireStorageMount are needs, never grants: they are met only when the user also
 * allowed network (--allow-network) or gave mounts (--mount), as kustomize does.
 */
import { ensureExecutable, selectPlatform, verifyExecutable, currentPlatform } from '../catalog/exec.js';
import { explainResolution, normalizeSha, resolveFunction, ResolveError, type Resolution } from '../catalog/resolve.js';
import type { CatalogSet } from '../catalog/trust.js';
import type { WorkloadMount } from '../runtime/workload.js';
import YAML from 'yaml';
import type { KrmObject } from './package.js';
import type { FunctionProvider } from './runner.js';

export interface ProviderOptions {
  catalogs: CatalogSet;
  allowNetwork?: boolean;
  mounts?: WorkloadMount[];
  cacheDir?: string;
  caFile?: string;
  platform?: { os: string; arch: string };
  /** Prefer a catalog's exec provider over its container when both exist. */
  preferExec?: boolean;
  /** Print every match (resolution order) to this stream. */
  explain?: NodeJS.WritableStream;
  warn?: (line: string) => void;
}

export interface ResolvedProvider {
  provider: FunctionProvider;
  /** `catalog NAME` or `annotation`: where the provider came from. */
  origin: string;
  resolution?: Resolution;
}

export function ownFunctionSpec(config: KrmObject): { container?: { image?: string; network?: boolean }; exec?: { path?: string; args?: string[] } } | undefined {
  const ann = config.metadata?.annotations ?? {};
  const raw = ann['config.kubernetes.io/function'] ?? ann['config.k8s.io/function'];
  if (!raw) return undefined;
  return (YAML.parse(raw) ?? undefined) as ReturnType<typeof ownFunctionSpec>;
}

export async function providerForConfig(config: KrmObject, opts: ProviderOptions): Promise<ResolvedProvider> {
  const own = ownFunctionSpec(config);
  if (own?.container?.image) return { provider: { kind: 'container', image: own.container.image, network: Boolean(own.container.network && opts.allowNetwork) }, origin: 'annotation' };
  const resolution = resolveFunction(config, opts.catalogs.trusted, opts.catalogs.untrusted);
  const apiVersion = String(config.apiVersion);
  const kind = String(config.kind);
  if (opts.explain) opts.explain.write(explainResolution(resolution, apiVersion, kind));
  for (const w of resolution.warnings) opts.warn?.(`warning: ${w}`);
  const { version, catalog } = resolution;
  const container = version.runtime.container;
  const exec = version.runtime.exec;
  const what = `${kind} ${apiVersion} (catalog ${catalog.name})`;
  if (container && !(opts.preferExec && exec)) {
    if (container.requireNetwork && !opts.allowNetwork) throw new ResolveError(`${what} requires network access: allow it with --allow-network`);
    if (container.requireStorageMount && !opts.mounts?.length) throw new ResolveError(`${what} requires a storage mount: give one with --mount type=bind,src=DIR,dst=PATH`);
    const image = container.sha256 ? `${container.image.replace(/:[^:/@]+$/, '')}@${normalizeSha(container.sha256)}` : container.image;
    return {
      provider: { kind: 'container', image, network: Boolean(container.requireNetwork && opts.allowNetwork), mounts: container.requireStorageMount ? opts.mounts : undefined },
      origin: `catalog ${catalog.name}`,
      resolution,
    };
  }
  if (!exec) throw new ResolveError(`${what} has no runtime berth can use`);
  const want = opts.platform ?? currentPlatform();
  const platform = selectPlatform(exec.platforms, want);
  if (!platform) throw new ResolveError(`${what} has no executable for ${want.os}/${want.arch} (it has ${exec.platforms.map((p) => `${p.os}/${p.arch}`).join(', ')})`);
  const file = await ensureExecutable(platform, catalog, { cacheDir: opts.cacheDir, caFile: opts.caFile });
  return { provider: { kind: 'exec', path: file, label: `${platform.bin} (${kind} ${apiVersion}, catalog ${catalog.name})`, verify: () => verifyExecutable(file, platform.sha256, catalog.name) }, origin: `catalog ${catalog.name}`, resolution };
}
