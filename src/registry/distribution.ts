/**
 * Reads from a registry over the OCI distribution API, as an anonymous client: a request answered
 * 401 with a Bearer challenge is retried once with an anonymous token from the challenge's realm
 * (Docker Hub, ghcr.io and most registries give public repositories such tokens). Loopback registries
 * and the ones the operator calls insecure are spoken to over plain http, as dockerd does; all
 * others over https with the system CAs (plus $BERTH_CA_FILE).
 */
import { createHash } from 'node:crypto';
import { fetchUrl, FetchError, type FetchOptions, type FetchResult } from './http.js';

export function sha256Digest(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** `host[:port]` without the port; `[::1]` and `::1` both count as IPv6 loopback. */
export function isLoopbackRegistry(registry: string): boolean {
  const host = registry.startsWith('[') ? registry.slice(0, registry.indexOf(']') + 1) : registry.replace(/:\d+$/, '');
  return host === 'localhost' || /^127\./.test(host) || host === '[::1]' || host === '::1';
}

/** `http(s)://registry/v2`: http for loopback registries and for the ones named in `insecure` (`host[:port]`). */
export function registryBaseUrl(registry: string, insecure: readonly string[] = []): string {
  const plain = isLoopbackRegistry(registry) || insecure.includes(registry);
  return `${plain ? 'http' : 'https'}://${registry}/v2`;
}

export interface BearerChallenge {
  realm: string;
  service?: string;
  scope?: string;
}

/** Reads `Bearer realm="…",service="…",scope="…"`; undefined for other schemes (Basic needs credentials). */
export function parseBearerChallenge(header: string | undefined): BearerChallenge | undefined {
  if (!header || !/^bearer\s/i.test(header)) return undefined;
  const params: Record<string, string> = {};
  for (const m of header.slice(7).matchAll(/([a-zA-Z_]+)\s*=\s*(?:"([^"]*)"|([^,\s]*))/g)) params[m[1].toLowerCase()] = m[2] ?? m[3] ?? '';
  if (!params.realm) return undefined;
  return { realm: params.realm, service: params.service, scope: params.scope };
}

export interface RegistryOptions {
  /** `host[:port]` of registries spoken to over plain http (dockerd's --insecure-registry). */
  insecure?: readonly string[];
  /** Per request; the default suits a lookup that must not hold a client up. */
  timeoutMs?: number;
  /** Epoch ms after which no request starts and running ones give up (a bound on all of them together). */
  deadline?: number;
}

/** One registry repository, read anonymously; the token a challenge gave is kept for later requests. */
export class RepositoryReader {
  private token?: string;
  private readonly base: string;

  constructor(
    readonly registry: string,
    readonly repository: string,
    private readonly opts: RegistryOptions = {},
  ) {
    this.base = registryBaseUrl(registry, opts.insecure);
  }

  manifest(reference: string, accept: readonly string[]): Promise<FetchResult> {
    return this.get(`${this.base}/${this.repository}/manifests/${reference}`, { Accept: accept.join(', ') });
  }

  blob(digest: string): Promise<FetchResult> {
    return this.get(`${this.base}/${this.repository}/blobs/${digest}`, {});
  }

  private async get(url: string, headers: Record<string, string>): Promise<FetchResult> {
    const left = (this.opts.deadline ?? Infinity) - Date.now();
    if (left <= 0) throw new FetchError(`${this.registry}/${this.repository}: out of time`);
    const opts: FetchOptions = { timeoutMs: Math.min(this.opts.timeoutMs ?? 5000, left) };
    const withToken = (): Record<string, string> => (this.token ? { ...headers, Authorization: `Bearer ${this.token}` } : headers);
    const first = await fetchUrl(url, { ...opts, headers: withToken(), accept: [401] });
    if (first.status !== 401) return first;
    const challenge = parseBearerChallenge(header(first.headers['www-authenticate']));
    if (!challenge) throw this.needsCredentials(first);
    // A token given earlier may have expired: a fresh one is asked for once.
    this.token = await this.anonymousToken(challenge, opts);
    const second = await fetchUrl(url, { ...opts, headers: withToken(), accept: [401] });
    if (second.status === 401) throw this.needsCredentials(second);
    return second;
  }

  private needsCredentials(res: FetchResult): FetchError {
    const challenge = header(res.headers['www-authenticate']);
    return new FetchError(`${this.registry}/${this.repository} needs credentials (${challenge || 'answered 401'}); berth reads image configs anonymously`, 401);
  }

  private async anonymousToken(challenge: BearerChallenge, opts: FetchOptions): Promise<string> {
    const url = new URL(challenge.realm);
    if (challenge.service) url.searchParams.set('service', challenge.service);
    url.searchParams.set('scope', challenge.scope ?? `repository:${this.repository}:pull`);
    const res = await fetchUrl(url.href, opts);
    let token: string | undefined;
    try {
      const body = JSON.parse(res.body.toString('utf8')) as { token?: string; access_token?: string };
      token = body.token ?? body.access_token;
    } catch {
      /* reported below */
    }
    if (!token) throw new FetchError(`the token service ${url.origin}${url.pathname} gave no anonymous token for ${this.repository}`);
    return token;
  }
}

function header(v: string | string[] | undefined): string {
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
}
