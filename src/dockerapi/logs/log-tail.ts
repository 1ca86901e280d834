/**
 * `docker logs --tail N`, found by time. A 1.32 API server refuses `tailLines` together with a specific `stream`
 * (KEP-3288: "mutually exclusive for now"), and a `tailLines` read cannot be resumed where it was cut (its window
 * moves as the log grows). So the window is found once, on the merged log: its last N+1 lines, with timestamps,
 * give the instant just before the window (none when the whole log fits in it); each log is then read from that
 * instant on (log-cut.ts), a read that starts in the same place however often it is opened again.
 */
import { MESSAGE_BYTES } from './log-frames.js';
import { timestampNanos } from './log-time.js';

/** The longest timestamp the kubelet writes (`2006-01-02T15:04:05.999999999+07:00`). */
const MAX_TIMESTAMP = 35;

/**
 * The instant before the tail window, from the merged log's last `tail + 1` records read with timestamps:
 * undefined when the log has no more than `tail` records (the window is the whole log). A line longer than a
 * record is several (pods/log stamps each where it begins, inside the line), as each is a message of dockerd's.
 */
export function windowStart(mergedTail: string | Buffer, tail: number): bigint | undefined {
  const text = typeof mergedTail === 'string' ? Buffer.from(mergedTail) : mergedTail;
  if (recordCount(text) <= tail) return undefined;
  const ts = text.subarray(0, text.indexOf(0x20)).toString('latin1');
  const nanos = timestampNanos(ts);
  if (nanos === undefined) throw new Error(`the log's timestamp "${ts}" is not RFC 3339`);
  return nanos;
}

/**
 * Records in a log read with timestamps: a line each, and a long line one per MESSAGE_BYTES of it (containerd's
 * partial entries). A server that stamps each further record where it begins, inside the line (as berth's retired
 * TypeScript cluster did), is read by those stamps; a kubelet stamps only the line's first, so there the rest are
 * counted by length.
 */
function recordCount(text: Buffer): number {
  let count = 0;
  for (let start = 0; start < text.length;) {
    const nl = text.indexOf(0x0a, start);
    const end = nl < 0 ? text.length : nl;
    if (end > start) {
      count++;
      let content = text.indexOf(0x20, start) + 1;
      while (content > 0 && content + MESSAGE_BYTES < end) {
        const at = content + MESSAGE_BYTES;
        const space = text.indexOf(0x20, at);
        if (space < 0 || space > end || space - at > MAX_TIMESTAMP || timestampNanos(text.subarray(at, space).toString('latin1')) === undefined) {
          count += Math.ceil((end - content) / MESSAGE_BYTES) - 1;
          break;
        }
        count++;
        content = space + 1;
      }
    }
    start = end + 1;
  }
  return count;
}
