// One container instance's log: a CRI-format file under the state dir plus live subscribers (follow).
// Writes are synchronous so that "read the file, then subscribe" in one tick never loses or doubles a record.
import { closeSync, existsSync, openSync, readFileSync, writevSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import {
  encodedParts,
  formatNs,
  LineSplitter,
  nowNs,
  parseRecords,
  renderRecord,
  selectRecords,
  streamSelected,
  type LogRecord,
  type LogStream,
  type RenderOptions,
} from './log-format.js';

export class ContainerLog {
  private fd: number | undefined;
  private readonly splitters = { stdout: new LineSplitter(), stderr: new LineSplitter() };
  private readonly listeners = new Set<(r: LogRecord | null) => void>();
  /** the streams that have at least one record in the file */
  readonly written = new Set<LogStream>();

  constructor(readonly file: string) {
    this.fd = openSync(file, 'a');
  }

  get closed(): boolean {
    return this.fd === undefined;
  }

  write(stream: LogStream, chunk: Buffer): void {
    if (this.fd === undefined) return;
    for (const piece of this.splitters[stream].push(chunk)) this.append({ time: formatNs(nowNs()), stream, ...piece });
  }

  /** the container ended: flush unfinished lines and end every follower */
  close(): void {
    if (this.fd === undefined) return;
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = this.splitters[stream].flush();
      if (rest) this.append({ time: formatNs(nowNs()), stream, ...rest });
    }
    closeSync(this.fd);
    this.fd = undefined;
    for (const l of [...this.listeners]) l(null);
    this.listeners.clear();
  }

  /** null = the log ended */
  subscribe(listener: (r: LogRecord | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private append(r: LogRecord): void {
    writeAll(this.fd!, encodedParts(r));
    this.written.add(r.stream);
    for (const l of this.listeners) l(r);
  }
}

/** writes every byte of `parts`: a write to a file may be short */
function writeAll(fd: number, parts: Buffer[]): void {
  let rest = parts;
  for (;;) {
    let n = writevSync(fd, rest);
    const left: Buffer[] = [];
    for (const p of rest) {
      if (n >= p.length) n -= p.length;
      else {
        left.push(p.subarray(n));
        n = 0;
      }
    }
    if (left.length === 0) return;
    rest = left;
  }
}

/** how much of the existing log one write carries */
const WRITE_BATCH_BYTES = 256 * 1024;
/** a rendered record this long is written by itself rather than copied into a batch */
const WHOLE_RECORD_BYTES = 8 * 1024;
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
  const pieces = renderedPieces(opts);
  const existing = existsSync(file) ? parseRecords(readFileSync(file)) : [];
  for (const batch of pieces.of(selectRecords(existing, opts))) out.write(batch);
  const last = pieces.end();
  if (last) out.write(last);
  if (pieces.full() || !following) {
    out.end();
    return out;
  }
  const unsubscribe = live!.subscribe((r) => {
    if (r === null) {
      out.end();
      return;
    }
    if (!streamSelected(r.stream, opts.stream)) return;
    const piece = pieces.take(renderRecord(r, opts.timestamps));
    if (piece) out.write(piece);
    if (pieces.full()) {
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
  const pieces = renderedPieces(opts);
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    let carry: Buffer = Buffer.alloc(0);
    while (!pieces.full()) {
      // a record cut by the last block's end (at most a record's length) leads the next block
      const block = Buffer.allocUnsafe(carry.length + READ_BLOCK_BYTES);
      carry.copy(block);
      const { bytesRead } = await handle.read(block, carry.length, READ_BLOCK_BYTES, null);
      if (bytesRead === 0) break;
      const data = block.subarray(0, carry.length + bytesRead);
      const end = data.lastIndexOf(0x0a) + 1;
      carry = data.subarray(end);
      yield* pieces.of(selectRecords(parseRecords(data.subarray(0, end)), opts));
    }
  } finally {
    await handle.close();
  }
  const last = pieces.end();
  if (last) yield last;
}

/**
 * Rendered records gathered into writes of WRITE_BATCH_BYTES rather than one per record (a record is at
 * most a line, or 16 KiB of a longer one): each write is a chunk, and a TLS record or more, on the way out.
 * Records of a long line go out as they are, not copied into a batch: every copy of a log's megabytes is
 * memory outside the heap that ends in a full garbage collection. Cut exactly at limitBytes.
 */
function renderedPieces(opts: ServeLogOptions) {
  let budget = opts.limitBytes !== undefined && opts.limitBytes > 0 ? opts.limitBytes : Infinity;
  let batch: Buffer[] = [];
  let batched = 0;
  const take = (b: Buffer): Buffer | undefined => {
    if (budget <= 0) return undefined;
    const piece = b.length > budget ? b.subarray(0, budget) : b;
    budget -= piece.length;
    return piece;
  };
  const end = (): Buffer | undefined => {
    const joined = batch.length === 0 ? undefined : batch.length === 1 ? batch[0]! : Buffer.concat(batch, batched);
    batch = [];
    batched = 0;
    return joined;
  };
  return {
    take,
    end,
    full: (): boolean => budget <= 0,
    *of(records: Iterable<LogRecord>): Generator<Buffer> {
      for (const r of records) {
        const piece = take(renderRecord(r, opts.timestamps));
        if (!piece) return;
        if (piece.length >= WHOLE_RECORD_BYTES) {
          const before = end();
          if (before) yield before;
          yield piece;
          if (budget <= 0) return;
          continue;
        }
        batch.push(piece);
        batched += piece.length;
        if (batched >= WRITE_BATCH_BYTES || budget <= 0) yield end()!;
        if (budget <= 0) return;
      }
    },
  };
}
