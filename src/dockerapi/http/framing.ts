/**
 * Docker's multiplexed stream (non-TTY logs, attach, exec): each chunk goes out behind an 8-byte header
 * `[stream, 0, 0, 0, size uint32 BE]`; 0 stdin, 1 stdout, 2 stderr. TTY streams are raw.
 */

export const STDIN = 0;
export const STDOUT = 1;
export const STDERR = 2;

export function frame(stream: number, payload: Buffer): Buffer {
  return Buffer.concat([header(stream, payload.length), payload]);
}

/** Splits a multiplexed byte stream back into frames (tests and clients of our own). */
export function demux(data: Buffer): Array<{ stream: number; payload: Buffer }> {
  const out: Array<{ stream: number; payload: Buffer }> = [];
  let i = 0;
  while (i + 8 <= data.length) {
    const size = data.readUInt32BE(i + 4);
    if (i + 8 + size > data.length) break;
    out.push({ stream: data[i], payload: data.subarray(i + 8, i + 8 + size) });
    i += 8 + size;
  }
  return out;
}

/** a payload at least this long goes out as a view of itself rather than copied beside its header */
const COPY_LIMIT = 16 * 1024;

/**
 * Frames of one stream as buffers to write in order. Short frames are gathered into one buffer; a long
 * payload is passed as views of the chunks it came in, not copied: a log of megabytes crosses berth without
 * a copy of its own.
 */
export class FrameBatch {
  private readonly pieces: Buffer[] = [];
  private small: Buffer[] = [];
  private smallBytes = 0;

  constructor(private readonly stream: number) {}

  /** One frame whose payload is `payload`, in order. */
  add(payload: Buffer[], size: number): void {
    if (size === 0) return;
    const h = header(this.stream, size);
    if (size < COPY_LIMIT) {
      this.small.push(h, ...payload);
      this.smallBytes += 8 + size;
      return;
    }
    this.small.push(h);
    this.smallBytes += 8;
    this.flushSmall();
    this.pieces.push(...payload);
  }

  /** The buffers to write. */
  done(): Buffer[] {
    this.flushSmall();
    return this.pieces;
  }

  private flushSmall(): void {
    if (this.smallBytes > 0) this.pieces.push(this.small.length === 1 ? this.small[0]! : Buffer.concat(this.small, this.smallBytes));
    this.small = [];
    this.smallBytes = 0;
  }
}

function header(stream: number, size: number): Buffer {
  const h = Buffer.allocUnsafe(8);
  h.writeUInt32BE(stream << 24, 0);
  h.writeUInt32BE(size, 4);
  return h;
}
