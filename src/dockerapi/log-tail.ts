/**
 * `docker logs --tail N` with stdout and stderr apart. A 1.32 API server refuses `tailLines` together with a
 * specific `stream` (KEP-3288: "mutually exclusive for now"), so the window is found on the merged log and
 * then cut out of each split log by time: the merged log's last N+1 lines, with timestamps, give the instant
 * just before the window (none when the whole log fits in it), and each split log is read from that second
 * on, with timestamps, dropping every line written at or before that instant.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** A kubelet log timestamp (RFC 3339, up to nanoseconds) as nanoseconds since the epoch, comparable exactly. */
export function timestampNanos(ts: string): bigint | undefined {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(ts);
  if (!m) return undefined;
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(seconds)) return undefined;
  return BigInt(seconds) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/**
 * The instant before the tail window, from the merged log's last `tail + 1` lines read with timestamps:
 * undefined when the log has no more than `tail` lines (the window is the whole log).
 */
export function windowStart(mergedTail: string, tail: number): { nanos: bigint; sinceTime: string } | undefined {
  const lines = mergedTail.split('\n').filter((l) => l.length > 0);
  if (lines.length <= tail) return undefined;
  const ts = lines[0].slice(0, lines[0].indexOf(' '));
  const nanos = timestampNanos(ts);
  if (nanos === undefined) throw new Error(`the log's timestamp "${ts}" is not RFC 3339`);
  // sinceTime has whole seconds: read from the start of that second, then drop by the exact instant
  return { nanos, sinceTime: new Date(Number(nanos / 1_000_000n)).toISOString().replace(/\.\d+Z$/, 'Z') };
}

/**
 * Lines of a log read with timestamps: those written after `after` (all when undefined) pass, with their
 * timestamp kept or cut. A last line without its newline passes at the end of the log.
 */
export function linesAfter(after: bigint | undefined, keepTimestamps: boolean): Transform {
  let rest = Buffer.alloc(0);
  const emit = (t: Transform, line: Buffer): void => {
    const space = line.indexOf(0x20);
    const nanos = space > 0 ? timestampNanos(line.subarray(0, space).toString('latin1')) : undefined;
    if (nanos === undefined) {
      t.destroy(new Error('a log line read with timestamps has none: the window cannot be cut by time'));
      return;
    }
    if (after !== undefined && nanos <= after) return;
    t.push(keepTimestamps ? line : line.subarray(space + 1));
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      let buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
      for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a)) {
        emit(this, buf.subarray(0, nl + 1));
        buf = buf.subarray(nl + 1);
      }
      rest = Buffer.from(buf);
      done();
    },
    flush(done: TransformCallback) {
      if (rest.length) emit(this, rest);
      done();
    },
  });
}
