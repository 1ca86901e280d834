// Sends one channel message on an exec, attach or port-forward WebSocket. A binary frame is the channel byte
// followed by a copy of the chunk; a fresh buffer per chunk made V8 count 16 MiB of new memory outside its
// heap for every 16 MiB archive read, and it answered with two full mark-compacts per read (--trace-gc).
// A frame's buffer is therefore reused once the socket has written it.
import { WebSocket } from 'ws';
import type { ChannelCodec } from './channel-codec.js';

/** a pipe or TCP read is at most 64 KiB: one frame holds it behind its channel byte */
const FRAME_BYTES = 64 * 1024 + 1;
/** at most this many idle frames are kept for the whole process: 2 MiB */
const KEPT_FRAMES = 32;

class FramePool {
  private readonly idle: ArrayBuffer[] = [];
  private readonly own = new WeakSet<ArrayBufferLike>();

  take(size: number): Buffer {
    if (size > FRAME_BYTES) return Buffer.allocUnsafe(size);
    let block = this.idle.pop();
    if (!block) {
      block = new ArrayBuffer(FRAME_BYTES);
      this.own.add(block);
    }
    return Buffer.from(block, 0, size);
  }

  give(frame: Buffer): void {
    const block = frame.buffer;
    if (this.own.has(block) && this.idle.length < KEPT_FRAMES) this.idle.push(block as ArrayBuffer);
  }
}

const pool = new FramePool();

/** Nothing when the socket is no longer open; `sent` runs once the frame is written (or the socket is gone). */
export function sendOnChannel(ws: WebSocket, codec: ChannelCodec, channel: number, payload: Uint8Array, sent?: () => void): void {
  if (ws.readyState !== WebSocket.OPEN) return;
  const frame = codec.encode(channel, payload, (size) => pool.take(size));
  // ws calls back once the socket has taken the bytes, or with the error that discarded them: either way the
  // buffer is free again
  ws.send(frame, { binary: !codec.base64 }, () => {
    if (typeof frame !== 'string') pool.give(frame);
    sent?.();
  });
}
