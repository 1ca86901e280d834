// The container log file format: the CRI format the kubelet reads (`<RFC3339Nano> <stream> <P|F> <content>`),
// one record per line of output. Keeping stdout and stderr as separate records with their own timestamps
// is what lets `pods/log` interleave them in time order, split them (KEP-3288) and prefix timestamps.

export type LogStream = 'stdout' | 'stderr';

/** the longest line kept in one record; longer lines are split into partial records, as containerd does */
export const MAX_RECORD_BYTES = 16 * 1024;

/** `<time> stdout F ` of a record this encoder writes: a fixed-width time, a space, the stream, a space, the tag, a space */
const HEADER_BYTES = 30 + 1 + 6 + 3;

/**
 * The records of one chunk of a stream's output, as one buffer of file lines. Their times are consecutive
 * nanoseconds from `firstNs` (reserveNs): strictly increasing, so a cut by time never splits equal times, and
 * formatted with the date and time of day made once per second. One buffer per chunk, not three per line: a
 * container printing a million short lines costs a write per chunk, not a million writes and allocations.
 */
export function encodeRecords(stream: LogStream, pieces: readonly { content: Buffer; partial: boolean }[], firstNs: bigint): Buffer {
  let size = 0;
  for (const p of pieces) size += HEADER_BYTES + p.content.length + 1;
  const out = Buffer.allocUnsafe(size);
  const name = stream === 'stdout' ? STDOUT_BYTES : STDERR_BYTES;
  let second = firstNs / 1_000_000_000n;
  let fraction = Number(firstNs % 1_000_000_000n);
  let dayAndTime = secondText(second);
  let at = 0;
  for (const p of pieces) {
    if (fraction >= 1_000_000_000) {
      fraction -= 1_000_000_000;
      dayAndTime = secondText(++second);
    }
    // 2025-01-02T03:04:05.123456789Z: the second's text, a dot, nine digits (last first), Z
    out.write(dayAndTime, at, 'latin1');
    out[at + 19] = 0x2e;
    for (let i = 0, f = fraction; i < 9; i++, f = Math.floor(f / 10)) out[at + 28 - i] = 0x30 + (f % 10);
    out[at + 29] = 0x5a;
    at += 30;
    out[at++] = SPACE;
    at += name.copy(out, at);
    out[at++] = SPACE;
    out[at++] = p.partial ? TAG_P : TAG_F;
    out[at++] = SPACE;
    at += p.content.copy(out, at);
    out[at++] = 0x0a;
    fraction++;
  }
  return out;
}

/** `2025-01-02T03:04:05` of an epoch second */
function secondText(second: bigint): string {
  return new Date(Number(second) * 1000).toISOString().slice(0, 19);
}

const STDOUT_BYTES = Buffer.from('stdout');
const STDERR_BYTES = Buffer.from('stderr');
const SPACE = 0x20;
const TAG_P = 0x50;
const TAG_F = 0x46;

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
      out.push({ content: cutPartials(out, data.subarray(0, nl)), partial: false });
      data = data.subarray(nl + 1);
    }
    data = cutPartials(out, data);
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

/** pushes whole partial records off the front of `data` while more than a record is left; returns the rest */
function cutPartials(out: { content: Buffer; partial: boolean }[], data: Buffer): Buffer {
  while (data.length > MAX_RECORD_BYTES) {
    out.push({ content: data.subarray(0, MAX_RECORD_BYTES), partial: true });
    data = data.subarray(MAX_RECORD_BYTES);
  }
  return data;
}

const epochNsAtStart = BigInt(Date.now()) * 1_000_000n;
const hrAtStart = process.hrtime.bigint();
let lastNs = 0n;

/** now as epoch nanoseconds: wall clock at load plus the monotonic clock, strictly increasing */
export function nowNs(): bigint {
  return reserveNs(1);
}

