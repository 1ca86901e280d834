/**
 * A log read with timestamps, cut by time: what the pods/log API cannot select itself (its `sinceTime` has whole
 * seconds, it has no `until`, and a 1.32 server refuses `tailLines` beside a `stream`). Lines written before
 * `from` are dropped; the first line written after `until` ends the log (it and all after it are dropped, and
 * `onPastUntil` is told, so a follow can stop); each line that passes loses its timestamp or keeps it, written as
 * dockerd writes it (9 fractional digits always). A line is
 * judged by its timestamp alone, so its text passes as it arrives: a line still being written (a prompt without
 * its newline) is not held back.
 *
 * A line longer than a record (16 KiB: containerd's, and the dev cluster's) is stored as partial records, each
 * with its own timestamp, and pods/log writes each record's timestamp where it begins: inside the line. Where a
 * record's worth of a line has passed, a timestamp that follows is the next record's: the record is judged by it,
 * as dockerd judges each partial message of a long line, and it is dropped or kept as dockerd writes it.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { MESSAGE_BYTES } from './log-frames.js';
import { dockerLogTimestampOf, timestampNanos } from './log-time.js';

export interface TimeCut {
  /** Nanoseconds since the epoch: lines written earlier are dropped. */
  from?: bigint;
  /** Nanoseconds since the epoch: lines written later end the log (as dockerd's `until`, the instant itself is in). */
  until?: bigint;
  /** Whether passing lines keep their timestamp (the client asked for timestamps). */
  keepTimestamps: boolean;
  /** Every line starts with its time as dockerd writes it, even when timestamps are not kept (only the first
   *  record's, for a long line): the order of a merge of stdout and stderr (log-merge.ts). */
  stampLines?: boolean;
  /** Told once, at the first line written after `until`. */
  onPastUntil?: () => void;
}

/** The lead of a line whose time is unknown: it sorts after every real time. */
const UNKNOWN_TIME = '9999-12-31T23:59:59.999999999Z';

/** The longest timestamp the kubelet writes (`2006-01-02T15:04:05.999999999+07:00`): a line without a space by then has none. */
const MAX_TIMESTAMP = 35;

