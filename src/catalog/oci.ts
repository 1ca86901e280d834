/**
 * The few OCI distribution requests a catalog needs: pull a manifest and its catalog layer, and push
 * one (blob uploads + manifest PUT). Registries on a loopback address are spoken to over plain http,
 * as docker and oras do for localhost; all others over https. Anonymous access only.
 */
import { fetchUrl, FetchError, type FetchOptions } from '../registry/http.js';
import { registryBaseUrl, sha256Digest } from '../registry/distribution.js';

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
export async function pullCatalogArtifact(ref: OciRef, opts: FetchOptions = {}): Promise<{ manifestDigest: string; layer: Buffer }> {
  const base = registryBaseUrl(ref.registry);
  const reference = ref.digest ?? ref.tag ?? 'latest';
  const res = await fetchUrl(`${base}/${ref.repository}/manifests/${reference}`, { ...opts, label: `catalog source ${describe(ref)}: manifest`, headers: { Accept: MANIFEST_MEDIA_TYPE } });
  const manifestDigest = sha256Digest(res.body);
  if (ref.digest && manifestDigest !== ref.digest) throw new FetchError(`manifest of ${describe(ref)} has digest ${manifestDigest}, not the pinned ${ref.digest}: refusing it`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(res.body.toString('utf8')) as Manifest;
  } catch {
    throw new FetchError(`manifest of ${describe(ref)} is not JSON`);
  }
  const layer = manifest.layers?.find((l) => l.mediaType === CATALOG_MEDIA_TYPE || l.mediaType === DEFINITION_MEDIA_TYPE);
  if (!layer) throw new FetchError(`${describe(ref)} holds no layer of media type ${CATALOG_MEDIA_TYPE} or ${DEFINITION_MEDIA_TYPE}`);
  const blob = await fetchUrl(`${base}/${ref.repository}/blobs/${layer.digest}`, { ...opts, label: `catalog source ${describe(ref)}: layer` });
  if (sha256Digest(blob.body) !== layer.digest) throw new FetchError(`catalog layer of ${describe(ref)} does not match its digest ${layer.digest}`);
  return { manifestDigest, layer: blob.body };
}

/** Pushes `content` as a catalog artifact and returns the manifest digest to pin. */
export async function pushCatalogArtifact(ref: OciRef, content: Buffer, opts: FetchOptions = {}): Promise<string> {
  const base = registryBaseUrl(ref.registry);
  const config = Buffer.from('{}');
  await pushBlob(base, ref.repository, config, opts);
  await pushBlob(base, ref.repository, content, opts);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MANIFEST_MEDIA_TYPE,
      artifactType: CATALOG_MEDIA_TYPE,
      config: { mediaType: EMPTY_CONFIG_MEDIA_TYPE, digest: sha256Digest(config), size: config.length },
      layers: [{ mediaType: CATALOG_MEDIA_TYPE, digest: sha256Digest(content), size: content.length }],
    }),
  );
  await fetchUrl(`${base}/${ref.repository}/manifests/${ref.tag ?? 'latest'}`, { ...opts, method: 'PUT', headers: { 'Content-Type': MANIFEST_MEDIA_TYPE }, body: manifest });
  return sha256Digest(manifest);
}

async function pushBlob(base: string, repository: string, data: Buffer, opts: FetchOptions): Promise<void> {
  const digest = sha256Digest(data);
  const start = await fetchUrl(`${base}/${repository}/blobs/uploads/`, { ...opts, method: 'POST', headers: { 'Content-Length': '0' } });
  const location = start.headers.location;
  if (!location) throw new FetchError(`registry gave no upload location for ${repository}`);
  const url = new URL(location, base);
  url.searchParams.set('digest', digest);
  await fetchUrl(url.href, { ...opts, method: 'PUT', headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(data.length) }, body: data });
}

function describe(ref: OciRef): string {
  return `oci://${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}
