/**
 * An assembled image as the entries of an OCI image layout (`oci-layout`, `index.json`, `blobs/sha256/<hex>`),
 * handed one by one to whatever writes them (a tar stream into a pod, a folder): the layout an image server
 * serves the image from. The manifest and config go in their own bytes, so the image keeps its digest; layers
 * are streamed from their files.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { ImageError, type AssembledImage } from './oci-image.js';
import { DIGEST_PATTERN, OCI_INDEX, OCI_REF_NAME } from './oci-media.js';

/** Adds one entry; a body given as a stream needs `header.size`. (The shape of runtime's AddEntry.) */
export type AddLayoutEntry = (header: { name: string; size?: number; mode?: number; type?: 'file' | 'directory' }, body?: Buffer | Readable) => Promise<void>;

export interface OciLayoutOptions {
  /** The tag index.json gives the manifest (`org.opencontainers.image.ref.name`). */
  refName?: string;
}

function blobName(digest: string): string {
  // A digest is all of an entry's name below blobs/: anything but sha256 hex could lead elsewhere.
  if (!DIGEST_PATTERN.test(digest)) throw new ImageError(`the image names the blob ${digest}, not sha256:<64 hex>`);
  return `blobs/sha256/${digest.slice('sha256:'.length)}`;
}

/** An image as an image server is handed it: its manifest's digest, and its layout's entries to write. */
export function servedLayout(image: AssembledImage): { digest: string; layout: (add: AddLayoutEntry) => Promise<void> } {
  return { digest: image.manifest.digest, layout: (add) => writeOciLayout(image, add) };
}

export async function writeOciLayout(image: AssembledImage, add: AddLayoutEntry, o: OciLayoutOptions = {}): Promise<void> {
  // Every blob is checked before the first entry, so a writer is never left with part of a layout.
  const layerFiles = await Promise.all(image.layers.map((_, i) => layerFile(image, i)));
  const blobs = new Map<string, () => Promise<void>>();
  const blob = (digest: string, write: (name: string) => Promise<void>): void => {
    const name = blobName(digest);
    if (!blobs.has(digest)) blobs.set(digest, () => write(name));
  };
  const { manifest, config } = image;
  blob(manifest.digest, (name) => add({ name, mode: 0o644 }, manifest.bytes));
  blob(config.digest, (name) => add({ name, mode: 0o644 }, config.bytes));
  image.layers.forEach(({ descriptor }, i) =>
    blob(descriptor.digest, (name) => add({ name, mode: 0o644, size: descriptor.size }, createReadStream(layerFiles[i]))),
  );

  const annotations = o.refName === undefined ? {} : { annotations: { [OCI_REF_NAME]: o.refName } };
  const index = {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: [{ mediaType: manifest.mediaType, digest: manifest.digest, size: manifest.size, ...annotations }],
  };
  await add({ name: 'oci-layout', mode: 0o644 }, Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' })));
  await add({ name: 'index.json', mode: 0o644 }, Buffer.from(JSON.stringify(index)));
  await add({ name: 'blobs', type: 'directory', mode: 0o755 });
  await add({ name: 'blobs/sha256', type: 'directory', mode: 0o755 });
  for (const write of blobs.values()) await write();
}

/** The file of layer `i`, refused when berth does not hold its bytes or holds other bytes than its descriptor says. */
async function layerFile(image: AssembledImage, i: number): Promise<string> {
  const { descriptor, file } = image.layers[i];
  const what = `layer ${i + 1} of image ${image.manifest.digest} (${descriptor.digest})`;
  if (!file) throw new ImageError(`${what} is not on this machine: it stays in the registry its base image came from, so it cannot go into an image layout`);
  const found = await stat(file).catch(() => undefined);
  if (!found?.isFile()) throw new ImageError(`${what}: its file ${file} is missing`);
  if (found.size !== descriptor.size) throw new ImageError(`${what}: its file ${file} is ${found.size} bytes, its descriptor says ${descriptor.size}`);
  return file;
}
