/**
 * `catalog annotate` writes a provider only for configs that would run: every function config of the
 * package is resolved and checked against its catalog entry's openAPIV3Schema first, so a wrong config
 * is refused with its file, line and column before anything is written or downloaded.
 */
import path from 'node:path';
import { checkFunctionConfig } from './config-schema.js';
import { findFunctionConfigs } from './package-functions.js';
import { findMatches, resolveFunction } from './resolve.js';
import type { Catalog } from './model.js';
import type { CatalogSet } from './trust.js';

export function checkPackageConfigs(dir: string, catalogs: CatalogSet): void {
  const { sites, files } = findFunctionConfigs(dir);
  for (const site of sites) {
    const rel = site.target.type === 'pipeline' ? path.posix.normalize(String(site.target.entry.get('configPath'))) : site.file;
    const index = site.target.type === 'pipeline' ? 0 : site.target.docIndex;
    const file = files.get(rel);
    const doc = file?.docs[index];
    if (!file || !doc) continue;
    const config = doc.toJS() as Record<string, unknown>;
    checkFunctionConfig(config, resolveFunction(config, catalogs.trusted, catalogs.untrusted), { file: path.join(dir, rel), text: file.text, index });
  }
}

/**
 * Kinds (group, version, kind) that several catalogs provide, and which one wins when they are
 * trusted in the order given (KEP-2906: first match wins): one sentence each, for `catalog validate`.
 */
export function duplicateKindWarnings(catalogs: Catalog[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const c of catalogs) {
    for (const f of c.functions) {
      for (const v of f.versions) {
        const key = `${f.group}/${v.name} ${f.names.kind}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const owners = [...new Set(findMatches(catalogs, `${f.group}/${v.name}`, f.names.kind).map((m) => m.catalog))];
        if (owners.length < 2) continue;
        const named = owners.map((o) => `${o.ref} (catalog ${o.name})`);
        out.push(`warning: ${f.names.kind} ${f.group}/${v.name} is provided by ${named.join(' and ')}: trusted in this order, ${named[0]} wins`);
      }
    }
  }
  return out;
}
