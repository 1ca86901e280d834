/**
 * An OCI image layout (image-spec image-layout.md: `oci-layout`, `index.json`, `blobs/<alg>/<hex>`), as
 * a tarball or a folder, read as the one image to push: index.json (and any index it names) is followed
 * to the manifest of the wanted platform, and every blob on the way is checked against its digest and
 * size. The manifest is kept in its own bytes, so the image keeps the digest its maker gave it.
 */
import { readFile } from 'node:fs/promises';
import { ImageArtifactError } from './artifact-error.js';
import type { ArchiveEntries, ArchiveEntry } from './archive-entries.js';
import { imageFromConfig, type AssembledImage, type JsonBlob, type Platform } from './oci-image.js';
import { DIGEST_PATTERN, isIndexMediaType, OCI_MANIFEST, type Descriptor } from './oci-media.js';

interface IndexDoc {
  mediaType?: string;
  manifests?: Descriptor[];
}

interface ManifestDoc {
  mediaType?: string;
  config?: Descriptor;
  layers?: Descriptor[];
}

const MAX_NESTING = 4;

export function isOciLayout(entries: ArchiveEntries): boolean {
  return entries.has('oci-layout') && entries.has('index.json');
}

export async function readOciLayout(entries: ArchiveEntries, source: string, platform: Platform): Promise<AssembledImage> {
  const layout = await jsonEntry<{ imageLayoutVersion?: string }>(entries, 'oci-layout', source);
  if (typeof layout.imageLayoutVersion !== 'string') throw new ImageArtifactError(source, 'oci-layout has no imageLayoutVersion: not an OCI image layout');
  let index = await jsonEntry<IndexDoc>(entries, 'index.json', source);
  let where = 'index.json';
  for (let depth = 0; ; depth++) {
    const chosen = chooseManifest(index, where, source, platform);
    const blob = await blobOf(entries, chosen, source, `the manifest named by ${where}`);
    if (!isIndexMediaType(chosen.mediaType)) return imageOf(entries, source, chosen, blob);
    if (depth >= MAX_NESTING) throw new ImageArtifactError(source, `indexes nested more than ${MAX_NESTING} deep from index.json`);
    index = parse<IndexDoc>(blob.bytes, source, `index ${chosen.digest}`);
    where = `index ${chosen.digest}`;
  }
}

function chooseManifest(index: IndexDoc, where: string, source: string, platform: Platform): Descriptor {
  const all = index.manifests ?? [];
  if (!Array.isArray(all) || all.length === 0) throw new ImageArtifactError(source, `${where} names no manifest`);
  if (all.length === 1) return all[0];
  const fits = all.filter((m) => !m.platform || (m.platform.os === platform.os && m.platform.architecture === platform.architecture));
  if (fits.length === 0) {
    const offered = all.map((m) => (m.platform ? `${m.platform.os}/${m.platform.architecture}` : 'unknown')).join(', ');
    throw new ImageArtifactError(source, `${where} holds images for ${offered}, none for ${platform.os}/${platform.architecture}`);
  }
  return fits[0];
}

async function imageOf(entries: ArchiveEntries, source: string, descriptor: Descriptor, blob: JsonBlob & { entry: ArchiveEntry }): Promise<AssembledImage> {
  const doc = parse<ManifestDoc>(blob.bytes, source, `manifest ${descriptor.digest}`);
  if (!doc.config || !Array.isArray(doc.layers))
    throw new ImageArtifactError(source, `manifest ${descriptor.digest} has no config or no layers: not an image manifest`);
  const config = await blobOf(entries, doc.config, source, `the config of manifest ${descriptor.digest}`);
  const files = new Map<string, string>();
  doc.layers.forEach((layer, i) => files.set(layer.digest, checkedEntry(entries, layer, source, `layer ${i + 1} of manifest ${descriptor.digest}`).file));
  const image = imageFromConfig(config.bytes, doc.layers, source, files);
  return {
    // The layers' descriptors as the manifest has them: its bytes are pushed unchanged.
    layers: image.layers.map((l, i) => ({ ...l, descriptor: doc.layers![i] })),
    config: { mediaType: doc.config.mediaType, digest: doc.config.digest, size: doc.config.size, bytes: config.bytes },
    manifest: { mediaType: doc.mediaType ?? descriptor.mediaType ?? OCI_MANIFEST, digest: descriptor.digest, size: descriptor.size, bytes: blob.bytes },
  };
}

/** The entry of a descriptor's blob, refused when missing or when its content is not what the descriptor says. */
function checkedEntry(entries: ArchiveEntries, d: Descriptor, source: string, what: string): ArchiveEntry {
  if (typeof d.digest !== 'string' || !DIGEST_PATTERN.test(d.digest))
    throw new ImageArtifactError(source, `${what} has the digest ${String(d.digest)}, not sha256:<64 hex>`);
  const name = `blobs/${d.digest.replace(':', '/')}`;
  const entry = entries.get(name);
  if (!entry) throw new ImageArtifactError(source, `missing blob ${name} (${what})`);
  if (entry.digest !== d.digest) throw new ImageArtifactError(source, `blob ${name} does not match its digest: its content hashes to ${entry.digest}`);
  if (entry.size !== d.size) throw new ImageArtifactError(source, `blob ${name} is ${entry.size} bytes, ${what} says ${d.size}`);
  return entry;
}

async function blobOf(entries: ArchiveEntries, d: Descriptor, source: string, what: string): Promise<JsonBlob & { entry: ArchiveEntry }> {
  const entry = checkedEntry(entries, d, source, what);
  return { mediaType: d.mediaType, digest: d.digest, size: d.size, bytes: await readFile(entry.file), entry };
}

async function jsonEntry<T>(entries: ArchiveEntries, name: string, source: string): Promise<T> {
  const entry = entries.get(name);
  if (!entry) throw new ImageArtifactError(source, `missing ${name}`);
  return parse<T>(await readFile(entry.file), source, name);
}

function parse<T>(bytes: Buffer, source: string, what: string): T {
  try {
    const doc = JSON.parse(bytes.toString('utf8')) as unknown;
    if (doc && typeof doc === 'object' && !Array.isArray(doc)) return doc as T;
  } catch {
    /* said below */
  }
  throw new ImageArtifactError(source, `${what} is not a JSON object`);
}