export function timeCut(cut: TimeCut): Transform {
  /** the start of a line (or of a partial record) whose timestamp has not arrived whole */
  let head = Buffer.alloc(0);
  /** whether the rest of the current line goes out; undefined at the start of a line */
  let passing: boolean | undefined;
  /** bytes of the current record's text so far */
  let recordBytes = 0;
  /** a record's worth of the line has passed: what follows may be the timestamp of its next record */
  let atRecord = false;
  let past = false;
  /** the current line's last timestamp, and dockerd's form of it */
  let lastStamp: { nanos: bigint; fixed: string } | undefined;
  const judge = (ts: string): boolean => {
    if (past) return false;
    if (cut.from === undefined && cut.until === undefined) return true;
    const nanos = timestampNanos(ts)!;
    if (cut.until !== undefined && nanos > cut.until) {
      past = true;
      cut.onPastUntil?.();
      return false;
    }
    return cut.from === undefined || nanos >= cut.from;
  };
  /**
   * A split-stream log of a kubelet stamps no entry that follows a partial one of the other stream (a short stderr
   * line written while stdout's long line was being recorded). Read only to be merged by time, with nothing to cut
   * and no timestamps shown, such a line passes; anything else without a time fails the cut.
   */
  const unstampedPasses = cut.stampLines === true && !cut.keepTimestamps && cut.from === undefined && cut.until === undefined;
  /** whether the current line's text has begun to pass (a line led by its time has its time then) */
  let lineBegun = false;
  const stamp = (fixed: string, out: Buffer[]): void => {
    if (!passing) return;
    if (cut.keepTimestamps || (cut.stampLines && !lineBegun)) out.push(Buffer.from(`${fixed} `, 'latin1'));
    lineBegun = true;
  };
  /** An unstamped line (unstampedPasses) begins: led by the time of this stream's line before it, else after all. */
  const passUnstamped = (out: Buffer[]): void => {
    passing = true;
    lineBegun = false;
    stamp(lastStamp?.fixed ?? UNKNOWN_TIME, out);
  };
  /** The timestamp at the start of `buf` (after `head`), its end in `buf`; undefined when `buf` ends first. */
  const timestampAt = (buf: Buffer): { ts: Buffer; end: number } | 'none' | undefined => {
    const space = buf.indexOf(0x20);
    if (space < 0 || head.length + space > MAX_TIMESTAMP) return space >= 0 || head.length + buf.length > MAX_TIMESTAMP ? 'none' : undefined;
    return { ts: head.length ? Buffer.concat([head, buf.subarray(0, space)]) : buf.subarray(0, space), end: space + 1 };
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      // One push per chunk: the framed writer then makes a frame per line of it, timestamp included.
      const out: Buffer[] = [];
      let buf = chunk;
      while (buf.length > 0) {
        if (passing === undefined || atRecord) {
          const found = timestampAt(buf);
          if (found === undefined) {
            head = Buffer.concat([head, buf]);
            break;
          }
          const nextRecord = atRecord;
          atRecord = false;
          recordBytes = 0;
          const tsText = found === 'none' ? '' : found.ts.toString('latin1');
          // dockerd's form of the time, and whether it is one: parsed once for each record
          const fixed = found === 'none' ? undefined : dockerLogTimestampOf(tsText);
          if (nextRecord && fixed === undefined) {
            // no timestamp: the line's text goes on (the record was a whole line, or a partial one of another size,
            // or a kubelet's: it stamps only a line's first record). A record is written after the one before it:
            // when that one was the last before `from` (a tail window starts just past it), this one is in.
            if (!passing && !past && cut.from !== undefined && lastStamp && lastStamp.nanos + 1n >= cut.from) {
              passing = true;
              stamp(lastStamp.fixed, out);
            }
            if (head.length) buf = Buffer.concat([head, buf]);
            head = Buffer.alloc(0);
            continue;
          }
          if (found === 'none' || fixed === undefined) {
            if (!unstampedPasses) return done(noTimestamp());
            // a line the kubelet did not stamp (it follows a partial record of the other stream): its text passes
            passUnstamped(out);
            recordBytes = 0;
            if (head.length) buf = Buffer.concat([head, buf]);
            head = Buffer.alloc(0);
            continue;
          }
          head = Buffer.alloc(0);
          lastStamp = { nanos: timestampNanos(tsText)!, fixed };
          if (!nextRecord) lineBegun = false;
          // each record is judged by its own time, as dockerd judges each message of a long line
          passing = judge(tsText);
          stamp(fixed, out);
          buf = buf.subarray(found.end);
          continue;
        }
        const nl = buf.indexOf(0x0a);
        const end = Math.min(nl < 0 ? buf.length : nl + 1, MESSAGE_BYTES - recordBytes);
        if (passing) out.push(buf.subarray(0, end));
        recordBytes += end;
        if (end === nl + 1) passing = undefined;
        else if (recordBytes === MESSAGE_BYTES) atRecord = true;
        buf = buf.subarray(end);
      }
      if (out.length > 0) this.push(out.length === 1 ? out[0] : Buffer.concat(out));
      done();
    },
    flush(done: TransformCallback) {
      if (atRecord) {
        if (passing && head.length) this.push(head);
        return done();
      }
      if (head.length > 0 && unstampedPasses) {
        const out: Buffer[] = [];
        passUnstamped(out);
        this.push(Buffer.concat([...out, head]));
        return done();
      }
      done(head.length > 0 ? noTimestamp() : undefined);
    },
  });
}

function noTimestamp(): Error {
  return new Error('a log line read with timestamps has none: the log cannot be cut by time');
}
