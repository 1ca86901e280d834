/**
 * KEP-2906 resolution: a function config's group, version and kind are looked up in the trusted
 * catalogs in the order given, entries in order; the first match wins. Catalogs the user did not
 * trust are only consulted to say which catalog would have provided the function.
 */
import type { Catalog, FunctionDefinition, FunctionVersion } from './model.js';

export interface FunctionMatch {
  catalog: Catalog;
  definition: FunctionDefinition;
  version: FunctionVersion;
}

export interface Resolution extends FunctionMatch {
  /** Every trusted match in resolution order (the first is the one used); for --explain. */
  matches: FunctionMatch[];
  warnings: string[];
}

export class ResolveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResolveError';
  }
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function findMatches(catalogs: Catalog[], apiVersion: string, kind: string): FunctionMatch[] {
  const { group, version } = splitApiVersion(apiVersion);
  const out: FunctionMatch[] = [];
  for (const catalog of catalogs) {
    for (const definition of catalog.functions) {
      if (definition.group !== group || definition.names.kind !== kind) continue;
      const v = definition.versions.find((x) => x.name === version);
      if (v) out.push({ catalog, definition, version: v });
    }
  }
  return out;
}

export function resolveFunction(config: { apiVersion?: unknown; kind?: unknown }, trusted: Catalog[], untrusted: Catalog[] = []): Resolution {
  const apiVersion = typeof config.apiVersion === 'string' ? config.apiVersion : '';
  const kind = typeof config.kind === 'string' ? config.kind : '';
  if (!apiVersion || !kind) throw new ResolveError('the function config has no apiVersion/kind to resolve');
  const matches = findMatches(trusted, apiVersion, kind);
  if (!matches.length) {
    const elsewhere = findMatches(untrusted, apiVersion, kind);
    if (elsewhere.length) {
      const c = elsewhere[0].catalog;
      throw new ResolveError(
        `${kind} (${apiVersion}) is provided only by catalog ${c.name} (${c.ref}), which is not trusted: pass --trusted-catalog ${c.ref} (or add it to trustedCatalogs in berth's config file) if you trust its publisher${c.publisher ? ` ${c.publisher}` : ''}`,
      );
    }
    const searched = trusted.length ? `searched ${trusted.map((c) => c.name).join(', ')}` : 'no catalog is trusted (use --trusted-catalog)';
    const sameKind = trusted.flatMap((c) =>
      c.functions.filter((f) => f.names.kind === kind).map((f) => `${f.group}/{${f.versions.map((v) => v.name).join(',')}} in ${c.name}`),
    );
    throw new ResolveError(
      `unknown function kind ${kind} (${apiVersion}): no trusted catalog provides it; ${searched}${sameKind.length ? `; known: ${sameKind.join('; ')}` : ''}`,
    );
  }
  const first = matches[0];
  const warnings: string[] = [];
  if (first.version.deprecated) {
    const newer = first.definition.versions.filter((v) => !v.deprecated).map((v) => v.name);
    warnings.push(
      first.version.deprecationWarning ??
        `${kind} ${apiVersion} is deprecated in catalog ${first.catalog.name}${newer.length ? `; use ${newer.map((n) => `${first.definition.group}/${n}`).join(' or ')}` : ''}`,
    );
  }
  return { ...first, matches, warnings };
}

/** One line per match, the chosen one first: what `--explain` prints. */
export function explainResolution(r: Resolution, apiVersion: string, kind: string): string {
  const lines = r.matches.map(
    (m, i) => `  ${i === 0 ? '*' : ' '} ${m.catalog.name} (${m.catalog.ref}): ${describeProvider(m.version)}${m.version.deprecated ? ' [deprecated]' : ''}`,
  );
  return `${kind} ${apiVersion}: ${r.matches.length} match(es), first wins\n${lines.join('\n')}\n`;
}

export function describeProvider(v: FunctionVersion): string {
  const parts: string[] = [];
  if (v.runtime.container)
    parts.push(`container ${v.runtime.container.image}${v.runtime.container.sha256 ? `@${normalizeSha(v.runtime.container.sha256)}` : ''}`);
  if (v.runtime.exec) parts.push(`exec ${v.runtime.exec.platforms.map((p) => `${p.os}/${p.arch}`).join(',')}`);
  return parts.join(' | ');
}

export function normalizeSha(s: string): string {
  return s.startsWith('sha256:') ? s : `sha256:${s}`;
}
