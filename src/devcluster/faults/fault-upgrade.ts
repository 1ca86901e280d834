// Upgraded connections (exec, attach, cp and port-forward, over SPDY/3.1 or WebSocket). After the handshake the
// bytes are another protocol's frames, so the proxy tunnels raw sockets: it can refuse an upgrade or cut a
// tunnel, which is what a failing kubelet or a lost connection looks like to the client.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { Faults } from './faults.js';
import { authority, FAULTS_PATH, unreachableMessage, writeRawStatus } from './fault-switches.js';

export interface UpgradeContext {
  upstream: { host: string; port: number; ca: string };
  faults: Faults;
  /** remembers a socket so that closing the proxy destroys it */
  track(socket: Duplex): void;
}

/** the server's `upgrade` event */
export function handleUpgrade(ctx: UpgradeContext, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  socket.on('error', () => socket.destroy());
  const path = (req.url ?? '/').split('?')[0]!;
  if (path === FAULTS_PATH) {
    writeRawStatus(socket, 400, 'BadRequest', `${FAULTS_PATH} does not upgrade connections`);
    return;
  }
  if (path.endsWith('/portforward') && ctx.faults.failPortForwards > 0) {
    ctx.faults.failPortForwards--;
    writeRawStatus(socket, 500, 'InternalError', 'Internal error occurred: port-forward refused, a fault injected by the berth fault proxy (failPortForwards)');
    return;
  }
  tunnel(ctx, req, socket, head);
}

function tunnel(ctx: UpgradeContext, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const { host, port, ca } = ctx.upstream;
  const up = tlsConnect({ host, port, ca, servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'] });
  // keystrokes of an interactive exec go at once
  up.setNoDelay(true);
  ctx.track(up);
  // a side that closed without ending (an error, a reset) takes the other down; a clean end is passed on by pipe
  socket.once('close', () => !up.writableEnded && up.destroy());
  const refuse = (err: Error) => {
    writeRawStatus(socket, 503, 'ServiceUnavailable', unreachableMessage(host, port, err));
    up.destroy();
  };
  up.once('error', refuse);
  up.once('secureConnect', () => {
    up.off('error', refuse);
    up.write(requestHead(req, authority(host, port)));
    if (head.length > 0) up.write(head);
    up.on('error', () => up.destroy());
    up.once('close', () => !socket.writableEnded && socket.destroy());
    socket.pipe(up);
    up.pipe(socket);
    onStatusLine(up, (status) => {
      if (status === 101 && Math.random() < ctx.faults.dropStreams) dropLater(socket, up);
    });
  });
}

/** the request as the client sent it, to the upstream's host */
function requestHead(req: IncomingMessage, host: string): string {
  const lines = [`${req.method} ${req.url} HTTP/1.1`, `Host: ${host}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'host') lines.push(`${raw[i]}: ${raw[i + 1]}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** calls back with the status code of the upstream's answer (0 when it is not HTTP) */
function onStatusLine(up: TLSSocket, then: (status: number) => void): void {
  let seen = '';
  const onData = (chunk: Buffer) => {
    seen += chunk.toString('latin1');
    if (!seen.includes('\r\n') && seen.length < 1024) return;
    up.off('data', onData);
    then(Number(/^HTTP\/1\.[01] (\d{3})/.exec(seen)?.[1] ?? 0));
  };
  up.on('data', onData);
}

/**
 * Cuts the tunnel a little after the switch, while the session is in use, without a close frame or a status:
 * what a dropped network connection or a restarted kubelet looks like to the client.
 */
function dropLater(socket: Duplex, up: TLSSocket): void {
  const timer = setTimeout(
    () => {
      socket.destroy();
      up.destroy();
    },
    50 + Math.random() * 450,
  );
  socket.once('close', () => clearTimeout(timer));
}
