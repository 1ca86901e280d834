// One container instance's log: a CRI-format file under the state dir plus live subscribers (follow).
// Writes are synchronous so that "read the file, then subscribe" in one tick never loses or doubles a record.
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import {
  encodeRecord,
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
    writeSync(this.fd!, encodeRecord(r));
    for (const l of this.listeners) l(r);
  }
}

/** how much of the existing log one write carries */
const WRITE_BATCH_BYTES = 256 * 1024;

export interface ServeLogOptions extends RenderOptions {
  follow?: boolean;
  limitBytes?: number;
}

/**
 * The log as `pods/log` serves it: the selected existing records, then (follow and the log still open) new
 * records until the container ends or limitBytes is reached.
 */
export function serveLog(file: string, live: ContainerLog | undefined, opts: ServeLogOptions): Readable {
  const out = new PassThrough();
  let budget = opts.limitBytes !== undefined && opts.limitBytes > 0 ? opts.limitBytes : Infinity;
  const emit = (b: Buffer): boolean => {
    if (budget <= 0) return false;
    const piece = b.length > budget ? b.subarray(0, budget) : b;
    budget -= piece.length;
    out.write(piece);
    return budget > 0;
  };
  const existing = existsSync(file) ? parseRecords(readFileSync(file)) : [];
  let open = true;
  // What is already written goes out in large writes rather than one per record (a record is at most a
  // line, or 16 KiB of a longer one): each write is a chunk, and a TLS record or more, on the way out.
  let batch: Buffer[] = [];
  let batched = 0;
  const flush = (): void => {
    if (batch.length) emit(batch.length === 1 ? batch[0]! : Buffer.concat(batch, batched));
    batch = [];
    batched = 0;
  };
  for (const r of selectRecords(existing, opts)) {
    const piece = renderRecord(r, opts.timestamps);
    if (piece.length >= budget - batched) {
      batch.push(piece);
      batched += piece.length;
      flush();
      open = false;
      break;
    }
    batch.push(piece);
    batched += piece.length;
    if (batched >= WRITE_BATCH_BYTES) flush();
  }
  flush();
  if (!open || !opts.follow || !live || live.closed) {
    out.end();
    return out;
  }
  const unsubscribe = live.subscribe((r) => {
    if (r === null) {
      out.end();
      return;
    }
    if (!streamSelected(r.stream, opts.stream)) return;
    if (!emit(renderRecord(r, opts.timestamps))) {
      unsubscribe();
      out.end();
    }
  });
  // the reader went away (client closed the request): stop following
  out.on('close', unsubscribe);
  return out;
}
