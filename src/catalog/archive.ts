/**
 * Exec providers shipped as `.tar.gz` archives (as krew plugins and most release pages ship binaries).
 * The archive's bytes have already been checked against the catalog's sha256 when they get here. Every
 * entry is checked before a single file is written: no absolute names, no `..`, no entry written
 * through a symlink of the archive, no symlink or hardlink that points outside the folder (or that
 * would reach outside through another symlink), and nothing but files, folders and links. Then the
 * whole tree is written into a folder of its own.
 */
import { chmodSync, copyFileSync, mkdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';

export class UnsafeArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeArchiveError';
  }
}

/** gzip's magic bytes: how an archive is told from a bare executable (URIs need not end in .tgz). */
export function isGzip(data: Buffer): boolean {
  return data.length > 2 && data[0] === 0x1f && data[1] === 0x8b;
}

/** Inflated archives larger than this are refused (a gzip bomb must not fill the disk). */
const MAX_INFLATED = 2 * 1024 * 1024 * 1024 - 1;

export interface ArchiveEntry {
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'link';
  mode: number;
  data?: Buffer;
  linkname?: string;
}

/** `./a//b/` → `a/b`; refuses absolute names and `..`. Empty for the archive's root folder. */
function cleanName(raw: string, what: string, archive: string): string {
  if (raw.startsWith('/') || /^[A-Za-z]:[\\/]/.test(raw)) throw new UnsafeArchiveError(`${archive}: ${what} ${raw} is an absolute path: refusing the archive`);
  if (raw.split(/[\\/]/).includes('..')) throw new UnsafeArchiveError(`${archive}: ${what} ${raw} climbs out with "..": refusing the archive`);
  const clean = path.posix.normalize(raw.replace(/\\/g, '/')).replace(/\/+$/, '');
  return clean === '.' ? '' : clean.replace(/^\.\//, '');
}

export async function readTarGz(data: Buffer, archive: string): Promise<ArchiveEntry[]> {
  let tar: Buffer;
  try {
    tar = gunzipSync(data, { maxOutputLength: MAX_INFLATED });
  } catch (err) {
    throw new UnsafeArchiveError(`${archive} is not a readable gzip archive: ${(err as Error).message}`);
  }
  const entries: ArchiveEntry[] = [];
  const ex = extract();
  Readable.from([tar]).pipe(ex);
  try {
    for await (const entry of ex) {
      const h = entry.header;
      const chunks: Buffer[] = [];
      for await (const c of entry) chunks.push(c as Buffer);
      const type = h.type === 'contiguous-file' ? 'file' : h.type;
      if (type !== 'file' && type !== 'directory' && type !== 'symlink' && type !== 'link')
        throw new UnsafeArchiveError(`${archive}: ${h.name} is a ${h.type ?? 'special file'}: refusing the archive`);
      entries.push({ name: h.name, type, mode: h.mode ?? 0o644, data: type === 'file' ? Buffer.concat(chunks) : undefined, linkname: h.linkname ?? undefined });
    }
  } catch (err) {
    if (err instanceof UnsafeArchiveError) throw err;
    throw new UnsafeArchiveError(`${archive} is not a valid tar archive: ${(err as Error).message}`);
  }
  return entries;
}

/** Follows a symlink's target segment by segment from its folder: outside, through another symlink, or inside. */
function walkLink(name: string, link: string, symlinks: ReadonlySet<string>): 'inside' | 'outside' | { through: string } {
  const at = path.posix
    .dirname(name)
    .split('/')
    .filter((p) => p && p !== '.');
  const steps = link.split('/').filter((p) => p && p !== '.');
  for (const [i, step] of steps.entries()) {
    if (step === '..') {
      if (!at.length) return 'outside';
      at.pop();
      continue;
    }
    at.push(step);
    if (i < steps.length - 1 && symlinks.has(at.join('/'))) return { through: at.join('/') };
  }
  return 'inside';
}

/** Checks every entry, then writes them under `dir` (which must not exist yet). */
export function writeChecked(entries: ArchiveEntry[], dir: string, archive: string): void {
  const named = entries.map((e) => ({ ...e, name: cleanName(e.name, 'entry', archive) })).filter((e) => e.name !== '');
  const symlinks = new Set(named.filter((e) => e.type === 'symlink').map((e) => e.name));
  const throughSymlink = (rel: string): string | undefined => {
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (symlinks.has(prefix)) return prefix;
    }
    return undefined;
  };
  const seen = new Set<string>();
  for (const e of named) {
    // tar lets a later entry replace an earlier one; for an executable that is a way to hide what runs.
    if (e.type !== 'directory' && seen.has(e.name)) throw new UnsafeArchiveError(`${archive}: ${e.name} appears twice: refusing the archive`);
    seen.add(e.name);
    const via = throughSymlink(e.name);
    if (via) throw new UnsafeArchiveError(`${archive}: ${e.name} would be written through the symlink ${via}: refusing the archive`);
    if (e.type === 'symlink') {
      const link = e.linkname ?? '';
      if (link.startsWith('/')) throw new UnsafeArchiveError(`${archive}: symlink ${e.name} points to the absolute path ${link}: refusing the archive`);
      const walked = walkLink(e.name, link, symlinks);
      if (walked === 'outside') throw new UnsafeArchiveError(`${archive}: symlink ${e.name} -> ${link} points outside the archive: refusing it`);
      // `d -> .` then `x -> d/../y` stays inside on paper and leaves in fact: no target may pass a symlink.
      if (walked !== 'inside')
        throw new UnsafeArchiveError(`${archive}: symlink ${e.name} -> ${link} passes through the symlink ${walked.through}: refusing the archive`);
    }
    if (e.type === 'link') {
      const target = cleanName(e.linkname ?? '', `hardlink ${e.name} ->`, archive);
      const file = named.find((x) => x.name === target && x.type === 'file');
      if (!file) throw new UnsafeArchiveError(`${archive}: hardlink ${e.name} -> ${e.linkname} names no file of the archive: refusing it`);
      e.linkname = target;
    }
  }
  mkdirSync(dir, { recursive: true });
  for (const e of named) {
    const to = path.join(dir, ...e.name.split('/'));
    if (e.type === 'directory') {
      mkdirSync(to, { recursive: true });
      continue;
    }
    mkdirSync(path.dirname(to), { recursive: true });
    // No setuid/setgid/sticky bits, and nothing writable by others, whatever the archive says.
    const mode = e.mode & 0o755;
    if (e.type === 'file') writeFileSync(to, e.data ?? Buffer.alloc(0), { mode, flag: 'wx' });
    else if (e.type === 'link') copyFileSync(path.join(dir, ...e.linkname!.split('/')), to);
    else symlinkSync(e.linkname!, to);
    if (e.type !== 'symlink') chmodSync(to, mode);
  }
}

