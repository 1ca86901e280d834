/**
 * From a function config to something runnable: its own `config.kubernetes.io/function` annotation
 * (KEP-2906 step 1: it bypasses catalogs), else whatever the caller's resolver says (the CLI builds
 * one from the trusted catalogs: src/cli/fn-resolver.ts; krm itself knows no catalog).
 */
import type { WorkloadMount } from '../runtime/workload.js';
import YAML from 'yaml';
import { PackageError, type KrmObject } from './package.js';
import type { FunctionProvider } from './runner.js';

/** The file a function config came from, so that errors about it can name its line and column. */
export interface ConfigSource {
  /** The file as the user named it (what messages show). */
  file: string;
  text: string;
  /** Which YAML document of the file (default 0). */
  index?: number;
}

export interface FunctionResolver {
  /** Throws when the config cannot run as it is (unknown kind, refused by its schema); called for every config before any function runs. */
  check(config: KrmObject, source?: ConfigSource): void;
  /** What runs the config. */
  provider(config: KrmObject, source?: ConfigSource): Promise<FunctionProvider>;
}

export interface ProviderOptions {
  /** Finds the function of a config that names no runtime of its own (absent: such configs are an error). */
  resolver?: FunctionResolver;
  allowNetwork?: boolean;
  mounts?: WorkloadMount[];
  /**
   * Accepted for callers written when krm resolved catalogs itself (tests pass an empty set): an empty
   * set means no resolver; a non-empty one without a resolver is refused rather than ignored.
   */
  catalogs?: { trusted: readonly unknown[] };
}

export function ownFunctionSpec(
  config: KrmObject,
): { container?: { image?: string; network?: boolean }; exec?: { path?: string; args?: string[] } } | undefined {
  const ann = config.metadata?.annotations ?? {};
  const raw = ann['config.kubernetes.io/function'] ?? ann['config.k8s.io/function'];
  if (!raw) return undefined;
  return (YAML.parse(raw) ?? undefined) as ReturnType<typeof ownFunctionSpec>;
}

function noResolver(config: KrmObject, opts: ProviderOptions): PackageError {
  if (opts.catalogs?.trusted.length) return new PackageError('catalogs reach krm only through a resolver (src/cli/fn-resolver.ts catalogResolver)');
  return new PackageError(
    `the function config ${String(config.kind)} (${String(config.apiVersion)}) names no image or exec, and no catalog is trusted to resolve it (use --trusted-catalog)`,
  );
}

/** Checks a config before anything runs (see FunctionResolver.check); configs with their own runtime need nothing. */
export function checkConfig(config: KrmObject, opts: ProviderOptions, source?: ConfigSource): void {
  if (ownFunctionSpec(config)?.container?.image) return;
  if (!opts.resolver) throw noResolver(config, opts);
  opts.resolver.check(config, source);
}

export async function providerForConfig(config: KrmObject, opts: ProviderOptions, source?: ConfigSource): Promise<FunctionProvider> {
  const own = ownFunctionSpec(config);
  if (own?.container?.image) return { kind: 'container', image: own.container.image, network: Boolean(own.container.network && opts.allowNetwork) };
  if (!opts.resolver) throw noResolver(config, opts);
  return opts.resolver.provider(config, source);
}
