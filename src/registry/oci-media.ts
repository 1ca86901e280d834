/**
 * The media types and descriptors of OCI images (image-spec v1.1), and the Docker schema2 names of the
 * same bytes: a Docker layer or config is read as its OCI twin, so images berth makes are OCI
 * throughout whatever their base was made with.
 */

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER_TAR = 'application/vnd.oci.image.layer.v1.tar';
export const OCI_LAYER_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';
export const OCI_LAYER_ZSTD = 'application/vnd.oci.image.layer.v1.tar+zstd';

export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_MANIFEST_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
export const DOCKER_CONFIG = 'application/vnd.docker.container.image.v1+json';
export const DOCKER_LAYER_GZIP = 'application/vnd.docker.image.rootfs.diff.tar.gzip';

const DOCKER_TO_OCI: Record<string, string> = {
  [DOCKER_MANIFEST]: OCI_MANIFEST,
  [DOCKER_MANIFEST_LIST]: OCI_INDEX,
  [DOCKER_CONFIG]: OCI_CONFIG,
  [DOCKER_LAYER_GZIP]: OCI_LAYER_GZIP,
  'application/vnd.docker.image.rootfs.diff.tar': OCI_LAYER_TAR,
  'application/vnd.docker.image.rootfs.diff.tar.zstd': OCI_LAYER_ZSTD,
};

/** The OCI media type for the same bytes (a Docker name mapped, anything else as it is). */
export function ociMediaType(mediaType: string): string {
  return DOCKER_TO_OCI[mediaType] ?? mediaType;
}

export function isIndexMediaType(mediaType: string | undefined): boolean {
  return mediaType === OCI_INDEX || mediaType === DOCKER_MANIFEST_LIST;
}

export function isManifestMediaType(mediaType: string | undefined): boolean {
  return mediaType === OCI_MANIFEST || mediaType === DOCKER_MANIFEST;
}

/** A layer's media type from its first bytes: gzip and zstd by their magic, anything else a plain tar. */
export function layerMediaTypeOf(head: Buffer): string {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return OCI_LAYER_GZIP;
  if (head.length >= 4 && head.readUInt32LE(0) === 0xfd2fb528) return OCI_LAYER_ZSTD;
  return OCI_LAYER_TAR;
}

/** An OCI content descriptor: what a manifest says of a blob. */
export interface Descriptor {
  mediaType: string;
  /** `sha256:<64 hex>`. */
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { architecture: string; os: string; variant?: string };
}

export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** The annotation an image layout's index.json gives a manifest as its tag. */
export const OCI_REF_NAME = 'org.opencontainers.image.ref.name';
