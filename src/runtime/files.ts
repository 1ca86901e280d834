/**
 * Tar archives going into a container, checked before a single byte lands: no entry may leave the
 * destination folder (`../`, absolute names are made relative), no relative link may point outside it,
 * and no entry may be written through a link of the same archive. The archive is read whole (up to a
 * limit) and re-packed, so a bad entry refuses the copy with nothing half-written.
 */
import { gunzipSync } from 'node:zlib';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { extract, pack, type Header } from 'tar-stream';

export class ArchiveError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'ArchiveError';
  }
}

export const DEFAULT_MAX_ARCHIVE_BYTES = 256 * 1024 * 1024;

export async function readLimited(input: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of input) {
    const b = typeof c === 'string' ? Buffer.from(c) : (c as Buffer);
    size += b.length;
    if (size > limit) throw new ArchiveError(`the archive is larger than ${limit} bytes`, 413);
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/** A name inside the archive, relative and normalised; throws when it leaves the destination. */
export function safeEntryName(name: string): string {
  const rel = posix.normalize(name.replace(/^\/+/, '')).replace(/\/+$/, '');
  if (rel === '..' || rel.startsWith('../')) throw new ArchiveError(`archive entry "${name}" points outside the destination`);
  return rel === '.' ? '' : rel;
}

/** Whether a relative link at `entry` pointing to `target` stays inside the destination. */
export function linkStaysInside(entry: string, target: string): boolean {
  if (target.startsWith('/')) return true; // resolved inside the container's own root
  const resolved = posix.normalize(posix.join(posix.dirname(entry), target));
  return !(resolved === '..' || resolved.startsWith('../'));
}

/** Checks and re-packs `raw` (plain or gzip); returns a plain tar. */
export async function sanitizeArchive(raw: Buffer): Promise<{ tar: Buffer; entries: number }> {
  let data = raw;
  if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) {
    try {
      data = gunzipSync(data);
    } catch (err) {
      throw new ArchiveError(`the archive is not valid gzip: ${(err as Error).message}`);
    }
  }
  if (data.length === 0) return { tar: Buffer.alloc(0), entries: 0 };
  const ex = extract();
  const out = pack();
  const links = new Set<string>();
  let count = 0;
  const packed: Buffer[] = [];
  out.on('data', (c: unknown) => {
    packed.push(c as Buffer);
  });
  const finished = new Promise<void>((resolve, reject) => {
    out.on('end', resolve);
    out.on('error', reject);
  });
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header: Header, stream, next) => {
      try {
        const name = safeEntryName(header.name);
        for (const l of links) if (name.startsWith(`${l}/`)) throw new ArchiveError(`archive entry "${header.name}" is written through the link "${l}"`);
        if (header.type === 'symlink' && !linkStaysInside(name, header.linkname ?? '')) throw new ArchiveError(`archive link "${header.name}" -> "${header.linkname}" points outside the destination`);
        if (header.type === 'link') {
          const target = safeEntryName(header.linkname ?? '');
          header.linkname = target;
        }
        if (header.type === 'symlink' || header.type === 'link') links.add(name);
        if (name === '' && header.type === 'directory') {
          stream.resume();
          stream.on('end', next);
          return;
        }
        count++;
        const entry = out.entry({ ...header, name: name || '.' }, (err) => (err ? reject(err) : next()));
        stream.pipe(entry);
      } catch (err) {
        stream.resume();
        reject(err);
        ex.destroy();
      }
    });
    ex.on('finish', resolve);
    ex.on('error', (err) => reject(err instanceof ArchiveError ? err : new ArchiveError(`the body is not a valid tar archive: ${err.message}`)));
  });
  ex.end(data);
  await done;
  out.finalize();
  await finished;
  return { tar: Buffer.concat(packed), entries: count };
}

/** GNU and busybox tar read whole records: pad so the reader reaches the end marker without EOF. */
export function padRecords(tar: Buffer): Buffer {
  const pad = recordPadding(tar.length);
  return pad.length ? Buffer.concat([tar, pad]) : tar;
}

/** The zeros that complete the last 10240-byte record of a tar of `length` bytes (sent after it, not joined). */
export function recordPadding(length: number): Buffer {
  return Buffer.alloc((10240 - (length % 10240)) % 10240);
}

/** Go's os.FileMode bits from a POSIX st_mode (what the archive stat header carries). */
export function goFileMode(posixMode: number): number {
  const perm = posixMode & 0o777;
  const type = posixMode & 0o170000;
  let mode = perm;
  if (type === 0o040000) mode |= 0x80000000; // ModeDir
  else if (type === 0o120000) mode |= 0x08000000; // ModeSymlink
  else if (type === 0o010000) mode |= 0x02000000; // ModeNamedPipe
  else if (type === 0o140000) mode |= 0x01000000; // ModeSocket
  else if (type === 0o020000) mode |= 0x04000000 | 0x00200000; // ModeDevice|ModeCharDevice
  else if (type === 0o060000) mode |= 0x04000000;
  if (posixMode & 0o4000) mode |= 0x00800000;
  if (posixMode & 0o2000) mode |= 0x00400000;
  if (posixMode & 0o1000) mode |= 0x00100000;
  return mode >>> 0;
}
