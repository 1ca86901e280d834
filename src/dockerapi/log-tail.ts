/**
 * `docker logs --tail N`, found by time. A 1.32 API server refuses `tailLines` together with a specific `stream`
 * (KEP-3288: "mutually exclusive for now"), and a `tailLines` read cannot be resumed where it was cut (its window
 * moves as the log grows). So the window is found once, on the merged log: its last N+1 lines, with timestamps,
 * give the instant just before the window (none when the whole log fits in it); each log is then read from that
 * instant on (log-cut.ts), a read that starts in the same place however often it is opened again.
 */
import { timestampNanos } from './log-time.js';

/**
 * The instant before the tail window, from the merged log's last `tail + 1` lines read with timestamps:
 * undefined when the log has no more than `tail` lines (the window is the whole log).
 */
export function windowStart(mergedTail: string, tail: number): bigint | undefined {
  const lines = mergedTail.split('\n').filter((l) => l.length > 0);
  if (lines.length <= tail) return undefined;
  const ts = lines[0].slice(0, lines[0].indexOf(' '));
  const nanos = timestampNanos(ts);
  if (nanos === undefined) throw new Error(`the log's timestamp "${ts}" is not RFC 3339`);
  return nanos;
}
