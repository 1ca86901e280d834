// Completes a WebSocket handshake on a raw upgrade socket with a subprotocol already chosen.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

// one handshake engine per answered protocol; none tracks clients, each handler owns its sockets
const servers = new Map<string, WebSocketServer>();

function serverFor(protocol: string): WebSocketServer {
  let server = servers.get(protocol);
  if (!server) {
    server = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: 64 * 1024 * 1024,
      handleProtocols: () => protocol || false,
    });
    servers.set(protocol, server);
  }
  return server;
}

/** protocol '' answers without a Sec-WebSocket-Protocol header (the client offered none) */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, protocol: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed) {
      reject(new Error('client went away before the upgrade'));
      return;
    }
    const onClose = () => reject(new Error('client went away during the upgrade'));
    socket.once('close', onClose);
    // ws validates offered names as RFC 6455 tokens and refuses the whole handshake over
    // `SPDY/3.1+portforward.k8s.io` ('/' is no token character); the choice is already made, so ws sees a
    // placeholder while parsing and answers with the real name
    const offered = req.headers['sec-websocket-protocol'];
    if (protocol) req.headers['sec-websocket-protocol'] = 'negotiated';
    try {
      serverFor(protocol).handleUpgrade(req, socket, head, (ws) => {
        socket.off('close', onClose);
        resolve(ws);
      });
    } finally {
      req.headers['sec-websocket-protocol'] = offered;
    }
  });
}
