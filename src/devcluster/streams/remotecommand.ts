// exec and attach: the upgrade request the HTTP server hands over after authentication and authorization.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Faults, StreamSession } from '../types.js';
import { bridgeRemoteCommand } from './remotecommand-bridge.js';
import { openSession } from './remotecommand-session.js';
import { handleSpdyRemoteCommand } from './remotecommand-spdy.js';
import { REMOTE_COMMAND_PROTOCOLS } from './subprotocols.js';
import { commandFromQuery, isSpdyUpgrade, negotiateWebSocketUpgrade, subresourceFromPath } from './upgrade-request.js';
import { acceptWebSocket } from './websocket-accept.js';

/**
 * Serves one exec/attach upgrade. open() is called only once the upgrade is known to be acceptable; when it
 * rejects (unknown container, container not running...) the client gets an HTTP error with the Status, as
 * from the real API server, and no upgrade.
 */
export function handleRemoteCommandUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, open: () => Promise<StreamSession>, faults: Faults): void {
  socket.on('error', () => socket.destroy());
  if (isSpdyUpgrade(req)) {
    handleSpdyRemoteCommand(req, socket, head, open);
    return;
  }
  const protocol = negotiateWebSocketUpgrade(req, socket, REMOTE_COMMAND_PROTOCOLS);
  if (protocol === undefined) return;
  const drop = Math.random() < faults.dropStreams;
  void serve(req, socket, head, open, protocol, drop);
}

async function serve(req: IncomingMessage, socket: Duplex, head: Buffer, open: () => Promise<StreamSession>, protocol: string, drop: boolean): Promise<void> {
  const session = await openSession(socket, open);
  if (!session) return;
  let ws;
  try {
    ws = await acceptWebSocket(req, socket, head, protocol);
  } catch {
    session.abort();
    return;
  }
  const kind = subresourceFromPath(req) === 'attach' ? 'attach' : 'exec';
  bridgeRemoteCommand(ws, session, { protocol, kind, command: commandFromQuery(req), drop });
}
