/**
 * stdin of an exec or attach session onto its WebSocket (channel 0), throttled on the socket's own buffer;
 * v5 ends it with a CLOSE frame.
 */
import type { Readable } from 'node:stream';
import WebSocket from 'ws';

const STDIN = 0;
const CLOSE = 255;

/**
 * Largest stdin payload per WebSocket message. The kubelet's and API server's stream code (x/net/websocket)
 * refuses messages over 32 MiB, and the receiver holds a whole message before writing any of it to the
 * process: a big chunk (a whole archive) is cut so the process starts reading while the rest travels.
 * kubectl's own stdin messages are at most 32 KiB (one read of its stdin).
 */
export const MAX_STDIN_FRAME = 64 * 1024;

/**
 * stdin → channel 0, at most `maxBuffered` bytes in the socket at a time: a large chunk (a whole archive
 * handed over at once) is framed piece by piece as the socket drains, not copied into frames all at once.
 * Ends with v5 CLOSE once everything is sent. Resolves once the last byte is handed to the socket (after every
 * frame before it, so a close of the socket that follows loses none of them); never, when the socket closed first.
 */
export function pumpStdin(ws: WebSocket, stdin: Readable, canClose: boolean, maxBuffered: number): Promise<void> {
  let allSent: () => void = () => undefined;
  const sent = new Promise<void>((resolve) => (allSent = resolve));
  let inFlight = 0;
  let pending: Buffer | undefined;
  let ended = false;
  // A frame's buffer is reused once the socket has written it (or is gone): a fresh one per message made
  // V8 count each 16 MiB archive twice towards its next full collection. As many as maxBuffered holds.
  const spare: Buffer[] = [];
  const sendFrame = (data: Buffer): void => {
    const block = spare.pop() ?? Buffer.allocUnsafe(MAX_STDIN_FRAME + 1);
    const frame = block.subarray(0, data.length + 1);
    frame[0] = STDIN;
    data.copy(frame, 1);
    inFlight += frame.length;
    ws.send(frame, { binary: true }, () => {
      inFlight -= frame.length;
      spare.push(block);
      pump();
    });
  };
  const pump = (): void => {
    if (ws.readyState !== WebSocket.OPEN) return;
    while (pending && inFlight <= maxBuffered) {
      sendFrame(pending.subarray(0, MAX_STDIN_FRAME));
      pending = pending.length > MAX_STDIN_FRAME ? pending.subarray(MAX_STDIN_FRAME) : undefined;
    }
    if (pending || inFlight > maxBuffered) return;
    // Without v5 there is no way to end stdin but closing the socket, which ends the whole session:
    // callers plan for that (stdin delivered as a file) and never give us stdin then.
    if (ended) {
      ended = false;
      if (canClose) ws.send(Buffer.from([CLOSE, STDIN]), { binary: true });
      allSent();
    } else if (inFlight <= maxBuffered / 2 && stdin.isPaused()) stdin.resume();
  };
  const onData = (chunk: Buffer | string): void => {
    if (ws.readyState !== WebSocket.OPEN) return;
    pending = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (pending.length === 0) pending = undefined;
    pump();
    if (pending || inFlight > maxBuffered) stdin.pause();
  };
  stdin.on('data', onData);
  stdin.once('end', () => {
    stdin.off('data', onData);
    ended = true;
    pump();
  });
  stdin.once('error', () => ws.close());
  ws.once('close', () => stdin.off('data', onData));
  return sent;
}
