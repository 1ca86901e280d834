/**
 * What berth has delivered of one output stream: its length and a running sha256, so that the
 * container's log can later be checked to begin with exactly these bytes without keeping them.
 */
import { createHash, type Hash } from 'node:crypto';

export class StreamDigest {
  private hash: Hash = createHash('sha256');
  bytes = 0;

  add(data: Buffer): void {
    this.bytes += data.length;
    this.hash.update(data);
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
}
