// One container instance's log: a CRI-format file under the state dir plus live subscribers (follow).
// Writes are synchronous so that "read the file, then subscribe" in one tick never loses or doubles a record.
// The file is rotated as a kubelet rotates it (log-rotation.ts); followers go on with the new file's records.
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { LogRotation, type RotationSettings } from './log-rotation.js';
import { encodeRecords, LineSplitter, renderBlock, reserveNs, selectionStart, sinceStart, streamSelected, type LogStream, type RenderOptions } from './log-format.js';

export class ContainerLog {
  private fd: number | undefined;
  private readonly splitters = { stdout: new LineSplitter(), stderr: new LineSplitter() };
  private readonly listeners = new Set<(block: Buffer | null) => void>();
  /** the streams that have at least one record in the file */
  readonly written = new Set<LogStream>();

  private readonly rotation: LogRotation;

  /** `rotation`: the kubelet's settings, read at each write (they can change while the cluster runs) */
  constructor(
    readonly file: string,
    rotation: RotationSettings = { containerLogMaxBytes: 0, containerLogCheckMs: 0 },
  ) {
    this.fd = openSync(file, 'a');
    this.rotation = new LogRotation(file, rotation);
  }

  get closed(): boolean {
    return this.fd === undefined;
  }

  write(stream: LogStream, chunk: Buffer): void {
    if (this.fd === undefined) return;
    this.append(stream, this.splitters[stream].push(chunk));
  }

  /** the container ended: flush unfinished lines and end every follower */
  close(): void {
    if (this.fd === undefined) return;
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = this.splitters[stream].flush();
      if (rest) this.append(stream, [rest]);
    }
    closeSync(this.fd);
    this.fd = undefined;
    for (const l of [...this.listeners]) l(null);
    this.listeners.clear();
  }

  /** Each new block of file lines (the records of one chunk of output) as it is written; null = the log ended. */
  subscribe(listener: (block: Buffer | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** the records of one chunk: one write, one block for the followers */
  private append(stream: LogStream, pieces: { content: Buffer; partial: boolean }[]): void {
    if (pieces.length === 0) return;
    const block = encodeRecords(stream, pieces, reserveNs(pieces.length));
    writeAll(this.fd!, block);
    this.written.add(stream);
    for (const l of this.listeners) l(block);
    if (this.rotation.due(block.length)) {
      closeSync(this.fd!);
      try {
        this.rotation.rotate();
      } catch (err) {
        // the kubelet too logs a failed rotation and goes on writing the file it has
        process.stderr.write(`berth dev-cluster node: could not rotate ${this.file}: ${(err as Error).message}\n`);
      }
      this.fd = openSync(this.file, 'a');
    }
  }
}

/** writes every byte of `data`: a write to a file may be short */
function writeAll(fd: number, data: Buffer): void {
  for (let at = 0; at < data.length; ) at += writeSync(fd, data, at);
}

/** how much of an ended log's file one read takes */
const READ_BLOCK_BYTES = 1024 * 1024;

export interface ServeLogOptions extends RenderOptions {
  follow?: boolean;
  limitBytes?: number;
}

/**
 * The log as `pods/log` serves it: the selected existing records, then (follow and the log still open) new
 * records until the container ends or limitBytes is reached.
 */
export function serveLog(file: string, live: ContainerLog | undefined, opts: ServeLogOptions): Readable {
  const following = opts.follow && live && !live.closed;
  // An ended instance's log that never had a record of the stream asked for (KEP-3288: most containers
  // write no stderr) is empty without reading the other stream's megabytes.
  if (!following && live?.closed && opts.stream && opts.stream !== 'All' && ![...live.written].some((s) => streamSelected(s, opts.stream))) return Readable.from([]);
  // A tail needs the whole file before its first record; a follow must read the file and subscribe in one
  // tick. Anything else is streamed from the file block by block: the first bytes leave at once, and a log
  // of megabytes is never held whole.
  if (opts.tailLines === undefined && !following) return Readable.from(streamedRecords(file, opts), { objectMode: false });
  const out = new PassThrough();
  const budget = byteBudget(opts.limitBytes);
  const existing = existsSync(file) ? readFileSync(file) : Buffer.alloc(0);
  for (const piece of budget.take(renderBlock(existing.subarray(selectionStart(existing, opts)), opts))) out.write(piece);
  if (budget.full() || !following) {
    out.end();
    return out;
  }
  const unsubscribe = live!.subscribe((block) => {
    if (block === null) {
      out.end();
      return;
    }
    for (const piece of budget.take(renderBlock(block, opts))) out.write(piece);
    if (budget.full()) {
      unsubscribe();
      out.end();
    }
  });
  // the reader went away (client closed the request): stop following
  out.on('close', unsubscribe);
  return out;
}

/** an ended (or not followed) log's selected records, rendered, read from its file a block at a time */
async function* streamedRecords(file: string, opts: ServeLogOptions): AsyncGenerator<Buffer> {
  const budget = byteBudget(opts.limitBytes);
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    let carry: Buffer = Buffer.alloc(0);
    // `since` selects from a record on (a file's times only grow): once a block has it, all later records pass
    let sincePassed = opts.sinceNs === undefined;
    while (!budget.full()) {
      // a record cut by the last block's end (at most a record's length) leads the next block
      const block = Buffer.allocUnsafe(carry.length + READ_BLOCK_BYTES);
      carry.copy(block);
      const { bytesRead } = await handle.read(block, carry.length, READ_BLOCK_BYTES, null);
      if (bytesRead === 0) break;
      const data = block.subarray(0, carry.length + bytesRead);
      const end = data.lastIndexOf(0x0a) + 1;
      carry = data.subarray(end);
      let lines = data.subarray(0, end);
      if (!sincePassed) {
        const from = sinceStart(lines, opts.sinceNs!);
        sincePassed = from < lines.length;
        lines = lines.subarray(from);
      }
      yield* budget.take(renderBlock(lines, opts));
    }
  } finally {
    await handle.close();
  }
}

/** `limitBytes` of a response: what pieces go out whole, and the one cut where it is reached */
function byteBudget(limitBytes: number | undefined) {
  let left = limitBytes !== undefined && limitBytes > 0 ? limitBytes : Infinity;
  return {
    full: (): boolean => left <= 0,
    *take(pieces: Buffer[]): Generator<Buffer> {
      for (const p of pieces) {
        if (left <= 0) return;
        const piece = p.length > left ? p.subarray(0, left) : p;
        left -= piece.length;
        yield piece;
      }
    },
  };
}
