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

/**
 * A Writable whose chunks reach `sink` framed as `stream` (a frame per line with `perLine`, as logs
 * are), or raw when `tty`.
 */
export function framedWriter(sink: NodeJS.WritableStream, stream: number, tty: boolean, perLine = false): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (chunk.length === 0) return cb();
      const ok = sink.write(tty ? chunk : perLine ? lineFrames(stream, chunk) : frame(stream, chunk));
      if (ok) cb();
      else sink.once('drain', () => cb());
    },
  });
}
