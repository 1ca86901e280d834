/**
 * `berth catalog view`: what a user needs before trusting a catalog (its publisher, functions,
 * versions, providers) and, for a package, which catalog would run each function it needs.
 */
import type { Catalog } from './model.js';
import { describeProvider, resolveFunction } from './resolve.js';
import type { CatalogSet } from './trust.js';
import type { FunctionConfigSite } from './package-functions.js';

export function formatCatalog(c: Catalog, trusted: boolean): string {
  const lines = [
    `catalog ${c.name} (${trusted ? 'trusted' : 'NOT trusted'})`,
    `  source: ${c.ref}`,
    `  digest: ${c.digest}`,
    `  publisher: ${c.publisher ?? 'unknown'}`,
  ];
  for (const f of c.functions) {
    lines.push(`  ${f.group} ${f.names.kind}  (publisher ${f.publisher}) ${f.description}`);
    for (const v of f.versions) lines.push(`    ${f.group}/${v.name}${v.deprecated ? ' [deprecated]' : ''}: ${describeProvider(v)}`);
  }
  return `${lines.join('\n')}\n`;
}

export function formatView(set: CatalogSet, sites?: FunctionConfigSite[]): string {
  let out = '';
  for (const c of set.trusted) out += formatCatalog(c, true);
  for (const c of set.untrusted) out += formatCatalog(c, false);
  for (const u of set.unreadable) out += `catalog ${u.ref} (NOT trusted, unreadable): ${u.error}\n`;
  if (sites) {
    out += sites.length ? 'functions the package needs:\n' : 'the package needs no catalog function\n';
    for (const s of sites) {
      let how: string;
      try {
        const r = resolveFunction(s, set.trusted, set.untrusted);
        how = `catalog ${r.catalog.name}: ${describeProvider(r.version)}${r.warnings.length ? ` (warning: ${r.warnings.join('; ')})` : ''}`;
      } catch (err) {
        how = `UNRESOLVED: ${(err as Error).message}`;
      }
      out += `  ${s.file}: ${s.kind} ${s.apiVersion}${s.name ? ` ${s.name}` : ''} -> ${how}\n`;
    }
  }
  return out;
}
