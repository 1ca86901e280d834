/**
 * The listeners of `berth serve`, given as dockerd takes them (`unix:///path`, `tcp://host:port`):
 * unix sockets are made mode 0600; tcp listeners speak TLS when it is configured; a TCP listener off
 * loopback needs client certificates (`--tlsverify`) or a bearer token. Plain requests and hijacks
 * (`Upgrade: tcp`) reach the same router, over TLS or not.
 */
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { Call, DockerError, compareVersions, MIN_API_VERSION, API_VERSION, type Router } from './http.js';
import { toDockerError } from './routes.js';
import type { ListenerTls } from './tls-options.js';

export interface Listener {
  kind: 'unix' | 'tcp';
  path?: string;
  host?: string;
  port?: number;
  /** as given, for messages */
  spec: string;
}

/** dockerd's ports for a tcp listener given without one. */
export const DEFAULT_TCP_PORT = 2375;
export const DEFAULT_TLS_PORT = 2376;

/** With `tls`, a tcp listener without a port gets 2376 (as dockerd), else 2375; port 0 picks a free one. */
export function parseListener(spec: string, opts: { tls?: boolean } = {}): Listener {
  if (spec.startsWith('unix://')) {
    const path = spec.slice('unix://'.length);
    if (!path.startsWith('/')) throw new Error(`${spec}: a unix socket path must be absolute`);
    return { kind: 'unix', path, spec };
  }
  if (spec.startsWith('tcp://')) {
    // Parsed as tcp: (a scheme without a default port), so that `:80` is kept rather than dropped as http's.
    let url: URL;
    try {
      url = new URL(spec);
    } catch {
      throw new Error(`${spec}: not a tcp://host:port address`);
    }
    const port = url.port ? Number(url.port) : opts.tls ? DEFAULT_TLS_PORT : DEFAULT_TCP_PORT;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return { kind: 'tcp', host: host || '127.0.0.1', port, spec };
  }
  throw new Error(`${spec}: listeners are unix:///path or tcp://host:port`);
}

export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\./.test(h) || /^::ffff:127\./.test(h);
}

/**
 * The listeners' security rule, checked before anything listens: off loopback only with client
 * certificates or a token (`--tls` alone encrypts but lets anyone in); TLS flags need a tcp listener.
 */
export function checkListenerSecurity(listeners: Listener[], opts: { tls?: ListenerTls; token?: string }): void {
  for (const l of listeners) {
    if (l.kind === 'tcp' && !isLoopback(l.host ?? '') && !opts.tls?.verifyClients && !opts.token) {
      const tlsOnly = opts.tls ? ' (--tls alone encrypts but accepts any client)' : '';
      throw new Error(
        `${l.spec} is not a loopback address${tlsOnly}: give --tlsverify with --tlscacert (clients need a certificate that CA signed) or --token (clients send it as a bearer token) to listen there`,
      );
    }
  }
  if (opts.tls && !listeners.some((l) => l.kind === 'tcp')) {
    throw new Error('--tls/--tlsverify apply to tcp listeners only (unix sockets stay plain): add -H tcp://host:port');
  }
}

export interface ServeOptions {
  listeners: Listener[];
  router: Router;
  /** Required on every request when set (`Authorization: Bearer <token>`). */
  token?: string;
  /** The tcp listeners speak HTTPS with this (see loadListenerTls). */
  tls?: ListenerTls;
  log?: (line: string) => void;
}

export interface RunningServer {
  /** tcp listeners' real ports, in order */
  addresses: string[];
  close(): Promise<void>;
}

const HTTP_OPTIONS: http.ServerOptions = { requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 5_000 };