/**
 * The executable of an unpacked archive. KEP-2906 gives each exec platform a `bin` (as krew's plugin
 * manifests do): the path of the executable inside the archive. When no entry has that path, a file
 * whose name is `bin`'s last part is taken if there is exactly one; else the archive's only
 * executable file. Anything else is ambiguous and refused, naming the candidates.
 */
export function findExecutable(entries: ArchiveEntry[], dir: string, bin: string, archive: string): string {
  const files = entries
    .map((e) => ({ ...e, name: cleanName(e.name, 'entry', archive) }))
    .filter((e) => e.type === 'file' || e.type === 'link' || e.type === 'symlink');
  const want = path.posix.normalize(bin.replace(/^\.\//, ''));
  let chosen = files.find((e) => e.name === want);
  if (!chosen) {
    const sameName = files.filter((e) => path.posix.basename(e.name) === path.posix.basename(want));
    const executables = files.filter((e) => e.type !== 'symlink' && (e.mode & 0o111) !== 0);
    chosen = sameName.length === 1 ? sameName[0] : sameName.length === 0 && executables.length === 1 ? executables[0] : undefined;
    if (!chosen) {
      const candidates = (sameName.length ? sameName : executables).map((e) => e.name);
      throw new UnsafeArchiveError(
        `${archive} has no file ${bin} and ${candidates.length ? `several candidates (${candidates.join(', ')})` : 'no executable file'}: the catalog's bin must name the executable's path in the archive`,
      );
    }
  }
  const file = path.join(dir, ...chosen.name.split('/'));
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    throw new UnsafeArchiveError(`${archive}: ${chosen.name} is a link to nothing`);
  }
  const root = realpathSync(dir);
  if (!real.startsWith(`${root}${path.sep}`)) throw new UnsafeArchiveError(`${archive}: ${chosen.name} resolves outside the archive: refusing it`);
  if (!statSync(real).isFile()) throw new UnsafeArchiveError(`${archive}: ${chosen.name} is not a file`);
  return real;
}
