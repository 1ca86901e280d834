/**
 * The one client berth speaks to registries with (catalog artifacts, exec provider blobs, image
 * configs). A request is first sent with what is already known (a cached token for its scope, or Basic
 * credentials for a registry that asked for them); a 401 is answered once, as its challenge asks:
 * Bearer → a token from the realm (anonymous, or with the user's docker credentials), Basic → the
 * user's docker credentials. A refusal (401, 403, 404) becomes a sentence naming the registry, the
 * registry's own error and what to do (`docker login REGISTRY`). Loopback registries and the ones
 * named insecure are spoken to over http, all others over https.
 */
import { findCredentials, type RegistryCredentials } from './credentials.js';
import { refusal, registryErrorText, RegistryError } from './errors.js';
import { fetchUrl, FetchError, type FetchOptions, type FetchResult } from './http.js';
import { cachedToken, requestToken, type BearerChallenge } from './token.js';

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

/** Reads `Bearer realm="…",service="…",scope="…"`; undefined for other schemes. */
export function parseBearerChallenge(header: string | undefined): BearerChallenge | undefined {
  if (!header || !/^bearer\s/i.test(header)) return undefined;
  const params: Record<string, string> = {};
  for (const m of header.slice(7).matchAll(/([a-zA-Z_]+)\s*=\s*(?:"([^"]*)"|([^,\s]*))/g)) params[m[1].toLowerCase()] = m[2] ?? m[3] ?? '';
  if (!params.realm) return undefined;
  return { realm: params.realm, service: params.service, scope: params.scope };
}

/** The actions of a token scope: `delete` is what distribution asks of a manifest DELETE. */
export type Access = 'pull' | 'pull,push' | 'delete';

/** `pull team/web`, `push to team/web`, `delete from team/web`: what was refused. */
function accessWords(access: Access, repository: string): string {
  return `${{ pull: 'pull', 'pull,push': 'push to', delete: 'delete from' }[access]} ${repository}`;
}

export interface ClientOptions {
  /** `host[:port]` of registries spoken to over plain http (dockerd's --insecure-registry). */
  insecure?: readonly string[];
  /** Per request (each hop); none by default, the connect/idle timeout still applies. */
  timeoutMs?: number;
  /** Epoch ms after which no request starts (a bound on all requests of one lookup together). */
  deadline?: number;
  /** Extra CA certificates (PEM) for https registries. */
  caFile?: string;
  /** Where docker config and credential helpers are looked up (DOCKER_CONFIG, HOME, PATH). */
  env?: NodeJS.ProcessEnv;
}

export interface RegistryRequest {
  method?: string;
  /** After `/v2/` (`team/web/manifests/1`), or an absolute URL the registry gave (an upload location). */
  path: string;
  headers?: Record<string, string>;
  /** A stream as the function that opens it (a request answered 401 is sent again, from the start). */
  body?: FetchOptions['body'];
  /** Statuses the caller handles itself besides 2xx (e.g. 404 for "not there yet"). */
  accept?: number[];
  /** What is fetched, for timeout messages. */
  label?: string;
  onProgress?: FetchOptions['onProgress'];
}

const REFUSED = [401, 403, 404];

export class RegistryClient {
  readonly base: string;
  /** undefined: not looked up yet; null: the user has none for this registry. */
  private creds?: RegistryCredentials | null;
  /** Set once the registry asked for Basic: sent with every later request. */
  private basic?: string;

  constructor(
    readonly registry: string,
    private readonly opts: ClientOptions = {},
  ) {
    // `oci://docker.io/...` names Docker Hub, whose API lives on registry-1.docker.io (as the docker CLI maps it).
    this.base = registryBaseUrl(registry === 'docker.io' || registry === 'index.docker.io' ? 'registry-1.docker.io' : registry, opts.insecure);
  }

  async request(repository: string, access: Access, req: RegistryRequest): Promise<FetchResult> {
    const missing = `find ${objectOf(req.path)} in ${repository}`;
    return this.scoped(`repository:${repository}:${access}`, { refused: accessWords(access, repository), missing }, req);
  }

  /** A request of the registry's catalog (`/v2/_catalog`), which distribution's tokens grant as `registry:catalog:*`. */
  requestCatalog(req: RegistryRequest): Promise<FetchResult> {
    const what = 'list its repositories (the catalog)';
    return this.scoped('registry:catalog:*', { refused: what, missing: what }, req);
  }

  /** `refused` and `missing`: what a 401/403 and a 404 refused, in the sentence that names it. */
  private async scoped(scope: string, words: { refused: string; missing: string }, req: RegistryRequest): Promise<FetchResult> {
    const url = /^https?:\/\//.test(req.path) ? req.path : `${this.base}/${req.path}`;
    const sameOrigin = new URL(url).origin === new URL(this.base).origin;
    const known = sameOrigin ? (this.basic ?? this.cachedBearer(scope)) : undefined;
    let res = await this.send(url, req, known);
    if (res.status === 401 && sameOrigin) {
      const answer = await this.answer(res, scope, words.refused, known);
      res = await this.send(url, req, answer.authorization);
      // A cached token that was refused (revoked early): once more with a fresh one.
      if (res.status === 401 && answer.cached)
        res = await this.send(url, req, (await this.answer(res, scope, words.refused, answer.authorization)).authorization);
    }
    if (REFUSED.includes(res.status) && !req.accept?.includes(res.status)) {
      const what = res.status === 404 ? words.missing : words.refused;
      throw refusal(res.status, registryErrorText(res.body, res.headers), { registry: this.registry, what, credentialSource: this.creds?.source });
    }
    return res;
  }

  private fetchOptions(): FetchOptions {
    const left = (this.opts.deadline ?? Infinity) - Date.now();
    if (left <= 0) throw new FetchError(`${this.registry}: out of time`);
    const timeoutMs = Math.min(this.opts.timeoutMs ?? Infinity, left);
    return { caFile: this.opts.caFile, ...(Number.isFinite(timeoutMs) ? { timeoutMs } : {}) };
  }

  private send(url: string, req: RegistryRequest, authorization: string | undefined): Promise<FetchResult> {
    const headers = { ...req.headers, ...(authorization ? { Authorization: authorization } : {}) };
    return fetchUrl(url, {
      ...this.fetchOptions(),
      method: req.method,
      headers,
      body: req.body,
      label: req.label,
      onProgress: req.onProgress,
      accept: [...REFUSED, ...(req.accept ?? [])],
    });
  }

  private credentials(): RegistryCredentials | undefined {
    if (this.creds === undefined) this.creds = findCredentials(this.registry, this.opts.env) ?? null;
    return this.creds ?? undefined;
  }

  /** Credentials are looked up only once a registry asked for them; before that, only anonymous tokens count. */
  private cachedBearer(scope: string): string | undefined {
    const token = cachedToken(this.registry, scope, this.creds ?? undefined);
    return token ? `Bearer ${token}` : undefined;
  }

  /** The Authorization a 401's challenge asks for. */
  private async answer(res: FetchResult, scope: string, what: string, sent: string | undefined): Promise<{ authorization: string; cached?: boolean }> {
    const header = [res.headers['www-authenticate']].flat().filter(Boolean).join(', ');
    const creds = this.credentials();
    const bearer = parseBearerChallenge(header);
    if (bearer) {
      if (creds?.registryToken) return { authorization: `Bearer ${creds.registryToken}` };
      // A token an earlier client got with these credentials serves, unless it is the one just refused.
      const cached = this.cachedBearer(scope);
      if (cached && cached !== sent) return { authorization: cached, cached: true };
      return { authorization: `Bearer ${await requestToken(this.registry, bearer, scope, creds, this.fetchOptions())}` };
    }
    if (/^basic\b/i.test(header)) {
      if (!creds?.username) throw refusal(401, registryErrorText(res.body, res.headers), { registry: this.registry, what, credentialSource: creds?.source });
      this.basic = `Basic ${Buffer.from(`${creds.username}:${creds.password ?? ''}`).toString('base64')}`;
      return { authorization: this.basic };
    }
    throw new RegistryError(
      `registry ${this.registry} refused to ${what} (answered 401 with ${header ? `the challenge ${header}` : 'no challenge'}, which berth cannot answer)`,
      401,
      this.registry,
    );
  }
}

/** `manifest 1`, `blob sha256:…` or the path: what a 404 could not find. */
function objectOf(p: string): string {
  const m = /\/(manifests|blobs)\/([^/?]+)$/.exec(p);
  return m ? `${m[1] === 'manifests' ? 'manifest' : 'blob'} ${m[2]}` : p;
}
