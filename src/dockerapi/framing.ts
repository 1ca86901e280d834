/**
 * Docker's multiplexed stream (non-TTY logs, attach, exec): each chunk goes out behind an 8-byte header
 * `[stream, 0, 0, 0, size uint32 BE]`; 0 stdin, 1 stdout, 2 stderr. TTY streams are raw.
 */
import { Writable } from 'node:stream';

export const STDIN = 0;
export const STDOUT = 1;
export const STDERR = 2;

export function frame(stream: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
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

/**
 * Frames of one chunk of a log, one per line as dockerd's log drivers store them (a client that reads
 * frame by frame, like testcontainers' log consumers, gets one line per frame). A trailing part without
 * its newline is a frame of its own at once, never held back for the rest of the line.
 */
export function lineFrames(stream: number, chunk: Buffer): Buffer {
  const frames: Buffer[] = [];
  let start = 0;
  while (start < chunk.length) {
    const nl = chunk.indexOf(0x0a, start);
    const end = nl === -1 ? chunk.length : nl + 1;
    frames.push(frame(stream, chunk.subarray(start, end)));
    start = end;
  }
  return Buffer.concat(frames);
}

/** how much a framed writer takes in before its writer waits: what can queue into one write */
const FRAME_BATCH_BYTES = 256 * 1024;

/**
 * A Writable whose chunks reach `sink` framed as `stream` (a frame per line with `perLine`, as logs are),
 * or raw when `tty`. Chunks that queued up while the sink was full go out in one write (one frame unless
 * `perLine`): a slow reader gets few large writes instead of one per chunk.
 */
export function framedWriter(sink: NodeJS.WritableStream, stream: number, tty: boolean, perLine = false): Writable {
  const put = (parts: Buffer[], cb: () => void): void => {
    const size = parts.reduce((n, p) => n + p.length, 0);
    if (size === 0) return cb();
    const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
    const data = tty ? joined : perLine ? lineFrames(stream, joined) : frame(stream, joined);
    if (sink.write(data)) cb();
    else sink.once('drain', () => cb());
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