function httpsServer(tls: ListenerTls, log?: (line: string) => void): https.Server {
  const server = https.createServer({
    ...HTTP_OPTIONS,
    cert: tls.cert,
    key: tls.key,
    ca: tls.ca,
    requestCert: tls.verifyClients,
    rejectUnauthorized: tls.verifyClients,
    // The docker CLI half-closes a hijacked attach (TLS close_notify) when stdin ends and still reads
    // the output: the server side must not end with it.
    allowHalfOpen: true,
  });
  // A refused handshake (no or a foreign client certificate) only ends that connection.
  server.on('tlsClientError', (err, socket) => {
    const reason = (err as { reason?: string }).reason ?? err.message;
    log?.(`TLS handshake with ${socket.remoteAddress ?? 'a client'} refused: ${reason}`);
    socket.destroy();
  });
  return server;
}

const TLS_HANDSHAKE_RECORD = 0x16;

/**
 * What listens in front of an HTTPS server: a connection that opens with a TLS handshake goes on to
 * it; anything else (a client without TLS) gets the answer dockerd (Go) gives, so the docker CLI
 * says what is wrong instead of `EOF`.
 */
function plainTextGuard(server: https.Server, track: (s: net.Socket) => void): net.Server {
  // allowHalfOpen as on the HTTPS server: the raw socket must not end when the client half-closes.
  return net.createServer({ pauseOnConnect: true, allowHalfOpen: true }, (socket) => {
    track(socket);
    socket.on('error', () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      socket.pause();
      if (first[0] === TLS_HANDSHAKE_RECORD) {
        socket.unshift(first);
        server.emit('connection', socket);
      } else {
        socket.end('HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n');
      }
    });
    socket.resume();
  });
}

export async function serveDockerApi(opts: ServeOptions): Promise<RunningServer> {
  checkListenerSecurity(opts.listeners, opts);
  const servers: net.Server[] = [];
  const addresses: string[] = [];
  const sockets = new Set<Duplex>();
  const handle = (call: Call): void => {
    if (opts.token && call.req.headers.authorization !== `Bearer ${opts.token}`) {
      call.send(401, { message: 'unauthorized: this berth serve needs a bearer token' });
      return;
    }
    if (call.path !== call.req.url && compareVersions(call.version, MIN_API_VERSION) < 0) {
      call.send(400, { message: `client version ${call.version} is too old. Minimum supported API version is ${MIN_API_VERSION}, please upgrade your client to a newer version` });
      return;
    }
    if (compareVersions(call.version, API_VERSION) > 0) {
      call.send(400, { message: `client version ${call.version} is too new. Maximum supported API version is ${API_VERSION}` });
      return;
    }
    opts.router.dispatch(call).catch((err: unknown) => {
      const e = toDockerError(err);
      if (e.status >= 500) opts.log?.(`${call.method} ${call.path}: ${e.message}`);
      call.fail(e);
    });
  };
  for (const l of opts.listeners) {
    const server = l.kind === 'tcp' && opts.tls ? httpsServer(opts.tls, opts.log) : http.createServer(HTTP_OPTIONS);
    server.on('request', (req, res) => handle(new Call(req, res, undefined, undefined)));
    server.on('upgrade', (req, socket, head) => {
      socket.on('error', () => undefined);
      handle(new Call(req, undefined, socket, head));
    });
    const track = (s: Duplex): void => {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    };
    server.on('connection', track);
    server.on('clientError', (err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"message":"malformed HTTP request"}');
    });
    const listening: net.Server = server instanceof https.Server ? plainTextGuard(server, track) : server;
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      if (l.kind === 'unix') {
        if (existsSync(l.path!)) unlinkSync(l.path!);
        // umask for the socket file: created already private, then made exactly 0600.
        const old = process.umask(0o177);
        server.listen(l.path, () => {
          process.umask(old);
          chmodSync(l.path!, 0o600);
          resolve();
        });
      } else listening.listen(l.port, l.host, () => resolve());
    });
    servers.push(listening);
    const addr = listening.address();
    addresses.push(typeof addr === 'string' ? `unix://${addr}` : `tcp://${l.host}:${addr?.port}`);
  }
  return {
    addresses,
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      for (const l of opts.listeners) if (l.kind === 'unix' && existsSync(l.path!)) unlinkSync(l.path!);
    },
  };
}

export { DockerError };
