/**
 * A folder on disk as a deterministic tar stream, the uncompressed form of an image layer: the same
 * tree gives the same bytes on any machine and at any time, so the same folder is the same layer
 * digest (and a registry already holding it is not sent it again). Entries come depth first, each
 * folder's names sorted; mtimes are fixed; mode, uid and gid are kept (or the owner is replaced when the
 * caller says so); symbolic links are kept as links, hard links within the folder as tar hard links;
 * names are relative to the folder, never absolute. Files are streamed one at a time, never held whole.
 *
 * Sockets and device nodes are left out (neither can be made in a rootless container) and named in
 * `skipped` once the stream has ended; extended attributes are not read (Node has no API for them).
 */
import { createReadStream, type Stats } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pack, type Header, type Pack } from 'tar-stream';

type TarHeaders = Partial<Header> & Pick<Header, 'name'>;

export interface FolderTarOptions {
  /** Every entry's owner (e.g. root for a root filesystem written by a non-root step); default: as on disk. */
  owner?: { uid: number; gid: number };
  /** Every entry's mtime; default the epoch, so the digest depends on content alone. */
  mtime?: Date;
}

export interface FolderTar {
  stream: Readable;
  /** Relative paths left out (sockets, devices); complete once `stream` has ended. */
  skipped: string[];
}

export function folderTar(root: string, opts: FolderTarOptions = {}): FolderTar {
  const tar = pack();
  const skipped: string[] = [];
  const links = new Map<string, string>();
  const walk = async (rel: string): Promise<void> => {
    const names = (await readdir(path.join(root, rel))).sort();
    for (const name of names) {
      const entry = rel ? `${rel}/${name}` : name;
      const full = path.join(root, entry);
      const stat = await lstat(full);
      if (stat.isDirectory()) {
        await addEntry(tar, { ...headerOf(entry, stat, opts), type: 'directory' });
        await walk(entry);
      } else if (stat.isSymbolicLink()) {
        await addEntry(tar, { ...headerOf(entry, stat, opts), type: 'symlink', linkname: await readlink(full) });
      } else if (stat.isFile()) {
        const inode = `${stat.dev}:${stat.ino}`;
        const first = stat.nlink > 1 ? links.get(inode) : undefined;
        if (first) await addEntry(tar, { ...headerOf(entry, stat, opts), type: 'link', linkname: first });
        else {
          if (stat.nlink > 1) links.set(inode, entry);
          await addEntry(tar, { ...headerOf(entry, stat, opts), type: 'file', size: stat.size }, full);
        }
      } else if (stat.isFIFO()) await addEntry(tar, { ...headerOf(entry, stat, opts), type: 'fifo' });
      else skipped.push(entry);
    }
  };
  walk('')
    .then(() => tar.finalize())
    .catch((err: Error) => tar.destroy(new Error(`cannot read ${root} into a layer: ${err.message}`)));
  return { stream: tar as unknown as Readable, skipped };
}

function headerOf(name: string, stat: Stats, opts: FolderTarOptions): TarHeaders {
  return {
    name,
    // The whole st_mode: tar-stream replaces a mode of 0 by its default, and masks the type bits itself.
    mode: stat.mode,
    uid: opts.owner?.uid ?? stat.uid,
    gid: opts.owner?.gid ?? stat.gid,
    mtime: opts.mtime ?? new Date(0),
  };
}

/** Adds one entry (streaming a file's content) and resolves once tar-stream has taken all of it. */
function addEntry(tar: Pack, header: TarHeaders, file?: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const sink = tar.entry(header, (err) => (err ? reject(err) : resolve()));
    if (!file) return;
    const content = createReadStream(file);
    content.once('error', reject);
    content.pipe(sink as unknown as NodeJS.WritableStream);
  });
}
