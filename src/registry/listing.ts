/**
 * Names a registry lists page by page, as the distribution spec pages them: its catalog of repositories and a
 * repository's tags. `?n=` asks for a page; the `Link: <…?n=…&last=…>; rel="next"` header names the next one, and a
 * page without it is the last (a registry may return fewer than n names on any page, so a short page proves nothing).
 */
import { RegistryClient, type ClientOptions } from './client.js';
import { registryErrorText, RegistryError } from './errors.js';
import type { FetchResult } from './http.js';

/** Pages that a registry would serve without end (a Link back to a page already read) stop here. */
const MAX_PAGES = 10_000;

/**
 * Every name under `key` of the pages from `first` on. `get` sends one request: a path after `/v2/` or an absolute
 * URL (the Link, resolved against `base`); it answers undefined for a list that does not exist (no names).
 */
export async function pagedNames(
  get: (path: string) => Promise<FetchResult | undefined>,
  base: string,
  first: string,
  key: 'repositories' | 'tags',
): Promise<string[]> {
  const names: string[] = [];
  const seen = new Set<string>();
  for (let path: string | undefined = first; path;) {
    if (seen.has(path) || seen.size >= MAX_PAGES) throw new RegistryError(`${base}: the ${key} list pages without end (at ${path})`);
    seen.add(path);
    const res = await get(path);
    if (!res) break;
    const page = JSON.parse(res.body.toString('utf8') || '{}') as Record<string, unknown>;
    const found = page[key];
    if (found !== null && found !== undefined && !Array.isArray(found)) throw new RegistryError(`${base}: the ${key} list is not a list of names`);
    names.push(...((found ?? []) as unknown[]).filter((n): n is string => typeof n === 'string'));
    const next = nextLink(res.headers.link);
    path = next === undefined ? undefined : new URL(next, base).href;
  }
  return names;
}

/** The target of `rel="next"` in a Link header (RFC 8288: `<url>; rel="next"`, rel a list of words), or undefined. */
export function nextLink(header: string | string[] | undefined): string | undefined {
  for (const link of [header ?? []]
    .flat()
    .join(',')
    .split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>(.*)$/s.exec(link);
    const rel = m && /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;]*))/i.exec(m[2]);
    if (m && rel && (rel[1] ?? rel[2]).toLowerCase().split(/\s+/).includes('next')) return m[1];
  }
  return undefined;
}

/** Every repository in the registry's catalog, `pageSize` to a request. */
export async function catalogRepositories(registry: string, opts: ClientOptions & { pageSize?: number } = {}): Promise<string[]> {
  const client = new RegistryClient(registry, opts);
  const first = `_catalog?${new URLSearchParams({ n: String(opts.pageSize ?? 1000) })}`;
  const get = async (path: string): Promise<FetchResult> => {
    const res = await client.requestCatalog({ path, accept: [404] });
    // The catalog is optional in the spec: a 404 says the registry has none, not that a name is wrong.
    if (res.status === 404)
      throw new RegistryError(
        `registry ${registry} has no catalog (GET /v2/_catalog answered 404: ${registryErrorText(res.body, res.headers)})`,
        404,
        registry,
      );
    return res;
  };
  return pagedNames(get, client.base, first, 'repositories');
}
