/**
 * Outputs back to the caller's folders (-o NAME=DIR): `tar -c` of the output's folder through exec in
 * the pod's `outputs` container, unpacked as it streams in. Reading is idempotent, so a session that
 * drops (or ends without its exit status) is simply read again; a read that never completes fails the
 * run (code 2), it never passes for a complete output.
 */
import { access, constants, copyFile, link, lstat, mkdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { extract, type Header } from 'tar-stream';
import { safeEntryName } from '../runtime/files.js';
import type { ExecOutcome } from '../runtime/sandbox.js';
import { TaskUsageError, type Layout } from './layout.js';
import { OUTPUTS_CONTAINER } from './pod-plan.js';

export interface ExecClient {
  exec(pod: string, container: string, command: string[], io: { stdout?: Writable; stderr?: Writable }): Promise<{ session: { close(): void }; done: Promise<ExecOutcome> }>;
}

const ATTEMPTS = 8;

/** Each output asked for: unpacked into its -o folder, or kept in memory as an artifact (plans). */
export async function downloadOutputs(kube: ExecClient, pod: string, layout: Layout, say: (line: string) => void, signal: AbortSignal): Promise<Map<string, Buffer>> {
  const artifacts = new Map<string, Buffer>();
  for (const o of layout.outputs) {
    if (!o.dirs.length && !o.capture) continue;
    const tar = await readOutputTar(kube, pod, layout.workDir, o, signal);
    if (o.capture) artifacts.set(o.name, tar);
    // interrupted while reading: no folder is written (the run ends interrupted, exit 3)
    if (signal.aborted) throw new Error('interrupted');
    for (const dir of o.dirs) {
      await unpackTar(tar, resolve(dir));
      say(`downloaded output ${o.name} to ${dir}`);
    }
  }
  return artifacts;
}

/**
 * Fails (before any pod exists) when an -o folder could not be written once the task ended: a file in its
 * place or on its way, or a folder berth may not write. A folder that does not exist yet is made then.
 */
export async function checkOutputDirs(outputs: Array<{ name: string; dir: string }>, cwd: string): Promise<void> {
  for (const o of outputs) {
    const flag = `-o ${o.name}=${o.dir}`;
    let dir = resolve(cwd, o.dir);
    for (;;) {
      const s = await stat(dir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' || err.code === 'ENOTDIR' ? undefined : err));
      if (s instanceof Error) throw new TaskUsageError(`${flag}: ${dir} cannot be used (${s.code ?? s.message}): name a folder berth may write`);
      if (s && !s.isDirectory()) throw new TaskUsageError(`${flag}: ${dir} is a file, not a folder: name a folder (made if missing) to download the output into`);
      if (s) {
        if (!(await access(dir, constants.W_OK | constants.X_OK).then(() => true, () => false))) throw new TaskUsageError(`${flag}: ${dir} cannot be written by berth: name a folder it may write`);
        break;
      }
      dir = dirname(dir);
    }
  }
}

/** One output's folder as a whole tar, read again after a broken read (ATTEMPTS tries). */
export async function readOutputTar(kube: ExecClient, pod: string, workDir: string, o: { name: string; path: string }, signal: AbortSignal): Promise<Buffer> {
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) throw new Error('interrupted');
    try {
      return await readOnce(kube, pod, `${workDir}/${o.path}`, signal);
    } catch (err) {
      if (signal.aborted) throw new Error('interrupted', { cause: err });
      if (attempt >= ATTEMPTS) throw new Error(`could not download output \`${o.name}\` from pod ${pod} after ${ATTEMPTS} tries: ${(err as Error).message}`, { cause: err });
      await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** attempt)));
    }
  }
}

/**
 * The output folder as a tar, whole: only an exec that ended with tar's exit status 0 and a complete archive
 * counts. An abort closes the session at once (an output of gigabytes is not read to its end first).
 */
async function readOnce(kube: ExecClient, pod: string, from: string, signal: AbortSignal): Promise<Buffer> {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  const stderr: Buffer[] = [];
  const errors = new Writable({
    write(c: Buffer, _e, cb) {
      stderr.push(c);
      cb();
    },
  });
  const { session, done } = await kube.exec(pod, OUTPUTS_CONTAINER, ['tar', '-c', '-f', '-', '-C', from, '.'], { stdout, stderr: errors });
  const onAbort = (): void => session.close();
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) session.close();
  const outcome: ExecOutcome = await done.finally(() => signal.removeEventListener('abort', onAbort));
  if (signal.aborted) throw new Error('interrupted');
  if (outcome.exitCode !== 0) throw new Error(`tar exited ${outcome.exitCode}: ${Buffer.concat(stderr).toString('utf8').trim()}`);
  const tar = Buffer.concat(chunks);
  await checkTar(tar);
  return tar;
}

/** Unpacks a tar held in memory below `root` (created if needed). */
export async function unpackTar(tar: Buffer, root: string): Promise<void> {
  await mkdir(root, { recursive: true });
  const stream = new PassThrough();
  const unpacked = unpackInto(stream, root);
  stream.end(tar);
  await unpacked;
}

/** Rejects an archive cut short (tar-stream's "Unexpected end of data"). */
async function checkTar(tar: Buffer): Promise<void> {
  await new Promise<void>((res, rej) => {
    const ex = extract();
    ex.on('entry', (_h: Header, body, next) => {
      body.on('end', next);
      body.resume();
    });
    ex.on('finish', () => res());
    ex.on('error', rej);
    ex.end(tar);
  });
}

/** Unpacks a tar stream below `root`; nothing may land outside it. Resolves once the archive's end was read. */
function unpackInto(stream: PassThrough, root: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const ex = extract();
    ex.on('entry', (header: Header, body, next) => {
      const chunks: Buffer[] = [];
      body.on('data', (c: unknown) => void chunks.push(c as Buffer));
      body.on('end', () => {
        write(root, header, Buffer.concat(chunks)).then(() => next(), (err: Error) => ex.destroy(err));
      });
    });
    // A cut archive ends with tar-stream's "Unexpected end of data" error, never with finish.
    ex.on('finish', () => resolvePromise());
    ex.on('error', reject);
    stream.on('data', (c: Buffer) => ex.write(c));
    stream.on('end', () => ex.end(Buffer.alloc(0)));
  });
}

async function write(root: string, header: Header, data: Buffer): Promise<void> {
  const rel = safeEntryName(header.name);
  const target = rel ? join(root, rel) : root;
  if (target !== root && !target.startsWith(root + sep)) throw new Error(`output entry ${header.name} points outside ${root}`);
  if (header.type === 'directory') {
    await mkdir(target, { recursive: true, mode: (header.mode ?? 0o755) | 0o700 });
    return;
  }
  await mkdir(dirname(target), { recursive: true });
  await rm(target, { force: true, recursive: false }).catch(() => undefined);
  if (header.type === 'symlink') await symlink(header.linkname ?? '', target);
  else if (header.type === 'file' || header.type === 'contiguous-file') await writeFile(target, data, { mode: (header.mode ?? 0o644) & 0o7777 });
  else if (header.type === 'link') await hardLink(root, header, target);
  // devices and FIFOs hold no data: skipped, as a non-root tar skips what it cannot make
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
