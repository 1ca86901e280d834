/**
 * Reads one repository of a registry over the OCI distribution API (manifests and blobs) through
 * berth's registry client, so image configs are read with the same tokens and docker credentials as
 * catalogs and exec providers. The per-request timeout defaults to 5 s: a lookup must not hold a
 * client up.
 */
import { createHash } from 'node:crypto';
import { RegistryClient, type ClientOptions } from './client.js';
import type { FetchResult } from './http.js';

export { isLoopbackRegistry, parseBearerChallenge, registryBaseUrl } from './client.js';
export type { BearerChallenge } from './token.js';

export function sha256Digest(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

export type RegistryOptions = ClientOptions;

export class RepositoryReader {
  private readonly client: RegistryClient;

  constructor(
    readonly registry: string,
    readonly repository: string,
    opts: RegistryOptions = {},
  ) {
    this.client = new RegistryClient(registry, { ...opts, timeoutMs: opts.timeoutMs ?? 5000 });
  }

  manifest(reference: string, accept: readonly string[]): Promise<FetchResult> {
    return this.client.request(this.repository, 'pull', { path: `${this.repository}/manifests/${reference}`, headers: { Accept: accept.join(', ') } });
  }

  blob(digest: string): Promise<FetchResult> {
    return this.client.request(this.repository, 'pull', { path: `${this.repository}/blobs/${digest}` });
  }
}
