/**
 * The listeners of `berth serve`, given as dockerd takes them (`unix:///path`, `tcp://host:port`):
 * unix sockets are made mode 0600; a TCP listener off loopback needs a bearer token. Plain requests
 * and hijacks (`Upgrade: tcp`) reach the same router.
 */
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { Call, DockerError, compareVersions, MIN_API_VERSION, API_VERSION, type Router } from './http.js';
import { toDockerError } from './routes.js';

export interface Listener {
  kind: 'unix' | 'tcp';
  path?: string;
  host?: string;
  port?: number;
  /** as given, for messages */
  spec: string;
}

export function parseListener(spec: string): Listener {
  if (spec.startsWith('unix://')) {
    const path = spec.slice('unix://'.length);
    if (!path.startsWith('/')) throw new Error(`${spec}: a unix socket path must be absolute`);
    return { kind: 'unix', path, spec };
  }
  if (spec.startsWith('tcp://')) {
    const url = new URL(spec.replace(/^tcp:/, 'http:'));
    const port = Number(url.port || 2375);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return { kind: 'tcp', host: host || '127.0.0.1', port, spec };
  }
  throw new Error(`${spec}: listeners are unix:///path or tcp://host:port`);
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

export interface ServeOptions {
  listeners: Listener[];
  router: Router;
  /** Required on every request when set (`Authorization: Bearer <token>`). */
  token?: string;
  log?: (line: string) => void;
}

export interface RunningServer {
  /** tcp listeners' real ports, in order */
  addresses: string[];
  close(): Promise<void>;
}

export async function serveDockerApi(opts: ServeOptions): Promise<RunningServer> {
  for (const l of opts.listeners) {
    if (l.kind === 'tcp' && !isLoopback(l.host ?? '') && !opts.token) {
      throw new Error(`${l.spec} is not a loopback address: give --token (clients send it as a bearer token) to listen there`);
    }
  }
  const servers: http.Server[] = [];
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
    const server = http.createServer({ requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 5_000 });
    server.on('request', (req, res) => handle(new Call(req, res, undefined, undefined)));
    server.on('upgrade', (req, socket, head) => {
      socket.on('error', () => undefined);
      handle(new Call(req, undefined, socket, head));
    });
    server.on('connection', (s) => {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    });
    server.on('clientError', (err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"message":"malformed HTTP request"}');
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      if (l.kind === 'unix') {
        if (existsSync(l.path!)) unlinkSync(l.path!);
        // umask for the socket file: created already private, then made exactly 0600.
        const old = process.umask(0o177);
        server.listen(l.path, () => {
          process.umask(old);
          chmodSync(l.path!, 0o600);
          resolve();
        });
      } else server.listen(l.port, l.host, () => resolve());
    });
    servers.push(server);
    const addr = server.address();
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
