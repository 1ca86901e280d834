// The raw `Upgrade: SPDY/3.1` handshake (client-go's spdy round tripper): protocol negotiation through
// X-Stream-Protocol-Version and the 101 answer.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * The first protocol the client lists that the server serves (the client's order decides, as in
 * apimachinery's httpstream.Handshake); '' when the client named none (legacy clients), undefined when
 * nothing matches.
 */
export function negotiateSpdyProtocol(req: IncomingMessage, served: readonly string[]): string | undefined {
  const raw = req.headers['x-stream-protocol-version'];
  const offered = (Array.isArray(raw) ? raw.join(',') : (raw ?? ''))
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  if (offered.length === 0) return '';
  return offered.find((p) => served.includes(p));
}

/** answers 101 and hands back any bytes that came with the request to the socket's reader */
export function switchToSpdy(socket: Duplex, head: Buffer, protocol: string): void {
  const lines = ['HTTP/1.1 101 Switching Protocols', 'Connection: Upgrade', 'Upgrade: SPDY/3.1'];
  if (protocol) lines.push(`X-Stream-Protocol-Version: ${protocol}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  if (head.length > 0) socket.unshift(head);
}
