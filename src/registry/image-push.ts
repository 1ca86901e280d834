/**
 * Puts images into one repository of a registry over the OCI distribution API, through berth's one
 * registry client (its tokens and the user's docker credentials): blobs the repository already has are
 * not sent again (HEAD), others are mounted from a repository that has them or uploaded as one
 * streamed PUT (POST for a location, then PUT ?digest=), and the manifest is put by its digest; a tag
 * only when the caller names one, since berth's own references never move. Deleting a manifest by
 * digest is what berth's garbage collection does with the images it pushed; it reads their tags (the
 * expiry each push recorded as one) and the digest a tag names to find them.
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { sha256Digest } from './distribution.js';
import { RegistryClient, type Access, type ClientOptions, type RegistryRequest } from './client.js';
import { registryErrorText, RegistryError } from './errors.js';
import type { FetchResult } from './http.js';
import { pagedNames } from './listing.js';
import type { AssembledImage, JsonBlob } from './oci-image.js';
import { DOCKER_MANIFEST, DOCKER_MANIFEST_LIST, OCI_INDEX, OCI_MANIFEST, type Descriptor } from './oci-media.js';

/** What became of a blob: already in the repository, mounted from another, or sent. */
export type BlobOutcome = 'present' | 'mounted' | 'uploaded';

export interface PushedImage {
  /** `registry/repository@sha256:…`: what a pod's image field names. */
  reference: string;
  digest: string;
  /** Per blob digest (layers and config). */
  blobs: Record<string, BlobOutcome>;
}

export interface ImagePushOptions {
  /** Also put the manifest under this tag (the digest reference stays the one to use). */
  tag?: string;
  /** A repository of the same registry to mount blobs from (a base image's layers). */
  mountFrom?: string;
}

const MANIFEST_TYPES = [OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_MANIFEST_LIST];

/** Statuses a push handles itself (besides 2xx), so each becomes a sentence naming what failed. */
const HANDLED = [400, 405, 409, 411, 413, 415, 416, 429, 500, 502, 503, 504];

export class ImagePusher {
  private readonly client: RegistryClient;

  constructor(
    readonly registry: string,
    readonly repository: string,
    opts: ClientOptions = {},
  ) {
    this.client = new RegistryClient(registry, opts);
  }

  /** `registry/repository@digest`. */
  referenceOf(digest: string): string {
    return `${this.registry}/${this.repository}@${digest}`;
  }

  async blobExists(digest: string): Promise<boolean> {
    const res = await this.send('pull,push', `check for blob ${digest}`, { method: 'HEAD', path: `${this.repository}/blobs/${digest}`, accept: [404] });
    return res.status !== 404;
  }

  async manifestExists(digest: string): Promise<boolean> {
    // Distribution answers 404 for an OCI manifest to a client that does not say it takes OCI.
    const res = await this.send('pull', `check for manifest ${digest}`, {
      method: 'HEAD',
      path: `${this.repository}/manifests/${digest}`,
      headers: { Accept: MANIFEST_TYPES.join(', ') },
      accept: [404],
    });
    return res.status !== 404;
  }

