/**
 * Docker's multiplexed stream (non-TTY logs, attach, exec): each chunk goes out behind an 8-byte header
 * `[stream, 0, 0, 0, size uint32 BE]`; 0 stdin, 1 stdout, 2 stderr. TTY streams are raw.
 */
import { OutgoingMessage } from 'node:http';
import { Writable } from 'node:stream';

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
 * `parts` framed as `stream`, as buffers to write in order: one frame of them all, or with `perLine` a frame
 * per line, as dockerd's log drivers store logs (a client that reads frame by frame, like testcontainers' log
 * consumers, gets one line per frame; a trailing part without its newline is a frame of its own at once,
 * never held back for the rest of the line). Short frames are gathered into one buffer; a long payload is
 * passed as a view of the chunk it came in, not copied: a log of megabytes crosses berth without a copy of
 * its own.
 */
export function framedPieces(stream: number, parts: Buffer[], perLine: boolean): Buffer[] {
  const out: Buffer[] = [];
  let small: Buffer[] = [];
  let smallBytes = 0;
  const flushSmall = (): void => {
    if (smallBytes > 0) out.push(small.length === 1 ? small[0]! : Buffer.concat(small, smallBytes));
    small = [];
    smallBytes = 0;
  };
  const emit = (payload: Buffer[], size: number): void => {
    if (size === 0) return;
    const h = header(stream, size);
    if (size < COPY_LIMIT) {
      small.push(h, ...payload);
      smallBytes += 8 + size;
      return;
    }
    small.push(h);
    smallBytes += 8;
    flushSmall();
    out.push(...payload);
  };
  if (!perLine) {
    const nonEmpty = parts.filter((p) => p.length > 0);
    emit(nonEmpty, nonEmpty.reduce((n, p) => n + p.length, 0));
  } else {
    // a line may begin in one part and end in the next: its frame holds views of both
    let line: Buffer[] = [];
    let lineBytes = 0;
    for (const part of parts) {
      let start = 0;
      while (start < part.length) {
        const nl = part.indexOf(0x0a, start);
        const end = nl === -1 ? part.length : nl + 1;
        line.push(part.subarray(start, end));
        lineBytes += end - start;
        start = end;
        if (nl !== -1) {
          emit(line, lineBytes);
          line = [];
          lineBytes = 0;
        }
      }
    }
    emit(line, lineBytes);
  }
  flushSmall();
  return out;
}

function header(stream: number, size: number): Buffer {
  const h = Buffer.allocUnsafe(8);
  h.writeUInt32BE(stream << 24, 0);
  h.writeUInt32BE(size, 4);
  return h;
}

/** how much a framed writer takes in before its writer waits: what can queue into one write */
const FRAME_BATCH_BYTES = 256 * 1024;

/**
 * A Writable whose chunks reach `sink` framed as `stream` (a frame per line with `perLine`, as logs are),
 * or raw when `tty`. Chunks that queued up while the sink was full go out together (one frame unless
 * `perLine`) in one system call: a slow reader gets few large writes instead of one per chunk.
 */
export function framedWriter(sink: Writable | NodeJS.WritableStream, stream: number, tty: boolean, perLine = false): Writable {
  const put = (parts: Buffer[], cb: () => void): void => {
    const pieces = tty ? parts.filter((p) => p.length > 0) : framedPieces(stream, parts, perLine);
    if (pieces.length === 0) return cb();
    let ready = true;
    // A response gathers the writes of one tick by itself; corking it would break its 'drain' (node's
    // OutgoingMessage asks for a drain that its socket, written only at uncork, never sends).
    const corkable = pieces.length > 1 && !(sink instanceof OutgoingMessage) && 'cork' in sink && typeof sink.cork === 'function';
    if (corkable) (sink as Writable).cork();
    for (const p of pieces) ready = sink.write(p) && ready;
    if (corkable) (sink as Writable).uncork();
    // A log's chunk is done after this turn of the event loop, not at once: the chunks that arrive meanwhile (a
    // read from the cluster's connection brings several) reach the next writev together, one system call. Not
    // for exec and attach: stdout and stderr share their sink, and a held chunk would let the other stream's
    // later chunk overtake it (a log's streams come from requests of their own, in no common order).
    if (!ready) sink.once('drain', () => cb());
    else if (perLine) setImmediate(cb);
    else cb();
  };
  return new Writable({
    highWaterMark: FRAME_BATCH_BYTES,
    write(chunk: Buffer, _enc, cb) {
      put([chunk], cb);
    },
    writev(chunks, cb) {
      put(
        chunks.map((c) => c.chunk as Buffer),
        cb,
      );
    },
  });
}
