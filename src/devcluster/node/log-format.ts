// The container log file format: the CRI format the kubelet reads (`<RFC3339Nano> <stream> <P|F> <content>`),
// one record per line of output. Keeping stdout and stderr as separate records with their own timestamps
// is what lets `pods/log` interleave them in time order, split them (KEP-3288) and prefix timestamps.

export type LogStream = 'stdout' | 'stderr';

export interface LogRecord {
  /** RFC3339 with nanoseconds, fixed width so records compare as strings */
  time: string;
  stream: LogStream;
  /** P: the line continues in the next record of this stream; F: the line ended with a newline */
  partial: boolean;
  content: Buffer;
}

/** the longest line kept in one record; longer lines are split into partial records, as containerd does */
export const MAX_RECORD_BYTES = 16 * 1024;

export function encodeRecord(r: LogRecord): Buffer {
  return Buffer.concat(encodedParts(r));
}

/** a record as the buffers of its line in the file, for a gathering write without a copy of the content */
export function encodedParts(r: LogRecord): Buffer[] {
  return [Buffer.from(`${r.time} ${r.stream} ${r.partial ? 'P' : 'F'} `), r.content, NEWLINE];
}

const STDOUT_BYTES = Buffer.from('stdout');
const STDERR_BYTES = Buffer.from('stderr');
const SPACE = 0x20;
const TAG_P = 0x50;
const TAG_F = 0x46;

/** records of a log file; malformed lines (a torn last write) are skipped. Contents are views into `data`. */
export function parseRecords(data: Buffer): LogRecord[] {
  const out: LogRecord[] = [];
  let start = 0;
  while (start < data.length) {
    const end = data.indexOf(0x0a, start);
    if (end < 0) break;
    const line = data.subarray(start, end);
    start = end + 1;
    const s1 = line.indexOf(SPACE);
    if (s1 < 0 || line.length < s1 + 10 || line[s1 + 7] !== SPACE || line[s1 + 9] !== SPACE) continue;
    const name = line.subarray(s1 + 1, s1 + 7);
    const stream = name.equals(STDOUT_BYTES) ? 'stdout' : name.equals(STDERR_BYTES) ? 'stderr' : undefined;
    const tag = line[s1 + 8];
    if (!stream || (tag !== TAG_P && tag !== TAG_F)) continue;
    out.push({ time: line.toString('latin1', 0, s1), stream, partial: tag === TAG_P, content: line.subarray(s1 + 10) });
  }
  return out;
}

/**
 * Cuts one stream's raw output into records at newlines, holding back an unfinished line. The records are
 * views of the chunk they came in (they are written and handed on at once); only the held-back part is
 * copied, so a container's megabytes of output cost no copies of their own on the way to the log file.
 */
export class LineSplitter {
  private pending: Buffer = EMPTY;

  /** complete lines (without the newline) and, for over-long lines, partial pieces */
  push(chunk: Buffer): { content: Buffer; partial: boolean }[] {
    const out: { content: Buffer; partial: boolean }[] = [];
    let data = chunk;
    if (this.pending.length) {
      // the held-back part is completed first, by the rest of its line or up to a whole record
      const room = MAX_RECORD_BYTES - this.pending.length;
      const nl = chunk.indexOf(0x0a);
      if (nl >= 0 && nl <= room) {
        out.push({ content: Buffer.concat([this.pending, chunk.subarray(0, nl)]), partial: false });
        data = chunk.subarray(nl + 1);
      } else if (chunk.length >= room) {
        out.push({ content: Buffer.concat([this.pending, chunk.subarray(0, room)]), partial: true });
        data = chunk.subarray(room);
      } else {
        this.pending = Buffer.concat([this.pending, chunk]);
        return out;
      }
      this.pending = EMPTY;
    }
    for (;;) {
      const nl = data.indexOf(0x0a);
      if (nl < 0) break;
      pushLine(out, data.subarray(0, nl));
      data = data.subarray(nl + 1);
    }
    while (data.length > MAX_RECORD_BYTES) {
      out.push({ content: data.subarray(0, MAX_RECORD_BYTES), partial: true });
      data = data.subarray(MAX_RECORD_BYTES);
    }
    this.pending = data.length ? Buffer.from(data) : EMPTY;
    return out;
  }

  /** what is left at the end of the stream: a line without a newline is kept as a partial record */
  flush(): { content: Buffer; partial: boolean } | undefined {
    if (this.pending.length === 0) return undefined;
    const content = this.pending;
    this.pending = EMPTY;
    return { content, partial: true };
  }
}

const EMPTY = Buffer.alloc(0);

function pushLine(out: { content: Buffer; partial: boolean }[], line: Buffer): void {
  while (line.length > MAX_RECORD_BYTES) {
    out.push({ content: line.subarray(0, MAX_RECORD_BYTES), partial: true });
    line = line.subarray(MAX_RECORD_BYTES);
  }
  out.push({ content: line, partial: false });
}

const epochNsAtStart = BigInt(Date.now()) * 1_000_000n;
const hrAtStart = process.hrtime.bigint();
let lastNs = 0n;

/** now as epoch nanoseconds: wall clock at load plus the monotonic clock, strictly increasing */
export function nowNs(): bigint {
  let ns = epochNsAtStart + (process.hrtime.bigint() - hrAtStart);
  if (ns <= lastNs) ns = lastNs + 1n;
  lastNs = ns;
  return ns;
}

/** RFC3339 with 9 fraction digits: `2025-01-02T03:04:05.123456789Z` */
export function formatNs(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const iso = new Date(ms).toISOString(); // ...T03:04:05.123Z
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${iso.slice(0, 19)}.${frac}Z`;
}

/** an RFC3339 time (any fraction width, Z or offset) as epoch nanoseconds */
export function parseTimeNs(ts: string): bigint {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(ts);
  if (!m) throw new Error(`invalid RFC3339 time ${ts}`);
  const secs = BigInt(Date.parse(`${m[1]}${m[3]}`)) / 1000n;
  const frac = BigInt((m[2] ?? '').padEnd(9, '0').slice(0, 9) || '0');
  return secs * 1_000_000_000n + frac;
}

export interface RenderOptions {
  timestamps?: boolean;
  /** 'Stdout' | 'Stderr' | 'All' */
  stream?: string;
  /** epoch ns: records before it are skipped */
  sinceNs?: bigint;
  tailLines?: number;
}

export function streamSelected(stream: LogStream, which: string | undefined): boolean {
  if (!which || which === 'All') return true;
  return which.toLowerCase() === stream;
}

/** the records a request selects, in file (= time) order */
export function selectRecords(records: LogRecord[], opts: RenderOptions): LogRecord[] {
  let out = records.filter((r) => streamSelected(r.stream, opts.stream));
  if (opts.sinceNs !== undefined) {
    const since = opts.sinceNs;
    out = out.filter((r) => parseTimeNs(r.time) >= since);
  }
  if (opts.tailLines !== undefined && opts.tailLines >= 0) out = opts.tailLines === 0 ? [] : out.slice(-opts.tailLines);
  return out;
}

/** one record as the API serves it (the record's own content when nothing is added to it) */
export function renderRecord(r: LogRecord, timestamps: boolean | undefined): Buffer {
  if (!timestamps && r.partial) return r.content;
  const parts: Buffer[] = [];
  if (timestamps) parts.push(Buffer.from(`${r.time} `));
  parts.push(r.content);
  if (!r.partial) parts.push(NEWLINE);
  return Buffer.concat(parts);
}

const NEWLINE = Buffer.from('\n');
