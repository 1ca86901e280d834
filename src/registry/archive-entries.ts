/**
 * The files of an image archive, each on disk once and hashed as it was written: a tarball (`docker
 * save`, registry-image's `image.tar`, an OCI image layout packed as a tar; gzipped or not) is unpacked
 * into a folder the caller owns, one file per distinct content; a folder (an OCI image layout on disk)
 * is read in place. Links inside a tarball (older `docker save` links repeated layers) name the entry
 * they point to. Nothing is held in memory but the first bytes of each entry (to tell tar from gzip).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { ImageArtifactError } from './artifact-error.js';
import { discard, HashingTap, partialFile, settleBlob } from './blob-files.js';

export interface ArchiveEntry {
  file: string;
  digest: string;
  size: number;
  /** The first bytes (up to 8): gzip, zstd or a plain tar. */
  head: Buffer;
}

/** Entry name (relative, `/`-separated, no `./`) → its file. */
export type ArchiveEntries = Map<string, ArchiveEntry>;

/** The entries of `archive`: a tarball unpacked into `workDir`, or a folder read in place. */
export async function archiveEntries(archive: string, workDir: string): Promise<ArchiveEntries> {
  const found = await stat(archive).catch(() => undefined);
  if (!found) throw new ImageArtifactError(archive, 'missing: no such file or folder');
  return found.isDirectory() ? folderEntries(archive) : unpackTarball(archive, workDir);
}

export function entryName(name: string): string {
  return path.posix
    .normalize(name)
    .replace(/^(\.\/)+/, '')
    .replace(/\/$/, '');
}

async function unpackTarball(tarball: string, workDir: string): Promise<ArchiveEntries> {
  const entries: ArchiveEntries = new Map();
  const links = new Map<string, string>();
  const source = createReadStream(tarball);
  const extractor = extract();
  const gzipped = (await firstBytes(tarball, 2)).equals(Buffer.from([0x1f, 0x8b]));
  const feed = (
    gzipped ? pipeline(source, createGunzip(), extractor as unknown as NodeJS.WritableStream) : pipeline(source, extractor as unknown as NodeJS.WritableStream)
  ).catch((err: Error) => extractor.destroy(err));
  try {
    for await (const entry of extractor) {
      const { name, type, linkname } = entry.header;
      const key = entryName(name);
      if (type === 'file' || type === 'contiguous-file') entries.set(key, await saveEntry(Readable.from(entry), workDir));
      else {
        if ((type === 'symlink' || type === 'link') && linkname)
          links.set(key, type === 'link' ? entryName(linkname) : entryName(path.posix.join(path.posix.dirname(key), linkname)));
        entry.resume();
      }
    }
    await feed;
  } catch (err) {
    throw new ImageArtifactError(tarball, `not a whole tar archive (${(err as Error).message})`);
  }
  for (const [name, target] of links) {
    const entry = entries.get(target);
    if (entry) entries.set(name, entry);
  }
  return entries;
}

async function saveEntry(content: Readable, workDir: string): Promise<ArchiveEntry> {
  const tmp = partialFile(workDir);
  const tap = new HashingTap();
  const head = new HeadTap(8);
  try {
    await pipeline(content, head, tap, createWriteStream(tmp));
  } catch (err) {
    await discard(tmp);
    throw err;
  }
  const digest = tap.digest();
  return { file: await settleBlob(tmp, workDir, digest), digest, size: tap.bytes, head: head.bytes };
}

async function folderEntries(root: string): Promise<ArchiveEntries> {
  const entries: ArchiveEntries = new Map();
  for (const rel of (await readdir(root, { recursive: true })).sort()) {
    const file = path.join(root, rel);
    if (!(await stat(file)).isFile()) continue;
    const tap = new HashingTap();
    const head = new HeadTap(8);
    tap.resume();
    await pipeline(createReadStream(file), head, tap);
    entries.set(entryName(rel.split(path.sep).join('/')), { file, digest: tap.digest(), size: tap.bytes, head: head.bytes });
  }
  return entries;
}

async function firstBytes(file: string, n: number): Promise<Buffer> {
  const handle = await open(file);
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await handle.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Keeps the first `n` bytes that pass. */
class HeadTap extends Transform {
  bytes = Buffer.alloc(0);

  constructor(private readonly n: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null, data?: Buffer) => void): void {
    if (this.bytes.length < this.n) this.bytes = Buffer.concat([this.bytes, chunk.subarray(0, this.n - this.bytes.length)]);
    done(null, chunk);
  }
}
