/**
 * A log's bytes as Docker frames, the way `docker logs` frames what dockerd stored: a frame per line, and a
 * line longer than 16 KiB in frames of 16 KiB (dockerd's log copier hands a long line on in partial messages of
 * its 16 KiB buffer, and each message is a frame). A client that reads frame by frame (testcontainers' log
 * consumers) gets a line per frame; one that reads the whole log gets the frames dockerd would send.
 */
import { FrameBatch } from '../http/framing.js';

/** dockerd's log copier buffer (daemon/logger/copier.go, defaultBufSize) */
export const MESSAGE_BYTES = 16 * 1024;

/**
 * What becomes of a line's part that has come without its newline:
 * - `at-once`: a frame of its own at once (a follow: output shows as it comes, a prompt or a progress bar
 *   without waiting for the rest of its line);
 * - `held`: kept until its message is full, its newline comes or the log ends (a read of a log to its end,
 *   where waiting costs nothing and the frames come out as dockerd's).
 */
export type PartialLines = 'at-once' | 'held';

export class LogFramer {
  /** the current message: views of the chunks it came in */
  private message: Buffer[] = [];
  private messageBytes = 0;

  constructor(
    private readonly stream: number,
    private readonly partialLines: PartialLines,
  ) {}

  /** The frames `parts` complete (and, at once, the part of a line left over). */
  push(parts: Buffer[]): Buffer[] {
    const batch = new FrameBatch(this.stream);
    for (const part of parts) {
      let start = 0;
      while (start < part.length) {
        const nl = part.indexOf(0x0a, start);
        const lineEnd = nl === -1 ? part.length : nl + 1;
        const end = Math.min(lineEnd, start + MESSAGE_BYTES - this.messageBytes);
        this.message.push(part.subarray(start, end));
        this.messageBytes += end - start;
        start = end;
        if (end === nl + 1 || this.messageBytes === MESSAGE_BYTES) this.emit(batch);
      }
    }
    if (this.partialLines === 'at-once') this.emit(batch);
    return batch.done();
  }

  /** The part of a line still held, at the log's end. */
  flush(): Buffer[] {
    const batch = new FrameBatch(this.stream);
    this.emit(batch);
    return batch.done();
  }

  private emit(batch: FrameBatch): void {
    batch.add(this.message, this.messageBytes);
    this.message = [];
    this.messageBytes = 0;
  }
}