  /**
   * Makes sure the repository holds the blob: present already, mounted from `mountFrom`, or sent from
   * `content` (bytes, or the function that opens a stream of them). Without `content`, a blob that is
   * neither present nor mountable is an error.
   */
  async pushBlob(blob: Descriptor, content?: Buffer | (() => Readable), mountFrom?: string): Promise<BlobOutcome> {
    if (await this.blobExists(blob.digest)) return 'present';
    const what = `upload blob ${blob.digest}`;
    const uploads = `${this.repository}/blobs/uploads/`;
    const path = mountFrom ? `${uploads}?${new URLSearchParams({ mount: blob.digest, from: mountFrom })}` : uploads;
    const start = await this.send('pull,push', what, { method: 'POST', path, headers: { 'Content-Length': '0' } });
    if (start.status === 201) return 'mounted';
    if (!content)
      throw new RegistryError(
        `registry ${this.registry} has no blob ${blob.digest} in ${this.repository}${mountFrom ? ` or ${mountFrom}` : ''}, and berth holds no copy of it to upload: push the base image there first`,
        undefined,
        this.registry,
      );
    const location = start.headers.location;
    if (!location)
      throw new RegistryError(`registry ${this.registry} gave no upload location for ${this.repository} (to ${what})`, start.status, this.registry);
    const url = new URL(location, this.client.base);
    url.searchParams.set('digest', blob.digest);
    const done = await this.send('pull,push', what, {
      method: 'PUT',
      path: url.href,
      headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(blob.size) },
      body: content,
      label: `upload of blob ${blob.digest} to ${this.registry}/${this.repository}`,
    });
    this.checkDigest(done, blob.digest, what);
    return 'uploaded';
  }

  /** Puts the manifest under its digest (or under `tag`, when named) and returns the digest. */
  async pushManifest(manifest: JsonBlob, tag?: string): Promise<string> {
    const what = `put manifest ${manifest.digest}${tag ? ` as ${tag}` : ''}`;
    const res = await this.send('pull,push', what, {
      method: 'PUT',
      path: `${this.repository}/manifests/${tag ?? manifest.digest}`,
      headers: { 'Content-Type': manifest.mediaType },
      body: manifest.bytes,
    });
    this.checkDigest(res, manifest.digest, what);
    return manifest.digest;
  }

  /** The digest the manifest under `tag` has (Docker-Content-Digest, else its bytes'); undefined when there is no such tag. */
  async manifestDigest(tag: string): Promise<string | undefined> {
    const req = { path: `${this.repository}/manifests/${tag}`, headers: { Accept: MANIFEST_TYPES.join(', ') }, accept: [404] };
    const head = await this.send('pull', `read the digest of tag ${tag}`, { ...req, method: 'HEAD' });
    if (head.status === 404) return undefined;
    const digest = head.headers['docker-content-digest'];
    if (typeof digest === 'string' && digest) return digest;
    // The header is a SHOULD of the spec: a registry without it is asked for the bytes the digest is of.
    const res = await this.send('pull', `read the manifest of tag ${tag}`, req);
    return res.status === 404 ? undefined : sha256Digest(res.body);
  }

  /** The repository's tags, `pageSize` to a request; none for a repository the registry does not know. */
  async tags(pageSize = 1000): Promise<string[]> {
    const get = async (path: string): Promise<FetchResult | undefined> => {
      const res = await this.send('pull', 'list the tags', { path, accept: [404] });
      return res.status === 404 ? undefined : res;
    };
    return pagedNames(get, this.client.base, `${this.repository}/tags/list?${new URLSearchParams({ n: String(pageSize) })}`, 'tags');
  }

  /** Deletes the manifest of `digest`; false when the repository did not have it (already gone). */
  async deleteManifest(digest: string): Promise<boolean> {
    const res = await this.send('delete', `delete manifest ${digest}`, { method: 'DELETE', path: `${this.repository}/manifests/${digest}`, accept: [404] });
    return res.status !== 404;
  }

  /** Layers (from their files, or already there), config, then the manifest: nothing names a blob the repository lacks. */
  async pushImage(image: AssembledImage, opts: ImagePushOptions = {}): Promise<PushedImage> {
    const blobs: Record<string, BlobOutcome> = {};
    for (const layer of image.layers) {
      const file = layer.file;
      blobs[layer.descriptor.digest] = await this.pushBlob(layer.descriptor, file ? () => createReadStream(file) : undefined, opts.mountFrom);
    }
    const config = image.config.bytes;
    blobs[image.config.digest] = await this.pushBlob(image.config, config);
    const digest = await this.pushManifest(image.manifest, opts.tag);
    return { reference: this.referenceOf(digest), digest, blobs };
  }

  private async send(access: Access, what: string, req: RegistryRequest): Promise<FetchResult> {
    const res = await this.client.request(this.repository, access, { ...req, accept: [...(req.accept ?? []), ...HANDLED] });
    if (HANDLED.includes(res.status)) throw pushFailure(res, this.registry, this.repository, what);
    return res;
  }

  private checkDigest(res: FetchResult, digest: string, what: string): void {
    const stored = res.headers['docker-content-digest'];
    if (typeof stored === 'string' && stored !== digest)
      throw new RegistryError(
        `registry ${this.registry} stored ${stored} in ${this.repository} when asked to ${what}: it altered the content`,
        res.status,
        this.registry,
      );
  }
}

/** `registry R could not upload blob sha256:… to team/web (answered 400: DIGEST_INVALID: …): what to do`. */
export function pushFailure(res: FetchResult, registry: string, repository: string, what: string): RegistryError {
  const detail = registryErrorText(res.body, res.headers);
  const whereTo = `${what} ${what.startsWith('delete') ? 'from' : 'in'} ${repository}`;
  return new RegistryError(
    `registry ${registry} could not ${whereTo} (answered ${res.status}: ${detail})${adviceFor(res.status, what, detail)}`,
    res.status,
    registry,
  );
}

function adviceFor(status: number, what: string, detail: string): string {
  if (status === 405 && what.startsWith('delete')) return ': the registry does not allow deletes (for distribution, set storage.delete.enabled: true)';
  if (status === 405) return ': the registry is read-only (a mirror or a pull-through cache?); name one berth may push to';
  if (status === 413) return ': the registry, or a proxy in front of it, takes no blob this large; raise its body size limit';
  if (/DIGEST_INVALID|BLOB_UPLOAD_INVALID/.test(detail)) return ': the bytes sent do not match their digest (the file changed while it was sent); try again';
  if (status === 429 || status >= 500) return ': try again later';
  return '';
}
