/**
 * Tar archives of outputs unpacked below a local folder: files, folders, symlinks and hard links, each
 * file's bytes written as they arrive (an output of gigabytes is never held in memory). Nothing may land
 * outside the folder. Merging a finished folder into the one the user named is here too.
 */
import { createWriteStream } from 'node:fs';
import { copyFile, link, lstat, mkdir, readdir, rename, rm, stat, symlink } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extract, type Header } from 'tar-stream';
import { safeEntryName } from '../runtime/files.js';

/** Unpacks a tar held in memory below `root` (created if needed). */
export async function unpackTar(tar: Buffer, root: string): Promise<void> {
  const stream = new PassThrough();
  const unpacked = unpackStream(stream, root);
  stream.end(tar);
  await unpacked;
}

/**
 * Unpacks a tar stream below `root` (created if needed). Resolves once the archive's end was read; a cut
 * archive rejects (tar-stream's "Unexpected end of data"), as does a failed write.
 */
export async function unpackStream(stream: Readable, root: string): Promise<void> {
  await mkdir(root, { recursive: true });
  await new Promise<void>((resolvePromise, reject) => {
    const ex = extract();
    ex.on('entry', (header: Header, source, next) => {
      // tar-stream's entry stream is a streamx Readable, which node's pipeline takes as any readable
      const body = source as unknown as Readable;
      // a cut archive errs the entry too: reported once, by the extractor ('error' below)
      body.on('error', () => undefined);
      writeEntry(root, header, body).then(
        () => next(),
        (err: Error) => {
          body.resume();
          ex.destroy(err);
        },
      );
    });
    ex.on('finish', () => resolvePromise());
    ex.on('error', reject);
    stream.on('error', (err) => ex.destroy(err));
    stream.pipe(ex);
  });
}

async function writeEntry(root: string, header: Header, body: Readable): Promise<void> {
  const rel = safeEntryName(header.name);
  const target = rel ? join(root, rel) : root;
  if (target !== root && !target.startsWith(root + sep)) throw new Error(`output entry ${header.name} points outside ${root}`);
  if (header.type === 'file' || header.type === 'contiguous-file') {
    await mkdir(dirname(target), { recursive: true });
    await rm(target, { force: true }).catch(() => undefined);
    await pipeline(body, createWriteStream(target, { mode: (header.mode ?? 0o644) & 0o7777 }));
    return;
  }
  body.resume();
  if (header.type === 'directory') {
    await mkdir(target, { recursive: true, mode: (header.mode ?? 0o755) | 0o700 });
    return;
  }
  if (header.type !== 'symlink' && header.type !== 'link') return; // devices and FIFOs hold no data
  await mkdir(dirname(target), { recursive: true });
  await rm(target, { force: true }).catch(() => undefined);
  if (header.type === 'symlink') await symlink(header.linkname ?? '', target);
  else await hardLink(root, header, target);
}

/**
 * A hard link (tar writes a file's second name as a link to its first): the same file again, never
 * dropped. Its target is an entry already unpacked below `root`; a copy where the file system refuses links.
 */
async function hardLink(root: string, header: Header, target: string): Promise<void> {
  const rel = safeEntryName(header.linkname ?? '');
  const source = join(root, rel);
  if (!rel || !source.startsWith(root + sep)) throw new Error(`output entry ${header.name} links to ${header.linkname ?? ''}, outside the output`);
  const s = await lstat(source).catch(() => undefined);
  if (!s?.isFile()) throw new Error(`output entry ${header.name} links to ${header.linkname ?? ''}, which the archive did not hold before it`);
  await link(source, target).catch(() => copyFile(source, target));
}

/**
 * Moves everything below `from` into `to`, as unpacking it there would have: what `to` holds under the same
 * names is replaced, folders are merged, the rest of `to` is kept. `from` is gone afterwards.
 */
export async function moveInto(from: string, to: string): Promise<void> {
  // `to` itself is followed (an -o folder may be a link to one); what is below it is replaced, links too
  const existing = await stat(to).catch(() => undefined);
  if (!existing?.isDirectory()) {
    if (existing) await rm(to, { force: true });
    await mkdir(dirname(to), { recursive: true });
    await rename(from, to);
    return;
  }
  for (const name of await readdir(from)) {
    const src = join(from, name);
    const dest = join(to, name);
    const [s, d] = await Promise.all([lstat(src), lstat(dest).catch(() => undefined)]);
    if (s.isDirectory() && d?.isDirectory()) await moveInto(src, dest);
    else {
      if (d) await rm(dest, { recursive: true, force: true });
      await rename(src, dest);
    }
  }
  await rm(from, { recursive: true, force: true });
}
