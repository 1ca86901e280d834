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

const EMPTY = Buffer.alloc(0);

/**
 * A stream read again from its start (a log follow resumed, a read-only command run again after its stream was lost):
 * the bytes already delivered come first and are skipped, and their digest must equal what was delivered, or it is
 * not the same stream any more.
 */
export class Replay {
  private skip: number;
  private readonly skipped: Hash = createHash('sha256');
  /** set once the replayed bytes differ from what was delivered */
  differs = false;

  constructor(private readonly delivered: StreamDigest) {
    this.skip = delivered.bytes;
  }

  /** The part of `chunk` past what was delivered: empty while that is skipped, and once the replay differs. */
  rest(chunk: Buffer): Buffer {
    if (this.differs) return EMPTY;
    if (this.skip === 0) return chunk;
    const head = chunk.subarray(0, this.skip);
    this.skipped.update(head);
    this.skip -= head.length;
    if (this.skip === 0 && this.skipped.digest('hex') !== this.delivered.digest()) {
      this.differs = true;
      return EMPTY;
    }
    return chunk.subarray(head.length);
  }

  /** True while bytes of what was delivered are still to come. */
  get pending(): boolean {
    return this.skip > 0;
  }
}
