/**
 * What berth has delivered of one output stream: its length, a running sha256, and its last bytes, so
 * that the container's log can later be checked against it without keeping it: from its start while
 * the log is whole, at its end once the kubelet has rotated the log.
 */
import { createHash, type Hash } from 'node:crypto';

/** how much of the end of a stream is kept to find it again in a rotated log */
export const TAIL_BYTES = 64 * 1024;

export class StreamDigest {
  private hash: Hash = createHash('sha256');
  bytes = 0;
  /** the last TAIL_BYTES bytes as a ring, allocated with the first byte (most streams stay empty) */
  private ring: Buffer | undefined;

  add(data: Buffer): void {
    this.bytes += data.length;
    this.hash.update(data);
    if (data.length === 0) return;
    this.ring ??= Buffer.allocUnsafe(TAIL_BYTES);
    const kept = data.length > TAIL_BYTES ? data.subarray(data.length - TAIL_BYTES) : data;
    // the ring holds byte n of the stream at n % TAIL_BYTES
    const at = (this.bytes - kept.length) % TAIL_BYTES;
    const first = Math.min(kept.length, TAIL_BYTES - at);
    kept.copy(this.ring, at, 0, first);
    if (first < kept.length) kept.copy(this.ring, 0, first);
  }

  /** The digest of everything added so far (adding more afterwards is fine). */
  digest(): string {
    return this.hash.copy().digest('hex');
  }

  /** True when `log` begins with exactly the bytes delivered. */
  isPrefixOf(log: Buffer): boolean {
    if (log.length < this.bytes) return false;
    return createHash('sha256').update(log.subarray(0, this.bytes)).digest('hex') === this.digest();
  }

  /** The last bytes added, at most TAIL_BYTES of them, in order. */
  tail(): Buffer {
    if (!this.ring) return Buffer.alloc(0);
    if (this.bytes <= TAIL_BYTES) return Buffer.from(this.ring.subarray(0, this.bytes));
    const end = this.bytes % TAIL_BYTES;
    return Buffer.concat([this.ring.subarray(end), this.ring.subarray(0, end)]);
  }
}
