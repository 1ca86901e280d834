// Reading an upgrade request: which protocol switch it asks for, whether the WebSocket handshake is
// well-formed (checked before the node is asked for anything), and what the URL says about the session.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { badRequest } from '../api/errors.js';
import { queryBool } from '../api/query-bool.js';
import { writeStatusResponse } from './http-error.js';
import { negotiateProtocol, offeredProtocols } from './subprotocols.js';

export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

export function isSpdyUpgrade(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase().startsWith('spdy/3');
}

const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;

/** why the WebSocket handshake would fail (the checks the ws package makes), or undefined when it is fine */
export function webSocketHandshakeProblem(req: IncomingMessage): string | undefined {
  if (req.method !== 'GET') return 'websocket upgrade requires method GET';
  const key = req.headers['sec-websocket-key'];
  if (key === undefined || !WEBSOCKET_KEY.test(key)) return 'missing or invalid Sec-WebSocket-Key header';
  const version = Number(req.headers['sec-websocket-version']);
  if (version !== 13 && version !== 8) return 'missing or invalid Sec-WebSocket-Version header';
  return undefined;
}

function requestUrl(req: IncomingMessage): URL {
  return new URL(req.url ?? '/', 'http://devcluster.invalid');
}

/** `/api/v1/namespaces/ns/pods/NAME/exec` → NAME ('' when the path has another shape) */
export function podNameFromPath(req: IncomingMessage): string {
  const parts = requestUrl(req).pathname.split('/');
  const i = parts.indexOf('pods');
  return i >= 0 ? decodeURIComponent(parts[i + 1] ?? '') : '';
}

/** the last path segment: exec, attach or portforward */
export function subresourceFromPath(req: IncomingMessage): string {
  const parts = requestUrl(req).pathname.split('/').filter((p) => p.length > 0);
  return parts[parts.length - 1] ?? '';
}

/** exec's argv, one `command=` per element */
export function commandFromQuery(req: IncomingMessage): string[] {
  return requestUrl(req).searchParams.getAll('command');
}

/** a boolean query flag as the API server's parameter codec reads it (api/query-bool.ts) */
export function queryFlag(req: IncomingMessage, name: string): boolean {
  return queryBool(requestUrl(req).searchParams, name);
}

/**
 * The checks every WebSocket stream upgrade makes before anything is opened: a WebSocket upgrade at all, a sound
 * handshake, and a channel protocol both sides speak. On failure the client gets the 400 Status and undefined comes
 * back; otherwise the negotiated protocol.
 */
export function negotiateWebSocketUpgrade(req: IncomingMessage, socket: Duplex, served: readonly string[]): string | undefined {
  if (!isWebSocketUpgrade(req)) {
    writeStatusResponse(socket, badRequest('Upgrade request required'));
    return undefined;
  }
  const problem = webSocketHandshakeProblem(req);
  if (problem) {
    writeStatusResponse(socket, badRequest(problem));
    return undefined;
  }
  const offered = offeredProtocols(req);
  const protocol = negotiateProtocol(offered, served);
  if (protocol === undefined) writeStatusResponse(socket, badRequest(`requested protocol(s) are not supported: [${offered.join(' ')}]; supports [${served.join(' ')}]`));
  return protocol;
}
