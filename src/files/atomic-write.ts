/**
 * Writes a package's changed files all or none, as far as a POSIX file system allows.
 *
 * 1. Every new or changed file is written to a hidden temp file in its own folder (`.NAME.berth-*.tmp`,
 *    which readPackage skips) and fsynced. Nothing the package holds has changed yet; any failure here
 *    (a full disk, a read-only folder, a path that is taken by a folder) removes the temp files and the
 *    folders made for them, and the package is exactly as it was.
 * 2. Only then are the temp files renamed over their targets, one rename per file. Each rename is
 *    atomic: a reader or a crash sees the old file or the new one, never half of one. The set of renames
 *    is not atomic across files (POSIX has no multi-file rename): a crash inside this window, which
 *    does no I/O but renames, can leave some files new and some old.
 * 3. Deletions come last, so a crash never leaves a package with resources removed but their
 *    replacements missing. Then the folders are fsynced so the renames themselves are durable.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';

export class PackageWriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PackageWriteError';
  }
}

interface Staged {
  rel: string;
  target: string;
  temp: string;
}

export interface AtomicWriteOptions {
  /** Every written file gets exactly this mode (e.g. 0o600 for a file that names credentials), new or replaced. */
  mode?: number;
}

/** `changes`: slash-separated path relative to `root` → new text, or null to delete. */
export function writeFilesAtomically(root: string, changes: ReadonlyMap<string, string | null>, options: AtomicWriteOptions = {}): void {
  const writes = [...changes].filter((c): c is [string, string] => c[1] !== null);
  const deletions = [...changes].filter(([, text]) => text === null).map(([rel]) => rel);
  const made: string[] = [];
  const staged: Staged[] = [];
  try {
    for (const [rel, text] of writes) staged.push(stage(root, rel, text, made, options.mode));
  } catch (err) {
    for (const s of staged) removeQuietly(s.temp);
    removeMadeFolders(made);
    throw err;
  }
  const done: string[] = [];
  for (const [i, s] of staged.entries()) {
    try {
      renameSync(s.temp, s.target);
      done.push(s.rel);
    } catch (err) {
      for (const rest of staged.slice(i)) removeQuietly(rest.temp);
      throw new PackageWriteError(
        `cannot replace ${s.rel}: ${(err as Error).message}. The package is partly written: ${done.length ? `${done.join(', ')} replaced` : 'nothing replaced'}, ${staged
          .slice(i)
          .map((r) => r.rel)
          .join(', ')} not; nothing was deleted. Run again once the cause is fixed`,
      );
    }
  }
  for (const rel of deletions) rmSync(path.join(root, rel), { force: true });
  syncFolders(new Set([...staged.map((s) => path.dirname(s.target)), ...deletions.map((rel) => path.dirname(path.join(root, rel)))]));
}

function stage(root: string, rel: string, text: string, made: string[], forcedMode?: number): Staged {
  const full = path.join(root, rel);
  const exists = existsSync(full);
  // A symlinked file is written where it points, as writing through the link did before.
  const target = exists && lstatSync(full).isSymbolicLink() ? realpathSync(full) : full;
  if (exists && statSync(target).isDirectory()) throw new PackageWriteError(`cannot write ${rel}: a folder of that name is in the way; nothing was changed`);
  const dir = path.dirname(target);
  try {
    makeFolders(dir, made);
  } catch (err) {
    throw new PackageWriteError(`cannot make the folder of ${rel} (${(err as Error).message}); nothing was changed`);
  }
  const temp = path.join(dir, `.${path.basename(target)}.berth-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  // A replaced file keeps its permissions; a new one gets the usual 0666 less the umask.
  const mode = forcedMode ?? (exists ? statSync(target).mode & 0o7777 : 0o666);
  let fd: number | undefined;
  try {
    fd = openSync(temp, 'wx', mode);
    // A forced mode holds whatever the umask says (the temp file is private from its first byte).
    if (forcedMode !== undefined) fchmodSync(fd, forcedMode);
    const data = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
    fsyncSync(fd);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    removeQuietly(temp);
    throw new PackageWriteError(`cannot write ${rel}: ${(err as Error).message}; nothing was changed`);
  }
  closeSync(fd);
  return { rel, target, temp };
}

/** mkdir -p that remembers what it made, so a failed write can take it away again. */
function makeFolders(dir: string, made: string[]): void {
  const missing: string[] = [];
  let d = dir;
  for (; !existsSync(d); d = path.dirname(d)) missing.unshift(d);
  if (!statSync(d).isDirectory()) throw new PackageWriteError(`${d} is a file, not a folder`);
  for (const d of missing) {
    mkdirSync(d);
    made.push(d);
  }
}

/** Cleanup after a failure: what cannot be removed must not hide the failure itself. */
function removeQuietly(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch {
    // e.g. ENOTDIR: the temp file was never made
  }
}

function removeMadeFolders(made: string[]): void {
  for (const d of [...made].reverse()) {
    try {
      rmdirSync(d);
    } catch {
      // not empty: something else put a file there meanwhile; leave it
    }
  }
}

function syncFolders(dirs: Set<string>): void {
  for (const dir of dirs) {
    let fd: number | undefined;
    try {
      fd = openSync(dir, 'r');
      fsyncSync(fd);
    } catch {
      // Some file systems cannot fsync a folder; the renames are done either way.
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}
