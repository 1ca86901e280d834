// port-forward: the upgrade request the HTTP server hands over after authentication and authorization.
// Three ways in: the WebSocket channel protocol (client-node), SPDY tunnelled in WebSocket (kubectl >= 1.31)
// and a raw SPDY/3.1 upgrade (older kubectl, and kubectl's fallback).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { createWebSocketStream } from 'ws';
import { badRequest, internalError } from '../api/errors.js';
import type { Faults } from '../types.js';
import { writeStatusResponse } from './http-error.js';
import { servePortForwardOverSpdy } from './portforward-spdy.js';
import { servePortForwardOverChannels } from './portforward-websocket.js';
import { negotiateSpdyProtocol, switchToSpdy } from './spdy-upgrade.js';
import { PORT_FORWARD_PROTOCOLS, SPDY_TUNNEL_PORTFORWARD } from './subprotocols.js';
import { isSpdyUpgrade, negotiateWebSocketUpgrade, podNameFromPath } from './upgrade-request.js';
import { acceptWebSocket } from './websocket-accept.js';

const PORT_FORWARD_SPDY_PROTOCOL = 'portforward.k8s.io';

/**
 * `ports` are the request's `ports` query values (the WebSocket channel protocol forwards exactly those);
 * over SPDY every stream names its own port. connect(port) opens one TCP connection inside the pod.
 * Faults: failPortForwards refuses the upgrade (and counts down); dropStreams cuts a channel-protocol forward.
 */
export function handlePortForwardUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, ports: number[], connect: (port: number) => Promise<Duplex>, faults?: Faults): void {
  socket.on('error', () => socket.destroy());
  if (faults && faults.failPortForwards > 0) {
    faults.failPortForwards--;
    writeStatusResponse(socket, internalError('port-forward refused by the dev cluster failPortForwards fault'));
    return;
  }
  const podName = podNameFromPath(req);
  if (isSpdyUpgrade(req)) {
    const protocol = negotiateSpdyProtocol(req, [PORT_FORWARD_SPDY_PROTOCOL]);
    if (protocol === undefined) {
      writeStatusResponse(socket, badRequest(`unable to upgrade: unable to negotiate protocol: server supports [${PORT_FORWARD_SPDY_PROTOCOL}]`));
      return;
    }
    switchToSpdy(socket, head, protocol);
    servePortForwardOverSpdy(socket, podName, connect);
    return;
  }
  const protocol = negotiateWebSocketUpgrade(req, socket, PORT_FORWARD_PROTOCOLS);
  if (protocol === undefined) return;
  if (protocol !== SPDY_TUNNEL_PORTFORWARD && ports.length === 0) {
    writeStatusResponse(socket, badRequest('query parameter "port" is required'));
    return;
  }
  acceptWebSocket(req, socket, head, protocol).then(
    (ws) => {
      if (protocol === SPDY_TUNNEL_PORTFORWARD) servePortForwardOverSpdy(createWebSocketStream(ws), podName, connect);
      else servePortForwardOverChannels(ws, protocol, ports, podName, connect, Math.random() < (faults?.dropStreams ?? 0));
    },
    () => socket.destroy(),
  );
}
