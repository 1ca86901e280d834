/**
 * OCI images as values (pure, no I/O): an image config and its layers, grown one layer at a time and
 * assembled into the config and manifest blobs a registry stores, each addressed by its digest. A base
 * image read from a registry or an artifact is the same value, so `docker commit` is a base image plus
 * one layer of changes, and a folder made into an image is an empty image plus one layer.
 *
 * The JSON is written in the order its fields were set, with no whitespace: the same image gives the
 * same bytes, hence the same digest. No field holds the current time unless the caller passes one.
 */
import { sha256Digest } from './distribution.js';
import { OCI_CONFIG, OCI_MANIFEST, ociMediaType, type Descriptor } from './oci-media.js';

/** The runtime settings of an image config (the `config` object; Docker's names, as the spec keeps them). */
export interface ContainerConfig {
  User?: string;
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  WorkingDir?: string;
  Labels?: Record<string, string>;
  ExposedPorts?: Record<string, object>;
  Volumes?: Record<string, object>;
  StopSignal?: string;
  [field: string]: unknown;
}

export interface HistoryEntry {
  created?: string;
  created_by?: string;
  author?: string;
  comment?: string;
  empty_layer?: boolean;
}

export interface ImageConfig {
  created?: string;
  author?: string;
  architecture: string;
  os: string;
  variant?: string;
  config?: ContainerConfig;
  rootfs: { type: 'layers'; diff_ids: string[] };
  history?: HistoryEntry[];
  [field: string]: unknown;
}

/** A small JSON document as a blob: its bytes and its descriptor. */
export interface JsonBlob extends Descriptor {
  bytes: Buffer;
}

/** A layer of an image: its descriptor, its diff id, and the file of its bytes when berth holds them
 * (a base image's layers stay in their registry: file undefined). */
export interface ImageLayer {
  descriptor: Descriptor;
  diffId: string;
  file?: string;
}

export interface OciImage {
  config: ImageConfig;
  layers: ImageLayer[];
}

/** What is pushed: the config and manifest blobs, and the layers the manifest names. */
export interface AssembledImage {
  config: JsonBlob;
  manifest: JsonBlob;
  layers: ImageLayer[];
}

export interface Platform {
  architecture: string;
  os: string;
  variant?: string;
}

export class ImageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageError';
  }
}

/** This machine's platform in OCI's words (Node's x64 is amd64). */
export function hostPlatform(): Platform {
  const arch: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };
  return { architecture: arch[process.arch] ?? process.arch, os: 'linux' };
}

export function jsonBlob(value: unknown, mediaType: string): JsonBlob {
  const bytes = Buffer.from(JSON.stringify(value));
  return { mediaType, digest: sha256Digest(bytes), size: bytes.length, bytes };
}

/** An image with no layers yet. */
export function emptyImage(platform: Platform = hostPlatform(), config: ContainerConfig = {}, created?: string): OciImage {
  const image: ImageConfig = {
    ...(created ? { created } : {}),
    architecture: platform.architecture,
    os: platform.os,
    ...(platform.variant ? { variant: platform.variant } : {}),
    config,
    rootfs: { type: 'layers', diff_ids: [] },
    history: [],
  };
  return { config: image, layers: [] };
}

/** The image with `changes` merged into its runtime settings (Labels merged key by key), no layer added. */
export function withSettings(image: OciImage, changes: ContainerConfig): OciImage {
  const current = image.config.config ?? {};
  const labels = changes.Labels ? { Labels: { ...current.Labels, ...changes.Labels } } : {};
  return { ...image, config: { ...image.config, config: { ...current, ...changes, ...labels } } };
}

/** The image with `layer` on top, its diff id in rootfs and a history entry for it. */
export function appendLayer(image: OciImage, layer: ImageLayer, history: Omit<HistoryEntry, 'empty_layer'> = {}): OciImage {
  const config = image.config;
  return {
    config: { ...config, rootfs: { type: 'layers', diff_ids: [...config.rootfs.diff_ids, layer.diffId] }, history: [...(config.history ?? []), history] },
    layers: [...image.layers, layer],
  };
}

/** The config and manifest blobs of `image`; refused when its config and layers disagree. */
export function assembleImage(image: OciImage, annotations?: Record<string, string>): AssembledImage {
  const diffIds = image.config.rootfs?.diff_ids ?? [];
  if (diffIds.length !== image.layers.length)
    throw new ImageError(`the image config lists ${diffIds.length} layers (rootfs.diff_ids) but the image has ${image.layers.length}`);
  image.layers.forEach((layer, i) => {
    if (layer.diffId !== diffIds[i])
      throw new ImageError(`layer ${i + 1} (${layer.descriptor.digest}) has diff id ${layer.diffId}, but the config lists ${diffIds[i]}`);
  });
  return withManifest(jsonBlob(image.config, OCI_CONFIG), image.layers, annotations);
}

/** The manifest naming `config` and `layers` (a config kept in the bytes it came in, or made here). */
export function withManifest(config: JsonBlob, layers: ImageLayer[], annotations?: Record<string, string>): AssembledImage {
  const manifest = jsonBlob(
    {
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: descriptorOf(config),
      layers: layers.map((l) => descriptorOf(l.descriptor)),
      ...(annotations && Object.keys(annotations).length ? { annotations } : {}),
    },
    OCI_MANIFEST,
  );
  return { config, manifest, layers };
}

/** A descriptor with only the fields a manifest carries, its media type in OCI's words. */
export function descriptorOf(d: Descriptor): Descriptor {
  return { mediaType: ociMediaType(d.mediaType), digest: d.digest, size: d.size, ...(d.annotations ? { annotations: d.annotations } : {}) };
}

/**
 * A base image from its config bytes and manifest layers (as a registry or an artifact holds them):
 * the value to append a layer to. `source` names where it came from, for the error.
 */
export function imageFromConfig(configBytes: Buffer, layers: readonly Descriptor[], source: string, files: ReadonlyMap<string, string> = new Map()): OciImage {
  let config: ImageConfig;
  try {
    config = JSON.parse(configBytes.toString('utf8')) as ImageConfig;
  } catch {
    throw new ImageError(`the image config of ${source} is not JSON`);
  }
  const diffIds = config.rootfs?.diff_ids;
  if (!Array.isArray(diffIds) || diffIds.length !== layers.length)
    throw new ImageError(
      `the image config of ${source} lists ${Array.isArray(diffIds) ? diffIds.length : 'no'} layers (rootfs.diff_ids) for the ${layers.length} of its manifest`,
    );
  return { config, layers: layers.map((d, i) => ({ descriptor: descriptorOf(d), diffId: diffIds[i], file: files.get(d.digest) })) };
}
