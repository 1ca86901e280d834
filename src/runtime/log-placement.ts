/**
 * Where a container's log, read again once the container has ended, continues what berth delivered of it.
 *
 * While the log is whole it begins with every delivered byte (checked by digest). A kubelet rotates a running
 * container's log (containerLogMaxSize, 10 MiB by default, looked at every containerLogMonitorInterval) and
 * then serves only the newest file, which begins somewhere in what was delivered: the delivered stream's last
 * bytes are then found in it, in exactly one place, or the rest is not placed at all. A guess could drop or
 * repeat output behind an exit code of 0; a run whose output cannot be placed fails instead.
 */
import type { StreamDigest } from './stream-digest.js';

export type LogPlacement =
  /** the log begins with all that was delivered; `rest` is what follows it */
  | { kind: 'whole'; rest: Buffer }
  /** the log was rotated: it begins inside what was delivered, whose end it holds once; `rest` follows that end */
  | { kind: 'rotated'; rest: Buffer }
  | { kind: 'unplaced'; why: string };

/** the fewest delivered bytes a rotated log must begin with when more follows them (fewer match by chance) */
const MIN_OVERLAP = 64;

/**
 * `followedWhole`: one follow, never broken or resumed, carried the stream until the container ended. A log with
 * nothing of the stream is then a rotated one whose newest file the other stream filled (a function's report on
 * stderr, then megabytes of stdout): nothing of this stream came after what was delivered.
 */
export function placeLog(log: Buffer, delivered: StreamDigest, followedWhole = false): LogPlacement {
  if (delivered.isPrefixOf(log)) return { kind: 'whole', rest: log.subarray(delivered.bytes) };
  if (log.length === 0 && followedWhole) return { kind: 'rotated', rest: log };
  const tail = delivered.tail();
  const ends = endsOfDelivered(log, tail, delivered.bytes);
  if (ends.length === 1) return { kind: 'rotated', rest: log.subarray(ends[0]) };
  return {
    kind: 'unplaced',
    why:
      ends.length === 0
        ? 'the log neither begins with what berth delivered nor holds its last bytes'
        : 'the last bytes berth delivered occur more than once in the log',
  };
}

/**
 * Offsets of `log` where the delivered stream may end: after a whole copy of its tail (preceded by no more of the
 * log than the stream had before its tail), or, where the log begins inside the tail, after the tail's rest.
 * Two are enough to know that the place is not certain.
 */
function endsOfDelivered(log: Buffer, tail: Buffer, deliveredBytes: number): number[] {
  const ends: number[] = [];
  if (tail.length === 0 || log.length === 0) return ends;
  const before = deliveredBytes - tail.length;
  for (let i = log.indexOf(tail); i >= 0 && i <= before && ends.length < 2; i = log.indexOf(tail, i + 1)) ends.push(i + tail.length);
  const probe = log.subarray(0, Math.min(MIN_OVERLAP, log.length));
  for (let q = tail.indexOf(probe, 1); q >= 0 && ends.length < 2; q = tail.indexOf(probe, q + 1)) {
    const overlap = tail.length - q;
    // the log ends inside the tail: it lacks delivered bytes, it is not this stream's log
    if (overlap > log.length) continue;
    // an overlap shorter than MIN_OVERLAP places only a log that is all overlap (nothing new after it)
    if (overlap < MIN_OVERLAP && overlap !== log.length) continue;
    if (tail.subarray(q).equals(log.subarray(0, overlap))) ends.push(overlap);
  }
  return ends;
}
