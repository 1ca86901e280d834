/**
 * The distribution token flow (distribution/docs/spec/auth/token.md): a registry that answers 401 with
 * `Bearer realm=…,service=…,scope=…` is asked again with a token from its realm. The token request
 * carries the user's credentials when there are any: Basic for a username and password (a GET, as the
 * docker CLI does), the OAuth2 refresh-token grant for an identity token (a POST). Tokens are kept per
 * registry, scope and account until shortly before they expire (`expires_in`, 60 s when not given).
 */
import { fetchUrl, type FetchOptions } from './http.js';
import type { RegistryCredentials } from './credentials.js';
import { refusal, registryErrorText, RegistryError } from './errors.js';

export interface BearerChallenge {
  realm: string;
  service?: string;
  scope?: string;
}

interface CachedToken {
  token: string;
  expiresAt: number;
}

const tokens = new Map<string, CachedToken>();
/** The spec's default and minimum lifetime. */
const DEFAULT_EXPIRES_SECONDS = 60;
/** A token this close to its expiry is not used: the request it goes with may take a while. */
const EXPIRY_MARGIN_MS = 5_000;

function cacheKey(registry: string, scope: string, creds: RegistryCredentials | undefined): string {
  return [registry, scope, creds?.source ?? '', creds?.username ?? creds?.identityToken?.slice(0, 8) ?? ''].join('\n');
}

export function cachedToken(registry: string, scope: string, creds: RegistryCredentials | undefined, now = Date.now()): string | undefined {
  const hit = tokens.get(cacheKey(registry, scope, creds));
  return hit && hit.expiresAt - EXPIRY_MARGIN_MS > now ? hit.token : undefined;
}

/** Forgets every cached token (tests; a process that changed accounts). */
export function clearTokenCache(): void {
  tokens.clear();
}

/** Asks the challenge's realm for a token for `scope` and caches it. */
export async function requestToken(
  registry: string,
  challenge: BearerChallenge,
  scope: string,
  creds: RegistryCredentials | undefined,
  opts: FetchOptions,
): Promise<string> {
  const url = new URL(challenge.realm);
  const params = new URLSearchParams();
  if (challenge.service) params.set('service', challenge.service);
  params.set('scope', scope);
  let request: FetchOptions;
  if (creds?.identityToken) {
    params.set('grant_type', 'refresh_token');
    params.set('refresh_token', creds.identityToken);
    params.set('client_id', 'berth');
    const body = params.toString();
    request = {
      ...opts,
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(Buffer.byteLength(body)) },
      body,
    };
  } else {
    for (const [k, v] of params) url.searchParams.set(k, v);
    const headers: Record<string, string> = {};
    if (creds?.username) headers.Authorization = `Basic ${Buffer.from(`${creds.username}:${creds.password ?? ''}`).toString('base64')}`;
    request = { ...opts, headers };
  }
  const what = `get a token for ${scope} from ${url.origin}${url.pathname}`;
  const res = await fetchUrl(url.href, { ...request, label: `token service of ${registry}: ${request.method ?? 'GET'}`, accept: [401, 403] });
  if (res.status === 401 || res.status === 403)
    throw refusal(res.status, registryErrorText(res.body, res.headers), { registry, what, credentialSource: creds?.source });
  let body: { token?: string; access_token?: string; expires_in?: number; issued_at?: string };
  try {
    body = JSON.parse(res.body.toString('utf8')) as typeof body;
  } catch {
    throw new RegistryError(`the token service of ${registry} (${url.origin}${url.pathname}) did not answer JSON`, undefined, registry);
  }
  const token = body.token ?? body.access_token;
  if (!token) throw new RegistryError(`the token service of ${registry} (${url.origin}${url.pathname}) gave no token for ${scope}`, undefined, registry);
  const issued = body.issued_at ? Date.parse(body.issued_at) : NaN;
  const start = Number.isFinite(issued) ? Math.min(issued, Date.now()) : Date.now();
  const seconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_EXPIRES_SECONDS;
  tokens.set(cacheKey(registry, scope, creds), { token, expiresAt: start + seconds * 1000 });
  return token;
}
