/**
 * An image layer blob: a tar stream gzipped into a file named by its digest, with both identities an
 * image needs, hashed on the way through (the tar is never held in memory or written twice): `digest`
 * is the sha256 of the compressed bytes (what a manifest and a registry name), `diffId` the sha256 of
 * the tar itself (what the image config's rootfs lists). Node's gzip writes no timestamp or file name
 * into its header, so the same tar gives the same blob.
 */
import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { discard, HashingTap, partialFile, settleBlob } from './blob-files.js';
import { folderTar, type FolderTarOptions } from './folder-tar.js';
import { OCI_LAYER_GZIP, type Descriptor } from './oci-media.js';

export interface LayerBlob extends Descriptor {
  /** sha256 of the uncompressed tar: the image config's rootfs.diff_ids entry. */
  diffId: string;
  /** The compressed blob on disk. */
  file: string;
}

/** Gzips `tar` into `dir` (a folder the caller owns); the file is named by the blob's digest. */
export async function writeLayerBlob(tar: Readable, dir: string): Promise<LayerBlob> {
  const tmp = partialFile(dir);
  const uncompressed = new HashingTap();
  const compressed = new HashingTap();
  try {
    await pipeline(tar, uncompressed, createGzip(), compressed, createWriteStream(tmp));
  } catch (err) {
    await discard(tmp);
    throw err;
  }
  const digest = compressed.digest();
  return { mediaType: OCI_LAYER_GZIP, digest, size: compressed.bytes, diffId: uncompressed.digest(), file: await settleBlob(tmp, dir, digest) };
}

/** A layer holding the folder `root` as its tree (folder-tar.ts says how), written into `dir`. */
export async function folderLayer(root: string, dir: string, opts: FolderTarOptions = {}): Promise<{ layer: LayerBlob; skipped: string[] }> {
  const tar = folderTar(root, opts);
  const layer = await writeLayerBlob(tar.stream, dir);
  return { layer, skipped: tar.skipped };
}
