// Completes a WebSocket handshake on a raw upgrade socket with a subprotocol already chosen.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

// one handshake engine per answered protocol; none tracks clients, each handler owns its sockets
const servers = new Map<string, WebSocketServer>();
/** the connection under each accepted WebSocket (closeSession ends it) */
const connections = new WeakMap<WebSocket, Duplex>();

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
        connections.set(ws, socket);
        resolve(ws);
      });
    } finally {
      req.headers['sec-websocket-protocol'] = offered;
    }
  });
}

/**
 * The server's end of a session: the close frame, then the connection ends at once, as the API server's
 * (x/net/websocket's Close) does. Waiting for the client's close frame instead (ws's close, up to 30 s)
 * held python-kubernetes' exec for those 30 s: it polls its socket, and a close frame already read into
 * its TLS buffer is never seen until the connection ends.
 */
export function closeSession(ws: WebSocket, code = 1000): void {
  ws.close(code);
  connections.get(ws)?.end();
}
