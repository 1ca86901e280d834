/**
 * The few OCI distribution requests a catalog needs: pull a manifest and its catalog layer, and push
 * one (blob uploads + manifest PUT). Registries on a loopback address are spoken to over plain http,
 * as docker and oras do for localhost; all others over https. Tokens and the user's docker credentials
 * are handled by the registry client (src/registry/client.ts).
 */
import { RegistryClient, type ClientOptions, type RegistryRequest } from '../registry/client.js';
import { sha256Digest } from '../registry/distribution.js';
import { FetchError } from '../registry/http.js';
import { withProgress } from '../registry/progress.js';

export { sha256Digest };

export const CATALOG_MEDIA_TYPE = 'application/vnd.cncf.kubernetes.krm-func-catalog.layer.v1+yaml';
export const DEFINITION_MEDIA_TYPE = 'application/vnd.cncf.kubernetes.krm-func-definition.layer.v1+yaml';
export const MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
export const EMPTY_CONFIG_MEDIA_TYPE = 'application/vnd.oci.empty.v1+json';

export interface OciRef {
  registry: string;
  repository: string;
  tag?: string;
  digest?: string;
}

/** `oci://host[:port]/repo/path[:tag][@sha256:hex]` (the `oci://` prefix is required). */
export function parseOciRef(ref: string): OciRef {
  const m = /^oci:\/\/([^/]+)\/([a-z0-9]+(?:[._/-][a-z0-9]+)*)(?::([\w][\w.-]{0,127}))?(?:@(sha256:[0-9a-f]{64}))?$/.exec(ref);
  if (!m) throw new FetchError(`${ref} is not an OCI reference (oci://host[:port]/repository[:tag][@sha256:<64 hex>])`);
  return { registry: m[1], repository: m[2], tag: m[3], digest: m[4] };
}

interface Manifest {
  mediaType?: string;
  artifactType?: string;
  layers?: Array<{ mediaType: string; digest: string; size: number }>;
}

/** Fetches the catalog layer of an artifact; both the manifest and the layer are checked against their digests. */
export async function pullCatalogArtifact(ref: OciRef, opts: ClientOptions = {}): Promise<{ manifestDigest: string; layer: Buffer }> {
  const client = new RegistryClient(ref.registry, opts);
  const reference = ref.digest ?? ref.tag ?? 'latest';
  const res = await client.request(ref.repository, 'pull', {
    path: `${ref.repository}/manifests/${reference}`,
    label: `catalog source ${describe(ref)}: manifest`,
    headers: { Accept: MANIFEST_MEDIA_TYPE },
  });
  const manifestDigest = sha256Digest(res.body);
  if (ref.digest && manifestDigest !== ref.digest)
    throw new FetchError(`manifest of ${describe(ref)} has digest ${manifestDigest}, not the pinned ${ref.digest}: refusing it`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(res.body.toString('utf8')) as Manifest;
  } catch {
    throw new FetchError(`manifest of ${describe(ref)} is not JSON`);
  }
  const layer = manifest.layers?.find((l) => l.mediaType === CATALOG_MEDIA_TYPE || l.mediaType === DEFINITION_MEDIA_TYPE);
  if (!layer) throw new FetchError(`${describe(ref)} holds no layer of media type ${CATALOG_MEDIA_TYPE} or ${DEFINITION_MEDIA_TYPE}`);
  const blob = await withProgress(`catalog ${describe(ref)}`, (onProgress) =>
    client.request(ref.repository, 'pull', { path: `${ref.repository}/blobs/${layer.digest}`, label: `catalog source ${describe(ref)}: layer`, onProgress }),
  );
  if (sha256Digest(blob.body) !== layer.digest) throw new FetchError(`catalog layer of ${describe(ref)} does not match its digest ${layer.digest}`);
  return { manifestDigest, layer: blob.body };
}

/** `oci://registry/repository@sha256:<hex>`: one blob (an exec provider), checked against its digest. */
export async function pullBlob(ref: OciRef, opts: ClientOptions & { label?: string; onProgress?: RegistryRequest['onProgress'] } = {}): Promise<Buffer> {
  if (!ref.digest || ref.tag)
    throw new FetchError(`${describe(ref)}: an exec provider in a registry is named by its blob digest, oci://host/repository@sha256:<hex>`);
  const client = new RegistryClient(ref.registry, opts);
  const res = await client.request(ref.repository, 'pull', { path: `${ref.repository}/blobs/${ref.digest}`, label: opts.label, onProgress: opts.onProgress });
  if (sha256Digest(res.body) !== ref.digest) throw new FetchError(`blob ${describe(ref)} does not match its digest`);
  return res.body;
}

/** Pushes `content` as a catalog artifact and returns the manifest digest to pin. */
export async function pushCatalogArtifact(ref: OciRef, content: Buffer, opts: ClientOptions = {}): Promise<string> {
  const client = new RegistryClient(ref.registry, opts);
  const config = Buffer.from('{}');
  await pushBlob(client, ref.repository, config);
  await pushBlob(client, ref.repository, content);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MANIFEST_MEDIA_TYPE,
      artifactType: CATALOG_MEDIA_TYPE,
      config: { mediaType: EMPTY_CONFIG_MEDIA_TYPE, digest: sha256Digest(config), size: config.length },
      layers: [{ mediaType: CATALOG_MEDIA_TYPE, digest: sha256Digest(content), size: content.length }],
    }),
  );
  await client.request(ref.repository, 'pull,push', {
    method: 'PUT',
    path: `${ref.repository}/manifests/${ref.tag ?? 'latest'}`,
    headers: { 'Content-Type': MANIFEST_MEDIA_TYPE },
    body: manifest,
  });
  return sha256Digest(manifest);
}

/** A monolithic upload (POST, then PUT with the digest); a blob the repository already has is not sent again. */
export async function pushBlob(client: RegistryClient, repository: string, data: Buffer): Promise<void> {
  const digest = sha256Digest(data);
  const head = await client.request(repository, 'pull,push', { method: 'HEAD', path: `${repository}/blobs/${digest}`, accept: [404] });
  if (head.status === 200) return;
  const start = await client.request(repository, 'pull,push', { method: 'POST', path: `${repository}/blobs/uploads/`, headers: { 'Content-Length': '0' } });
  const location = start.headers.location;
  if (!location) throw new FetchError(`registry ${client.registry} gave no upload location for ${repository}`);
  const url = new URL(location, client.base);
  url.searchParams.set('digest', digest);
  await client.request(repository, 'pull,push', {
    method: 'PUT',
    path: url.href,
    headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(data.length) },
    body: data,
  });
}

export function describe(ref: OciRef): string {
  return `oci://${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}
