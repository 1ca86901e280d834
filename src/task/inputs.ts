/**
 * Local input folders → one tar stream for the pod's `inputs` container. As fly execute uploads them:
 * in a git work tree only what git would take (tracked files and untracked files that are not
 * ignored: `git ls-files --cached --others --exclude-standard`), everything with --include-ignored or
 * outside git. The file feed ends the archive with its marker, so a cut stream is never taken for all inputs.
 */
import { execFile } from 'node:child_process';
import { chmod, copyFile, lstat, mkdir, readFile, readdir, readlink, stat, symlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { extract, type Header } from 'tar-stream';
import type { AddEntry, FeedContent } from '../runtime/feed-tar.js';
import { TaskUsageError, type Layout } from './layout.js';

const run = promisify(execFile);

/** Fails (before any pod exists) when an input's folder is missing or is not a folder. */
export async function checkInputDirs(layout: Layout): Promise<void> {
  for (const i of layout.inputs) {
    if (i.tar || i.from) continue;
    const s = await stat(i.dir).catch(() => undefined);
    if (!s) throw new TaskUsageError(`input \`${i.name}\`: ${i.dir} does not exist (-i ${i.name}=DIR names a local folder)`);
    if (!s.isDirectory()) throw new TaskUsageError(`input \`${i.name}\`: ${i.dir} is a file, not a folder (-i ${i.name}=DIR names a local folder)`);
  }
}

/** Paths below `dir` that fly would upload (relative, '/'-separated), folders first. */
export async function inputFiles(dir: string, includeIgnored: boolean): Promise<string[]> {
  if (!includeIgnored) {
    const listed = await run('git', ['-C', dir, 'ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', '.'], {
      maxBuffer: 256 * 1024 * 1024,
    }).then(
      (r) => r.stdout,
      () => undefined, // not a git work tree (or no git): everything
    );
    if (listed !== undefined) {
      const files = [...new Set(listed.split('\0').filter(Boolean))];
      const dirs = new Set<string>();
      for (const f of files) for (let i = f.indexOf('/'); i > 0; i = f.indexOf('/', i + 1)) dirs.add(f.slice(0, i));
      return [...[...dirs].sort(), ...files.sort()];
    }
  }
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of (await readdir(join(dir, rel), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      out.push(p);
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk('');
  return out;
}

/**
 * A local folder given as an artifact (-i of a plan) copied into an -o folder: what its upload would take
 * (in a git work tree, what git would take), with the same modes and links.
 */
export async function copyInputFolder(from: string, to: string): Promise<void> {
  const src = resolve(from);
  const dest = resolve(to);
  if (src === dest) return;
  await mkdir(dest, { recursive: true });
  for (const rel of await inputFiles(src, false)) {
    const s = await lstat(join(src, rel)).catch(() => undefined);
    const target = join(dest, rel);
    if (!s) continue;
    if (s.isDirectory()) await mkdir(target, { recursive: true });
    else {
      await mkdir(dirname(target), { recursive: true });
      if (s.isSymbolicLink()) await symlink(await readlink(join(src, rel)), target);
      else if (s.isFile()) {
        await copyFile(join(src, rel), target);
        await chmod(target, s.mode & 0o7777);
      }
    }
  }
}

/** Every input at its path below the working directory, as the content of the inputs' file feed (runtime/file-feed.ts). */
export function inputsContent(layout: Layout, includeIgnored: boolean): FeedContent {
  return async (entry) => {
    let current = '';
    try {
      for (const input of layout.inputs) {
        current = input.name;
        if (input.from) continue; // fetched by the pod itself, from the pod that produced it
        const prefix = input.path === '.' ? '' : `${input.path}/`;
        if (prefix) await entry({ name: input.path, type: 'directory', mode: 0o755 });
        if (input.tar) await addArtifact(entry, input.tar, prefix);
        else await addFolder(entry, resolve(input.dir), prefix, includeIgnored);
      }
    } catch (err) {
      throw new InputReadError(current, err as NodeJS.ErrnoException);
    }
  };
}

/** An artifact of an earlier step: its entries, moved below the input's path. */
async function addArtifact(entry: AddEntry, tar: Buffer, prefix: string): Promise<void> {
  for (const e of await tarEntries(tar)) {
    const name = `${prefix}${e.header.name.replace(/^\.\/?/, '')}`;
    if (name === prefix || name === '') continue;
    // a hard link names another entry of the archive, which moved below the input's path too
    const linkname = e.header.type === 'link' ? `${prefix}${(e.header.linkname ?? '').replace(/^\.\/?/, '')}` : e.header.linkname;
    await entry({ ...e.header, name, linkname }, e.data);
  }
}

/** A local folder: what fly would upload of it, with its modes and links. */
async function addFolder(entry: AddEntry, root: string, prefix: string, includeIgnored: boolean): Promise<void> {
  for (const rel of await inputFiles(root, includeIgnored)) {
    const abs = join(root, rel);
    const s = await lstat(abs).catch(() => undefined);
    if (!s) continue; // tracked but deleted in the work tree: fly skips it too
    const name = `${prefix}${rel}`;
    if (s.isDirectory()) await entry({ name, type: 'directory', mode: s.mode & 0o7777, mtime: s.mtime });
    else if (s.isSymbolicLink()) await entry({ name, type: 'symlink', linkname: await readlink(abs), mode: 0o777, mtime: s.mtime });
    else if (s.isFile()) await entry({ name, type: 'file', mode: s.mode & 0o7777, mtime: s.mtime }, await readFile(abs));
  }
}

/** A local input that could not be read while it was uploaded (a file berth may not read, one removed meanwhile). */
export class InputReadError extends Error {
  constructor(input: string, cause: NodeJS.ErrnoException) {
    super(
      `input \`${input}\`: cannot read ${cause.path ?? 'a file'} (${cause.code ?? cause.message}): berth uploads every file of an input folder (in a git work tree, what git would take): make it readable, or keep it out of the folder`,
      { cause },
    );
    this.name = 'InputReadError';
  }
}

/** The entries of a tar held in memory (artifacts are small enough to be held: they were read whole). */
export function tarEntries(tar: Buffer): Promise<Array<{ header: Header; data: Buffer }>> {
  return new Promise((resolvePromise, reject) => {
    const out: Array<{ header: Header; data: Buffer }> = [];
    const ex = extract();
    ex.on('entry', (header: Header, body, next) => {
      const chunks: Buffer[] = [];
      body.on('data', (c: unknown) => void chunks.push(c as Buffer));
      body.on('end', () => {
        out.push({ header, data: Buffer.concat(chunks) });
        next();
      });
    });
    ex.on('finish', () => resolvePromise(out));
    ex.on('error', reject);
    ex.end(tar);
  });
}
