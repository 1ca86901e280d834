/**
 * Outputs back to the caller's folders (-o NAME=DIR): `tar -c` of the output's folder through exec in
 * the pod's `outputs` container, unpacked as it streams in, into a folder beside DIR that becomes DIR's
 * content only once the read completed. Reading is idempotent, so a session that drops (or ends without
 * its exit status) is simply read again into a fresh folder; a read that never completes fails the run
 * (code 2), it never passes for a complete output, and DIR is then left as it was. A read the outputs
 * container refused with an exit status (output-read.ts) would be refused again: it fails the run at once.
 */
import { randomBytes } from 'node:crypto';
import { access, constants, lstat, mkdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { extract, type Header } from 'tar-stream';
import { retrying, RetriesSpent, type Backoff } from '../kube/backoff.js';
import type { ExecOutcome } from '../kube/client.js';
import { TaskUsageError, type Layout } from './layout.js';
import { OUTPUTS_CONTAINER } from './pod-plan.js';
import { moveInto, unpackStream, unpackTar } from './unpack.js';
import { OutputReadRefused, outputCheckCommand, outputReadFailure, outputTarCommand } from './output-read.js';

export interface ExecClient {
  exec(
    pod: string,
    container: string,
    command: string[],
    io: { stdout?: Writable; stderr?: Writable },
  ): Promise<{ session: { close(): void }; done: Promise<ExecOutcome> }>;
}

/** A broken read is read again: 8 tries, 200 ms doubling to 2 s between them. */
const READ_BACKOFF: Backoff = { initialMs: 200, maxMs: 2000, budgetMs: Infinity, tries: 8 };

/** An output as the task names it: its name, and its folder relative to the working directory. */
type Output = { name: string; path: string };

/** Each output asked for: unpacked into its -o folders, or kept in memory as an artifact (plans). */
export async function downloadOutputs(
  kube: ExecClient,
  pod: string,
  layout: Layout,
  say: (line: string) => void,
  signal: AbortSignal,
): Promise<Map<string, Buffer>> {
  const artifacts = new Map<string, Buffer>();
  for (const o of layout.outputs) {
    if (!o.dirs.length && !o.capture) continue;
    const tar = o.capture ? await readOutputTar(kube, pod, layout.workDir, o, signal) : undefined;
    if (tar) artifacts.set(o.name, tar);
    for (const dir of o.dirs) {
      await (tar ? placeTar(tar, resolve(dir), signal) : downloadInto(kube, pod, layout.workDir, o, resolve(dir), signal));
      say(`downloaded output ${o.name} to ${dir}`);
    }
  }
  return artifacts;
}

/** A tar already read, into `dest` (through a folder beside it, as a download). */
async function placeTar(tar: Buffer, dest: string, signal: AbortSignal): Promise<void> {
  // interrupted while reading: no folder is written (the run ends interrupted, exit 3)
  if (signal.aborted) throw new Error('interrupted');
  const staging = await stagingFor(dest);
  try {
    await unpackTar(tar, staging);
    await moveInto(staging, dest);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** One output streamed into `dest`, read again after a broken read (up to 8 tries: READ_BACKOFF). */
async function downloadInto(kube: ExecClient, pod: string, workDir: string, o: Output, dest: string, signal: AbortSignal): Promise<void> {
  await retried(o.name, pod, signal, async () => {
    const staging = await stagingFor(dest);
    try {
      await streamOnce(kube, pod, workDir, o, staging, signal);
      if (signal.aborted) throw new Error('interrupted');
      await moveInto(staging, dest);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  });
}

/**
 * A fresh folder on `dest`'s file system (moved into place by renames): inside `dest` when it exists (its
 * parent may not be berth's to write: -o out=.), else beside it, its parent made.
 */
async function stagingFor(dest: string): Promise<string> {
  const name = `.berth-partial-${randomBytes(4).toString('hex')}`;
  if (
    await stat(dest).then(
      (s) => s.isDirectory(),
      () => false,
    )
  )
    return join(dest, name);
  await mkdir(dirname(dest), { recursive: true });
  return join(dirname(dest), `.${basename(dest)}${name}`);
}

/**
 * The output folder unpacked into `into` as it streams in; only an exec that ended with tar's exit status 0
 * and a complete archive counts. An abort, or a write that failed, closes the session at once.
 */
async function streamOnce(kube: ExecClient, pod: string, workDir: string, o: Output, into: string, signal: AbortSignal): Promise<void> {
  const stdout = new PassThrough();
  let unpackError: Error | undefined;
  const unpacked = unpackStream(stdout, into);
  unpacked.catch((err: Error) => (unpackError = err));
  try {
    await execOnOutput(kube, pod, outputTarCommand(`${workDir}/${o.path}`), o, stdout, signal, unpacked);
    stdout.end();
    await unpacked;
  } catch (err) {
    // ends the unpacking too (its open file is closed), not only the bytes
    stdout.destroy(err as Error);
    // a write that failed here closed the session: its cause is the one to tell
    throw unpackError ?? err;
  }
}

/**
 * One of output-read.ts's commands on the output's folder, through an exec in the outputs container (the tar
 * into `stdout`): resolves once it exited 0, and fails with what a refused read means (outputReadFailure). An
 * abort closes the session at once (an output of gigabytes is not read to its end first); so does
 * `closeOnFailure` failing (the bytes have nowhere to go).
 */
async function execOnOutput(
  kube: ExecClient,
  pod: string,
  command: string[],
  o: Output,
  stdout: Writable | undefined,
  signal: AbortSignal,
  closeOnFailure?: Promise<unknown>,
): Promise<void> {
  const stderr = collect();
  const { session, done } = await kube.exec(pod, OUTPUTS_CONTAINER, command, { stdout, stderr: stderr.sink });
  const close = (): void => session.close();
  signal.addEventListener('abort', close, { once: true });
  if (signal.aborted) close();
  closeOnFailure?.catch(close);
  try {
    const outcome: ExecOutcome = await done;
    if (signal.aborted) throw new Error('interrupted');
    if (outcome.exitCode !== 0) throw outputReadFailure(o.name, o.path, outcome.exitCode, stderr.text());
  } finally {
    signal.removeEventListener('abort', close);
  }
}

/** `attempt` until it succeeds, up to READ_BACKOFF.tries times, pausing longer after each failure; never after an abort, nor after a refusal. */
async function retried<T>(name: string, pod: string, signal: AbortSignal, attempt: () => Promise<T>): Promise<T> {
  if (signal.aborted) throw new Error('interrupted');
  try {
    return await retrying(attempt, { backoff: READ_BACKOFF, retryable: (err) => !(err instanceof OutputReadRefused), signal });
  } catch (err) {
    if (signal.aborted) throw new Error('interrupted', { cause: err });
    if (!(err instanceof RetriesSpent)) throw err;
    throw new Error(`could not download output \`${name}\` from pod ${pod} after ${err.tries} tries: ${(err.last as Error).message}`, { cause: err });
  }
}

/** A Writable keeping what is written (a command's stderr), and its text. */
function collect(): { sink: Writable; text(): string } {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(c: Buffer, _e, cb) {
      chunks.push(c);
      cb();
    },
  });
  return { sink, text: () => Buffer.concat(chunks).toString('utf8').trim() };
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
      if (
        !s &&
        (await lstat(dir).then(
          () => true,
          () => false,
        ))
      )
        throw new TaskUsageError(`${flag}: ${dir} is a link to nothing: name a folder (made if missing) to download the output into`);
      if (s instanceof Error) throw new TaskUsageError(`${flag}: ${dir} cannot be used (${s.code ?? s.message}): name a folder berth may write`);
      if (s && !s.isDirectory())
        throw new TaskUsageError(`${flag}: ${dir} is a file, not a folder: name a folder (made if missing) to download the output into`);
      if (s) {
        if (
          !(await access(dir, constants.W_OK | constants.X_OK).then(
            () => true,
            () => false,
          ))
        )
          throw new TaskUsageError(`${flag}: ${dir} cannot be written by berth: name a folder it may write`);
        break;
      }
      dir = dirname(dir);
    }
  }
}

