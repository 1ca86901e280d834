/**
 * Which catalogs a run uses. Trust comes only from `--trusted-catalog` flags and `trustedCatalogs` in
 * berth's config file (BERTH_CONFIG, else $XDG_CONFIG_HOME/berth/config.yaml); catalogs a package merely
 * names (annotation `berth.dev/catalogs` on its Kptfile or kustomization) are known, never trusted.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import type { Catalog } from './model.js';
import { loadCatalog, type SourceOptions } from './source.js';

export const PACKAGE_CATALOGS_ANNOTATION = 'berth.dev/catalogs';

export interface CatalogSet {
  trusted: Catalog[];
  untrusted: Catalog[];
  /** Package-named catalogs that could not be read: they matter only if a function needs them. */
  unreadable: Array<{ ref: string; error: string }>;
}

export function configuredTrustedCatalogs(env: NodeJS.ProcessEnv = process.env): string[] {
  const file = env.BERTH_CONFIG || path.join(env.XDG_CONFIG_HOME || path.join(env.HOME ?? os.homedir(), '.config'), 'berth', 'config.yaml');
  if (!existsSync(file)) return [];
  const doc = YAML.parse(readFileSync(file, 'utf8')) as { trustedCatalogs?: unknown } | null;
  const list = doc?.trustedCatalogs;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list) || list.some((x) => typeof x !== 'string')) throw new Error(`trustedCatalogs in ${file} must be a list of catalog references`);
  return list as string[];
}

/** Catalog references a package names in the annotation of its Kptfile or kustomization. */
export function packageCatalogRefs(dir: string): string[] {
  const refs: string[] = [];
  for (const name of ['Kptfile', 'kustomization.yaml', 'kustomization.yml', 'Kustomization']) {
    const file = path.join(dir, name);
    if (!existsSync(file)) continue;
    const doc = YAML.parse(readFileSync(file, 'utf8')) as { metadata?: { annotations?: Record<string, string> } } | null;
    const value = doc?.metadata?.annotations?.[PACKAGE_CATALOGS_ANNOTATION];
    if (value) refs.push(...value.split(/[\s,]+/).filter(Boolean));
  }
  return refs;
}

export interface LoadCatalogsOptions extends SourceOptions {
  trustedRefs: string[];
  otherRefs?: string[];
}

/** Loads trusted catalogs (any failure is fatal) and the others (failures remembered). */
export async function loadCatalogSet(opts: LoadCatalogsOptions): Promise<CatalogSet> {
  const trusted: Catalog[] = [];
  for (const ref of opts.trustedRefs) trusted.push(await loadCatalog(ref, opts));
  const untrusted: Catalog[] = [];
  const unreadable: CatalogSet['unreadable'] = [];
  for (const ref of opts.otherRefs ?? []) {
    if (opts.trustedRefs.includes(ref)) continue;
    try {
      untrusted.push(await loadCatalog(ref, opts));
    } catch (err) {
      unreadable.push({ ref, error: (err as Error).message });
    }
  }
  return { trusted, untrusted, unreadable };
}
