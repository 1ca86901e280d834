/**
 * A `docker save` archive read as the one image to push: `manifest.json` (`[{Config, RepoTags,
 * Layers}]`) names the config and the layer files. This is also what Concourse's registry-image
 * resource writes as `image.tar` for `format: oci` (go-containerregistry's tarball format: the config
 * as `sha256:<hex>`, gzipped layers as `<hex>.tar.gz`). Layers are pushed as they are (gzip, zstd or
 * plain tar, told by their first bytes); each one's uncompressed digest is checked against the config's
 * rootfs.diff_ids, and a config named by its digest against that digest.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Writable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { ImageArtifactError } from './artifact-error.js';
import type { ArchiveEntries } from './archive-entries.js';
import { HashingTap } from './blob-files.js';
import { imageFromConfig, withManifest, type AssembledImage, type ImageLayer } from './oci-image.js';
import { layerMediaTypeOf, OCI_CONFIG, OCI_LAYER_GZIP, OCI_LAYER_ZSTD, type Descriptor } from './oci-media.js';

interface SavedImage {
  Config?: string;
  Layers?: string[];
}

export function isDockerArchive(entries: ArchiveEntries): boolean {
  return entries.has('manifest.json');
}

export async function readDockerArchive(entries: ArchiveEntries, source: string): Promise<AssembledImage> {
  const saved = await savedImage(entries, source);
  const configEntry = entries.get(saved.Config);
  if (!configEntry) throw new ImageArtifactError(source, `missing ${saved.Config} (the config named by manifest.json)`);
  const named = /([0-9a-f]{64})/.exec(saved.Config)?.[1];
  if (named && configEntry.digest !== `sha256:${named}`)
    throw new ImageArtifactError(source, `${saved.Config} does not match its digest: its content hashes to ${configEntry.digest}`);
  const layers: Descriptor[] = [];
  const files = new Map<string, string>();
  for (const name of saved.Layers) {
    const entry = entries.get(name);
    if (!entry) throw new ImageArtifactError(source, `missing ${name} (a layer named by manifest.json)`);
    layers.push({ mediaType: layerMediaTypeOf(entry.head), digest: entry.digest, size: entry.size });
    files.set(entry.digest, entry.file);
  }
  const configBytes = await readFile(configEntry.file);
  const image = imageFromConfig(configBytes, layers, source, files);
  await checkDiffIds(image.layers, saved.Layers, source);
  const config = { mediaType: OCI_CONFIG, digest: configEntry.digest, size: configEntry.size, bytes: configBytes };
  return withManifest(config, image.layers);
}

async function savedImage(entries: ArchiveEntries, source: string): Promise<Required<SavedImage>> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(entries.get('manifest.json')!.file, 'utf8'));
  } catch {
    throw new ImageArtifactError(source, 'manifest.json is not JSON');
  }
  if (!Array.isArray(doc) || doc.length === 0) throw new ImageArtifactError(source, 'manifest.json names no image');
  if (doc.length > 1) throw new ImageArtifactError(source, `manifest.json names ${doc.length} images; berth takes an archive of one (docker save one image)`);
  const saved = doc[0] as SavedImage;
  if (typeof saved.Config !== 'string' || !Array.isArray(saved.Layers) || saved.Layers.some((l) => typeof l !== 'string'))
    throw new ImageArtifactError(source, 'manifest.json has no Config file or no list of Layers files');
  return { Config: saved.Config, Layers: saved.Layers };
}

/** Each layer's uncompressed digest against the config's diff id (a layer that does not fit its config is corrupt). */
async function checkDiffIds(layers: ImageLayer[], names: string[], source: string): Promise<void> {
  for (const [i, layer] of layers.entries()) {
    const diffId = await uncompressedDigest(layer);
    if (diffId !== layer.diffId)
      throw new ImageArtifactError(
        source,
        `layer ${names[i]} does not match the image config: it unpacks to ${diffId}, rootfs.diff_ids[${i}] is ${layer.diffId}`,
      );
  }
}

async function uncompressedDigest(layer: ImageLayer): Promise<string> {
  const { mediaType, digest } = layer.descriptor;
  const decompress: Transform | undefined =
    mediaType === OCI_LAYER_GZIP ? zlib.createGunzip() : mediaType === OCI_LAYER_ZSTD ? zlib.createZstdDecompress() : undefined;
  if (!decompress) return digest;
  const tap = new HashingTap();
  await pipeline(createReadStream(layer.file!), decompress, tap, new Writable({ write: (_c, _e, done) => done() }));
  return tap.digest();
}