/** One output's folder as a whole tar in memory (an artifact of a plan), read again after a broken read (up to 8 tries: READ_BACKOFF). */
export function readOutputTar(kube: ExecClient, pod: string, workDir: string, o: Output, signal: AbortSignal): Promise<Buffer> {
  return retried(o.name, pod, signal, () => readOnce(kube, pod, workDir, o, signal));
}

/** The output folder as a tar, whole: only tar's exit status 0 and a complete archive count. */
async function readOnce(kube: ExecClient, pod: string, workDir: string, o: Output, signal: AbortSignal): Promise<Buffer> {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  await execOnOutput(kube, pod, outputTarCommand(`${workDir}/${o.path}`), o, stdout, signal);
  const tar = Buffer.concat(chunks);
  await checkTar(tar);
  return tar;
}

/**
 * Fails as a read of the output would (output-read.ts) when its folder is no longer the folder the task was
 * given: for an output that its pod serves to later steps (direct artifacts), where berth reads nothing.
 */
export function checkOutputFolder(kube: ExecClient, pod: string, workDir: string, o: Output, signal: AbortSignal): Promise<void> {
  return retried(o.name, pod, signal, () => execOnOutput(kube, pod, outputCheckCommand(`${workDir}/${o.path}`), o, undefined, signal));
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
