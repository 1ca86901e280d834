/**
 * The listeners of `berth serve`, given as dockerd takes them (`unix:///path`, `tcp://host:port`):
 * unix sockets are made mode 0600, and only a stale socket at their path is replaced; tcp listeners speak
 * TLS when it is configured; a TCP listener whose host resolves off loopback needs client certificates
 * (`--tlsverify`) or a bearer token. Plain requests and hijacks (`Upgrade: tcp`) reach the same router,
 * over TLS or not; a request body that stalls is answered 408 (see body-timeout.ts).
 */
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { Call, DockerError, type Router } from './http.js';
import { API_VERSION, compareVersions, DEFAULT_MIN_API_VERSION } from './api-version.js';
import { DEFAULT_BODY_TIMEOUT_MS } from './body-timeout.js';
import { resolveLoopback, type Resolve } from './loopback.js';
import { toDockerError } from '../routes.js';
import type { ListenerTls } from './tls-options.js';
import { checkToken } from './token.js';
import { claimSocketPath } from './unix-socket.js';

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

/**
 * The listeners' security rule, checked before anything listens: off loopback (every address the host
 * resolves to must be loopback) only with client certificates or a token (`--tls` alone encrypts but
 * lets anyone in); TLS flags need a tcp listener; a token must be long enough to be a secret.
 */
export async function checkListenerSecurity(listeners: Listener[], opts: { tls?: ListenerTls; token?: string; resolve?: Resolve }): Promise<void> {
  if (opts.token !== undefined) checkToken(opts.token, '--token');
  for (const l of listeners) {
    if (l.kind !== 'tcp' || opts.tls?.verifyClients || opts.token) continue;
    const { loopback, addresses } = await resolveLoopback(l.host ?? '', opts.resolve);
    if (!loopback) {
      const tlsOnly = opts.tls ? ' (--tls alone encrypts but accepts any client)' : '';
      const resolved =
        addresses.length === 0
          ? ' (it does not resolve)'
          : addresses.length === 1 && addresses[0] === l.host
            ? ''
            : ` (it resolves to ${addresses.join(', ')})`;
      throw new Error(
        `${l.spec} is not a loopback address${resolved}${tlsOnly}: give --tlsverify with --tlscacert (clients need a certificate that CA signed) or --token (clients send it as a bearer token) to listen there`,
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
  /** How long a request body may stall (JSON: arrive whole) before a 408. */
  bodyTimeoutMs?: number;
  /** The oldest API version served (default: dockerd 29's, DEFAULT_MIN_API_VERSION). */
  minApiVersion?: string;
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
  await checkListenerSecurity(opts.listeners, opts);
  const bodyTimeoutMs = opts.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const servers: net.Server[] = [];
  const addresses: string[] = [];
  const sockets = new Set<Duplex>();
  const track = (s: Duplex): void => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  /** unix socket path → inode of the socket this server made (close removes only that one). */
  const ownSockets = new Map<string, number>();
  for (const l of opts.listeners) if (l.kind === 'unix') await claimSocketPath(l.path!);
  const handle = (call: Call): void => {
    if (!admitted(call, opts.token, opts.minApiVersion ?? DEFAULT_MIN_API_VERSION)) return;
    opts.router.dispatch(call).catch((err: unknown) => {
      const e = toDockerError(err);
      if (e.status >= 500) opts.log?.(`${call.method} ${call.path}: ${e.message}`);
      call.fail(e);
    });
  };
  for (const l of opts.listeners) {
    const server = l.kind === 'tcp' && opts.tls ? httpsServer(opts.tls, opts.log) : http.createServer(HTTP_OPTIONS);
    serveCalls(server, handle, track, bodyTimeoutMs);
    const listening: net.Server = server instanceof https.Server ? plainTextGuard(server, track) : server;
    await listenOn(l, listening);
    servers.push(listening);
    // After listening, a listener's error (too many open files on accept) is logged, never a crash.
    listening.on('error', (err) => opts.log?.(`${l.spec}: ${err.message}`));
    if (l.kind === 'unix') ownSockets.set(l.path!, lstatSync(l.path!).ino);
    const addr = listening.address();
    addresses.push(typeof addr === 'string' ? `unix://${addr}` : `tcp://${l.host}:${addr?.port}`);
  }
  return {
    addresses,
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      for (const [path, ino] of ownSockets) {
        try {
          if (lstatSync(path).ino === ino) unlinkSync(path);
        } catch {
          /* already gone */
        }
      }
    },
  };
}

/** What dockerd answers before any route: a bad URL, a missing bearer token, an API version out of range. */
function admitted(call: Call, token: string | undefined, minApiVersion: string): boolean {
  if (call.badUrl) {
    call.send(400, { message: call.badUrl });
    return false;
  }
  if (token && call.req.headers.authorization !== `Bearer ${token}`) {
    call.send(401, { message: 'unauthorized: this berth serve needs a bearer token' });
    return false;
  }
  if (call.path !== call.req.url && compareVersions(call.version, minApiVersion) < 0) {
    call.send(400, {
      message: `client version ${call.version} is too old. Minimum supported API version is ${minApiVersion}, please upgrade your client to a newer version`,
    });
    return false;
  }
  if (compareVersions(call.version, API_VERSION) > 0) {
    call.send(400, { message: `client version ${call.version} is too new. Maximum supported API version is ${API_VERSION}` });
    return false;
  }
  return true;
}

/** Requests and upgrades of one HTTP(S) server become Calls; a broken connection ends only itself. */
function serveCalls(server: http.Server, handle: (call: Call) => void, track: (s: Duplex) => void, bodyTimeoutMs: number): void {
  server.on('request', (req, res) => handle(new Call(req, res, undefined, undefined, bodyTimeoutMs)));
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => undefined);
    handle(new Call(req, undefined, socket, head, bodyTimeoutMs));
  });
  server.on('connection', (s: net.Socket) => {
    track(s);
    // A client's reset or a stream error on one connection ends that connection, never the server.
    s.on('error', () => s.destroy());
  });
  server.on('clientError', (err, socket) => {
    if (!socket.writable) return socket.destroy();
    // node's own timeouts (headers that never end) are 408, anything else a malformed request.
    const timedOut = (err as { code?: string }).code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const [status, message] = timedOut ? ['408 Request Timeout', 'the request headers stopped arriving'] : ['400 Bad Request', 'malformed HTTP request'];
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${JSON.stringify({ message })}`);
  });
}

/** Listens where `l` says: a unix socket is made private (0600) from its creation on. */
function listenOn(l: Listener, server: net.Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (l.kind === 'unix') {
      // umask for the socket file: created already private, then made exactly 0600.
      const old = process.umask(0o177);
      server.once('error', (err) => {
        process.umask(old);
        reject(err);
      });
      server.listen(l.path, () => {
        process.umask(old);
        chmodSync(l.path!, 0o600);
        resolve();
      });
    } else {
      server.once('error', reject);
      server.listen(l.port, l.host, () => resolve());
    }
  });
}

export { DockerError };
