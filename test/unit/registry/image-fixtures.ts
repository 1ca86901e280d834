// Image artifacts for the image tests, written with tar-stream: an OCI image layout tarball and a
// `docker save` archive of an assembled image, and small folder trees to make layers of; images of real
// layers, and a writer of layout entries into a folder.
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pack } from 'tar-stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import type { AddLayoutEntry } from '../../../src/registry/layout-entries.js';
import { folderLayer } from '../../../src/registry/layer-blob.js';
import { appendLayer, assembleImage, emptyImage, type AssembledImage } from '../../../src/registry/oci-image.js';
import { OCI_INDEX } from '../../../src/registry/oci-media.js';
import { scratchDir } from '../../util/scratch.js';

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

/** An image of one gzipped layer per tree, the layers' files in a scratch folder. */
export async function layeredImage(trees: Array<Record<string, string>>): Promise<AssembledImage> {
  const blobs = scratchDir('berth-layers-');
  let image = emptyImage({ architecture: 'amd64', os: 'linux' }, { Cmd: ['/bin/hello'] });
  for (const tree of trees) {
    const { layer } = await folderLayer(writeTree(scratchDir('berth-tree-'), tree), blobs);
    image = appendLayer(image, { descriptor: { mediaType: layer.mediaType, digest: layer.digest, size: layer.size }, diffId: layer.diffId, file: layer.file });
  }
  return assembleImage(image);
}

/** Writes layout entries under `root` as tar would unpack them; `added` lists each header, in order. */
export function folderWriter(root: string): { add: AddLayoutEntry; added: Array<Parameters<AddLayoutEntry>[0]> } {
  const added: Array<Parameters<AddLayoutEntry>[0]> = [];
  const add: AddLayoutEntry = async (header, body) => {
    added.push(header);
    const file = path.join(root, header.name);
    if (header.type === 'directory') return void mkdirSync(file, { recursive: true });
    mkdirSync(path.dirname(file), { recursive: true });
    if (body === undefined || Buffer.isBuffer(body)) return writeFileSync(file, body ?? Buffer.alloc(0));
    if (header.size === undefined) throw new Error(`${header.name}: a streamed body without a size`);
    await pipeline(body, createWriteStream(file));
    const written = readFileSync(file).length;
    if (written !== header.size) throw new Error(`${header.name}: header says ${header.size} bytes, the stream had ${written}`);
  };
  return { add, added };
}