/** the first of `count` consecutive nanoseconds from now on, none of them given out again */
export function reserveNs(count: number): bigint {
  let ns = epochNsAtStart + (process.hrtime.bigint() - hrAtStart);
  if (ns <= lastNs) ns = lastNs + 1n;
  lastNs = ns + BigInt(count - 1);
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

/** `Stdout`/`Stderr`/`All` as the byte that tells the streams apart (the fourth letter); undefined for all */
function streamByte(stream: string | undefined): number | undefined {
  if (!stream || stream === 'All') return undefined;
  const lower = stream.toLowerCase();
  return lower === 'stdout' ? 0x6f : lower === 'stderr' ? 0x65 : -1;
}

/**
 * Where the time of the record on `data[lineStart, end)` ends (its first space), if the line is a record of the
 * wanted stream (`want`: a streamByte); -1 for a line of another stream or a malformed one (a torn write).
 */
function recordAt(data: Buffer, lineStart: number, end: number, want: number | undefined): number {
  const s1 = data.indexOf(SPACE, lineStart);
  if (s1 < 0 || s1 + 10 > end || data[s1 + 7] !== SPACE || data[s1 + 9] !== SPACE) return -1;
  const which = data[s1 + 4];
  if (data[s1 + 1] !== 0x73 || data[s1 + 2] !== 0x74 || data[s1 + 3] !== 0x64) return -1;
  if (which === 0x6f ? data[s1 + 5] !== 0x75 || data[s1 + 6] !== 0x74 : which !== 0x65 || data[s1 + 5] !== 0x72 || data[s1 + 6] !== 0x72) return -1;
  const tag = data[s1 + 8];
  if ((tag !== TAG_P && tag !== TAG_F) || (want !== undefined && which !== want)) return -1;
  return s1;
}

/** a record's content this long is handed on as a view of the block it was read in rather than copied */
const WHOLE_RECORD_BYTES = 8 * 1024;

/**
 * The complete lines of a log file's block rendered as `pods/log` serves them: each record of the selected
 * stream, its time first with `timestamps`, a newline after a whole line. One pass over the bytes: short records
 * are copied into one buffer (no object per record: a log of a million short lines is read in a fraction of a
 * second), long ones (a line of megabytes comes in 16 KiB records) are passed on as views, not copied: every copy
 * of a log's megabytes is memory outside the heap that ends in a full garbage collection.
 */
export function renderBlock(data: Buffer, opts: Pick<RenderOptions, 'timestamps' | 'stream'>): Buffer[] {
  const out = Buffer.allocUnsafe(data.length);
  const pieces: Buffer[] = [];
  const want = streamByte(opts.stream);
  let from = 0;
  let at = 0;
  const copied = (): void => {
    if (at > from) pieces.push(out.subarray(from, at));
    from = at;
  };
  for (let start = 0; start < data.length; ) {
    const end = data.indexOf(0x0a, start);
    if (end < 0) break;
    const s1 = recordAt(data, start, end, want);
    const lineStart = start;
    start = end + 1;
    if (s1 < 0) continue;
    const whole = data[s1 + 8] === TAG_F;
    if (end - s1 - 10 >= WHOLE_RECORD_BYTES) {
      copied();
      if (opts.timestamps) pieces.push(data.subarray(lineStart, s1 + 1));
      pieces.push(data.subarray(s1 + 10, end));
      if (whole) pieces.push(NEWLINE);
    } else {
      if (opts.timestamps) at += data.copy(out, at, lineStart, s1 + 1);
      at += data.copy(out, at, s1 + 10, end);
      if (whole) out[at++] = 0x0a;
    }
  }
  copied();
  return pieces;
}

/**
 * Where the records `sinceNs` and `tailLines` select begin in a block of file lines: what they select is the
 * block's end from there, since a log file's times only grow (its records are stamped as they are written).
 */
export function selectionStart(data: Buffer, opts: RenderOptions): number {
  const want = streamByte(opts.stream);
  const since = opts.sinceNs === undefined ? 0 : sinceStart(data, opts.sinceNs);
  const tail = opts.tailLines === undefined || opts.tailLines < 0 ? 0 : tailStart(data, opts.tailLines, want);
  return Math.max(since, tail);
}

/** the first record at or after `sinceNs`; the block's length when none is */
export function sinceStart(data: Buffer, sinceNs: bigint): number {
  const since = Buffer.from(formatNs(sinceNs), 'latin1');
  for (let start = 0; start < data.length; ) {
    const end = data.indexOf(0x0a, start);
    if (end < 0) break;
    const s1 = recordAt(data, start, end, undefined);
    // times this file's writer made have one width and compare as text; others are read as times
    if (s1 >= 0 && (s1 - start === since.length && data[s1 - 1] === 0x5a ? data.compare(since, 0, since.length, start, s1) >= 0 : parseTimeNs(data.toString('latin1', start, s1)) >= sinceNs)) return start;
    start = end + 1;
  }
  return data.length;
}

/** the first of the last `lines` records of the wanted stream, counted from the block's end */
function tailStart(data: Buffer, lines: number, want: number | undefined): number {
  if (lines === 0) return data.length;
  let counted = 0;
  // from the last newline back: a torn line after it is no record
  for (let end = data.lastIndexOf(0x0a); end >= 0; ) {
    const start = end === 0 ? 0 : data.lastIndexOf(0x0a, end - 1) + 1;
    if (recordAt(data, start, end, want) >= 0 && ++counted === lines) return start;
    end = start - 1;
  }
  return 0;
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

const NEWLINE = Buffer.from('\n');
