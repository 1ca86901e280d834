/**
 * The bridge between `berth fn` (src/krm, which runs functions) and KEP-2906 catalogs (src/catalog,
 * which knows which function a config names): faces do not import each other, so the CLI hands krm a
 * resolver built from the catalogs. Resolution: the first trusted match (catalog.resolve); the config
 * is checked against the match's openAPIV3Schema unless --skip-schema; a catalog's requireNetwork /
 * requireStorageMount are needs, never grants: met only when the user also allowed network
 * (--allow-network) or gave mounts (--mount), as kustomize does.
 */
import { checkFunctionConfig } from '../catalog/config-schema.js';
import { ensureProvider, selectPlatform, verifyExecutable, currentPlatform } from '../catalog/exec.js';
import { explainResolution, normalizeSha, resolveFunction, ResolveError } from '../catalog/resolve.js';
import type { CatalogSet } from '../catalog/trust.js';
import { stripBookkeeping, type KrmObject } from '../krm/package.js';
import type { ConfigSource, FunctionResolver } from '../krm/providers.js';
import type { FunctionProvider } from '../krm/runner.js';
import type { WorkloadMount } from '../runtime/workload.js';

export interface CatalogResolverOptions {
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
  /** Run configs their catalog's openAPIV3Schema refuses (--skip-schema; the CLI warns). */
  skipSchema?: boolean;
}

export function catalogResolver(opts: CatalogResolverOptions): FunctionResolver {
  const resolve = (config: KrmObject, source?: ConfigSource) => {
    const resolution = resolveFunction(config, opts.catalogs.trusted, opts.catalogs.untrusted);
    // KEP-2906: a config the function's schema refuses never reaches the function.
    if (!opts.skipSchema) checkFunctionConfig(stripBookkeeping(config), resolution, source);
    return resolution;
  };
  return {
    check: (config, source) => void resolve(config, source),
    async provider(config, source): Promise<FunctionProvider> {
      const resolution = resolve(config, source);
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
        if (container.requireStorageMount && !opts.mounts?.length)
          throw new ResolveError(`${what} requires a storage mount: give one with --mount type=bind,src=DIR,dst=PATH`);
        const image = container.sha256 ? `${container.image.replace(/:[^:/@]+$/, '')}@${normalizeSha(container.sha256)}` : container.image;
        return {
          kind: 'container',
          image,
          network: Boolean(container.requireNetwork && opts.allowNetwork),
          mounts: container.requireStorageMount ? opts.mounts : undefined,
        };
      }
      if (!exec) throw new ResolveError(`${what} has no runtime berth can use`);
      const want = opts.platform ?? currentPlatform();
      const platform = selectPlatform(exec.platforms, want);
      if (!platform)
        throw new ResolveError(`${what} has no executable for ${want.os}/${want.arch} (it has ${exec.platforms.map((p) => `${p.os}/${p.arch}`).join(', ')})`);
      const cached = await ensureProvider(platform, catalog, { cacheDir: opts.cacheDir, caFile: opts.caFile });
      // Checked again right before the run: the catalog's sha256 (or, for an archive, what the verified archive holds).
      const verify = (): void => verifyExecutable(cached.executable, cached.executableSha256, catalog.name);
      return { kind: 'exec', path: cached.executable, label: `${platform.bin} (${kind} ${apiVersion}, catalog ${catalog.name})`, verify };
    },
  };
}
