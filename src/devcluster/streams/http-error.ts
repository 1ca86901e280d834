// A Status answer written straight onto a raw socket: upgrade requests (exec, attach, port-forward) are
// answered before or instead of the protocol switch, where no ServerResponse exists.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ApiError } from '../api/errors.js';

/** A plain HTTP/1.1 response carrying the Status JSON (HTTP status = err.code), then the socket is ended. */
export function writeStatusResponse(socket: Duplex, err: ApiError): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(err.toStatus());
  const lines = [
    `HTTP/1.1 ${err.code} ${STATUS_CODES[err.code] ?? 'Unknown'}`,
    'Content-Type: application/json',
    'Cache-Control: no-cache, private',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  if (err.details?.retryAfterSeconds !== undefined) lines.push(`Retry-After: ${err.details.retryAfterSeconds}`);
  // an error listener keeps a client that hangs up mid-answer from crashing the server
  socket.on('error', () => socket.destroy());
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
