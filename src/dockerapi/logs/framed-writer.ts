/**
 * A Writable that frames what is written to it into a shared Docker stream (a response, or an upgraded
 * connection that exec's and attach's stdout and stderr share).
 */
import { OutgoingMessage } from 'node:http';
import { Writable } from 'node:stream';
import { FrameBatch } from '../http/framing.js';
import { LogFramer, type PartialLines } from './log-frames.js';

/** how much a framed writer takes in before its writer waits: what can queue into one write */
const FRAME_BATCH_BYTES = 256 * 1024;

/** How chunks become frames: all that queued up as one frame (exec, attach), or a log's lines (log-frames.ts). */
interface Framer {
  push(parts: Buffer[]): Buffer[];
  /** What is still held at the end of the stream. */
  flush(): Buffer[];
}

function wholeChunks(stream: number): Framer {
  return {
    push(parts) {
      const batch = new FrameBatch(stream);
      const nonEmpty = parts.filter((p) => p.length > 0);
      batch.add(
        nonEmpty,
        nonEmpty.reduce((n, p) => n + p.length, 0),
      );
      return batch.done();
    },
    flush: () => [],
  };
}

function raw(): Framer {
  return { push: (parts) => parts.filter((p) => p.length > 0), flush: () => [] };
}

/**
 * A Writable whose chunks reach `sink` framed as `stream`, or raw when `tty`. With `partialLines` it frames a
 * log: a frame per line, a long line in messages of 16 KiB (log-frames.ts). Chunks that queued up while the
 * sink was full go out together (one frame, when not a log) in one system call: a slow reader gets few large
 * writes instead of one per chunk.
 */
export function framedWriter(sink: Writable | NodeJS.WritableStream, stream: number, tty: boolean, partialLines?: PartialLines): Writable {
  const framer = tty ? raw() : partialLines ? new LogFramer(stream, partialLines) : wholeChunks(stream);
  const log = partialLines !== undefined;
  const send = (pieces: Buffer[], cb: () => void): void => {
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
    else if (log) setImmediate(cb);
    else cb();
  };
  return new Writable({
    highWaterMark: FRAME_BATCH_BYTES,
    write(chunk: Buffer, _enc, cb) {
      send(framer.push([chunk]), cb);
    },
    writev(chunks, cb) {
      send(framer.push(chunks.map((c) => c.chunk as Buffer)), cb);
    },
    final(cb) {
      send(framer.flush(), cb);
    },
  });
}
