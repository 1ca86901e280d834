// Image artifacts for the image tests, written with tar-stream: an OCI image layout tarball and a
// `docker save` archive of an assembled image, and small folder trees to make layers of.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pack } from 'tar-stream';
import { buffer } from 'node:stream/consumers';
import type { AssembledImage } from '../../../src/registry/oci-image.js';
import { OCI_INDEX } from '../../../src/registry/oci-media.js';

export interface ArchiveFile {
  name: string;
  content: Buffer;
}

export async function writeTar(file: string, files: ArchiveFile[]): Promise<string> {
  const tar = pack();
  for (const f of files) tar.entry({ name: f.name, mode: 0o644, mtime: new Date(0) }, f.content);
  tar.finalize();
  writeFileSync(file, await buffer(tar));
  return file;
}

const blobName = (digest: string): string => `blobs/${digest.replace(':', '/')}`;

/** The files of an OCI image layout holding `image` (index.json names its manifest). */
export function ociLayoutFiles(image: AssembledImage): ArchiveFile[] {
  const index = {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: [{ mediaType: image.manifest.mediaType, digest: image.manifest.digest, size: image.manifest.size }],
  };
  return [
    { name: 'oci-layout', content: Buffer.from('{"imageLayoutVersion":"1.0.0"}') },
    { name: 'index.json', content: Buffer.from(JSON.stringify(index)) },
    { name: blobName(image.manifest.digest), content: image.manifest.bytes },
    { name: blobName(image.config.digest), content: image.config.bytes },
    ...image.layers.map((l) => ({ name: blobName(l.descriptor.digest), content: readFileSync(l.file!) })),
  ];
}

/** The files of a docker save archive as go-containerregistry writes it (registry-image's image.tar). */
export function dockerArchiveFiles(image: AssembledImage): ArchiveFile[] {
  const layerName = (digest: string): string => `${digest.slice(7)}.tar.gz`;
  const manifest = [{ Config: image.config.digest, RepoTags: ['example.org/app:1'], Layers: image.layers.map((l) => layerName(l.descriptor.digest)) }];
  return [
    { name: 'manifest.json', content: Buffer.from(JSON.stringify(manifest)) },
    { name: image.config.digest, content: image.config.bytes },
    ...image.layers.map((l) => ({ name: layerName(l.descriptor.digest), content: readFileSync(l.file!) })),
  ];
}

/** Writes `files` (relative path → content) under `root`. */
export function writeTree(root: string, files: Record<string, string>): string {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  return root;
}
