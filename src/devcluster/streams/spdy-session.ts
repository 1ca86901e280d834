// A SPDY/3.1 server session over any Duplex (a raw upgraded socket, or a WebSocket tunnel), built on
// spdy-transport and adjusted to the peer Kubernetes clients use: moby/spdystream (client-go).
import type { Duplex } from 'node:stream';
import transport, { type SpdyConnection, type SpdyStream } from 'spdy-transport';

/** spdystream never sends WINDOW_UPDATE, so the send window must never run dry */
const UNLIMITED_WINDOW = 2 ** 50;

export interface SpdyServerSession {
  /** stops every stream and the session */
  destroy(): void;
}

/**
 * Serves SPDY on `socket`; every stream the client opens is handed to onStream (after an error listener is
 * attached, so a reset stream cannot crash the process). onClose runs once when the session is gone.
 */
export function serveSpdy(socket: Duplex, onStream: (stream: SpdyStream) => void, onClose: () => void): SpdyServerSession {
  const connection = transport.connection.create(socket, { protocol: 'spdy', isServer: true, headerCompression: true, maxChunk: 32 * 1024 });
  adaptToSpdystream(connection);
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    socket.destroy();
    onClose();
  };
  connection.on('error', close);
  connection.on('close', close);
  socket.on('close', close);
  socket.on('error', close);
  connection.on('stream', (stream: SpdyStream) => {
    stream.on('error', () => undefined); // RSTs from the client surface here; 'close' follows
    try {
      onStream(stream);
    } catch {
      stream.abort();
    }
  });
  return {
    destroy: () => {
      connection.destroyStreams();
      close();
    },
  };
}

/**
 * spdy-transport speaks SPDY as browsers did; spdystream differs in two ways that matter:
 * - its SYN_STREAMs carry only the application's headers (streamtype, port, requestid), no `:method`/`:path`,
 *   which spdy-transport's parser rejects as a protocol error: supply neutral ones before that check;
 * - it implements no flow control (no WINDOW_UPDATE ever), so each stream's send window starts unlimited.
 */
function adaptToSpdystream(connection: SpdyConnection): void {
  const state = connection._spdyState;
  const parser = state.parser;
  const parseKVs = parser.parseKVs as (buffer: unknown, callback: (err: Error | null, headers?: Record<string, unknown>) => void) => void;
  parser.parseKVs = function (buffer: unknown, callback: (err: Error | null, headers?: Record<string, unknown>) => void) {
    parseKVs.call(this, buffer, (err, headers) => {
      if (!err && headers) {
        headers[':method'] ??= 'POST';
        headers[':path'] ??= '/';
      }
      callback(err, headers);
    });
  };
  const send = state.streamWindow.send;
  send.limit = UNLIMITED_WINDOW * 2;
  send.setMax(UNLIMITED_WINDOW);
  send.current = UNLIMITED_WINDOW;
}

/** one header of a client stream as a string ('' when absent) */
export function streamHeader(stream: SpdyStream, name: string): string {
  const value = stream.headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

/** FIN our side of a stream unless it is already ended or was reset (no frames may follow an RST) */
export function endStream(stream: SpdyStream, data?: string | Buffer): void {
  if (stream.writableEnded || stream.destroyed || stream._spdyState?.aborted) return;
  if (data === undefined) stream.end();
  else stream.end(data);
}
