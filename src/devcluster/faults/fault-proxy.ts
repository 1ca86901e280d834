// An HTTPS reverse proxy in front of a real kube-apiserver that injects the dev cluster's faults, so that the
// same reliability tests can run against a real cluster. TLS ends here; requests, bearer tokens included, go on
// unchanged, and bodies stream both ways (watches and followed logs never end, logs can be huge).
import https from 'node:https';
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline, Transform, type Duplex, type TransformCallback } from 'node:stream';
import type { Faults } from './faults.js';
import { admitAdmin, authority, FAULTS_PATH, handleFaultsRequest, sendJson, sendStatus, unreachableMessage } from './fault-switches.js';
import { handleUpgrade } from './fault-upgrade.js';
import { REQUESTS_PATH, RequestTally, requestKey } from './request-tally.js';

export interface FaultProxyOptions {
  listenHost: string;
  /** 0 = any free port */
  listenPort: number;
  /** PEM, the proxy's serving certificate (signed by the cluster CA) */
  tls: { cert: string; key: string };
  /** kube-apiserver, and the CA (PEM) that signed its certificate */
  upstream: { host: string; port: number; ca: string };
  /** bearer tokens of cluster admins (system:masters): only they may GET/PUT the faults endpoint */
  adminTokens: string[];
  /** mutated in place by PUT; read on every request */
  faults: Faults;
  /** told after every successful PUT (the cluster manager applies delayPodStartMs / log rotation elsewhere) */
  onChange?: (faults: Faults) => void;
}

export interface RunningFaultProxy {
  port: number;
  close(): Promise<void>;
}

interface ProxyContext {
  opts: FaultProxyOptions;
  agent: https.Agent;
  tally: RequestTally;
}

type StreamKind = 'watch' | 'follow' | undefined;

// hop-by-hop headers (RFC 9110 7.6.1) belong to one connection; node writes its own on each side
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'host', 'expect']);
// a free upstream connection idle this long is closed by the proxy before the API server closes it under a request
const UPSTREAM_IDLE_MS = 30_000;
// the paths a prober or a client's version check uses: error500 leaves them alone
const PROBE_PATH = /^\/(?:healthz|readyz|livez)(?:\/|$)|^\/version\/?$/;
// kube-apiserver's long-running subresources, which API Priority and Fairness lets through unseated
const NEVER_THROTTLED = /\/(?:log|exec|attach|portforward|proxy)(?:\/|$)/;
const TRUE_VALUES = new Set(['true', '1', 't', 'T', 'TRUE', 'True']);

export async function startFaultProxy(opts: FaultProxyOptions): Promise<RunningFaultProxy> {
  const ctx: ProxyContext = { opts, agent: new https.Agent({ keepAlive: true, ca: opts.upstream.ca, timeout: UPSTREAM_IDLE_MS }), tally: new RequestTally() };
  const sockets = new Set<Duplex>();
  const track = (socket: Duplex) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  // requestTimeout 0: an upload may take as long as the API server lets it
  const server = https.createServer({ cert: opts.tls.cert, key: opts.tls.key, ALPNProtocols: ['http/1.1'], requestTimeout: 0 }, (req, res) =>
    handleRequest(ctx, req, res),
  );
  server.on('connection', track);
  server.on('secureConnection', track);
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    ctx.tally.record(requestKey(req.method ?? 'GET', req.url ?? '/', true));
    handleUpgrade({ upstream: opts.upstream, faults: opts.faults, track }, req, socket, head);
  });
  await listen(server, opts.listenHost, opts.listenPort);
  return { port: (server.address() as AddressInfo).port, close: () => closeProxy(server, sockets, ctx.agent) };
}

function listen(server: https.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** open watches and tunnels would keep server.close() waiting for ever: they are cut */
function closeProxy(server: https.Server, sockets: Set<Duplex>, agent: https.Agent): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    for (const socket of sockets) socket.destroy();
    agent.destroy();
  });
}

function handleRequest(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  if (path === FAULTS_PATH) return handleFaultsRequest(req, res, ctx.opts);
  if (path === REQUESTS_PATH) {
    if (admitAdmin(req, res, ctx.opts.adminTokens, REQUESTS_PATH)) sendJson(res, 200, JSON.stringify(ctx.tally.snapshot()));
    return;
  }
  const watchEnded = ctx.tally.record(requestKey(req.method ?? 'GET', url));
  if (watchEnded) res.once('close', watchEnded);
  const { error500, throttle429 } = ctx.opts.faults;
  if (error500 > 0 && !PROBE_PATH.test(path) && Math.random() < error500) {
    return sendStatus(res, 500, 'InternalError', 'Internal error occurred: a fault injected by the berth fault proxy (error500)');
  }
  if (throttle429 > 0 && !PROBE_PATH.test(path) && !NEVER_THROTTLED.test(path) && Math.random() < throttle429) return sendThrottled(res);
  forward(ctx, req, res, streamKind(path, query), false);
}

/** What kube-apiserver's APF filter writes when it rejects a request (priority-and-fairness.go tooManyRequests). */
function sendThrottled(res: ServerResponse): void {
  const body = 'Too many requests, please try again later.\n';
  res.writeHead(429, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Retry-After': '1',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

function streamKind(path: string, query: URLSearchParams): StreamKind {
  if (TRUE_VALUES.has(query.get('watch') ?? '') || path.includes('/watch/')) return 'watch';
  if (path.endsWith('/log') && TRUE_VALUES.has(query.get('follow') ?? '')) return 'follow';
  return undefined;
}

function forward(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse, kind: StreamKind, retry: boolean): void {
  const { host, port } = ctx.opts.upstream;
  const headers = [...filterHeaders(req.rawHeaders), 'Host', authority(host, port)];
  const upReq = https.request({ host, port, method: req.method, path: req.url, headers, agent: ctx.agent });
  upReq.on('response', (upRes) => relay(ctx, res, upReq, upRes, kind));
  upReq.on('error', (err: NodeJS.ErrnoException) => {
    if (res.headersSent || res.destroyed) return void res.destroy();
    // a kept-alive connection the API server closed as it was reused: the body-less request is sent again
    if (!retry && upReq.reusedSocket && err.code === 'ECONNRESET' && req.readableEnded && (req.method === 'GET' || req.method === 'HEAD')) {
      return forward(ctx, req, res, kind, true);
    }
    sendStatus(res, 503, 'ServiceUnavailable', unreachableMessage(host, port, err));
  });
  res.on('close', () => {
    if (!res.writableFinished) upReq.destroy();
  });
  if (retry) upReq.end();
  else pipeline(req, upReq, () => undefined);
}

function relay(ctx: ProxyContext, res: ServerResponse, upReq: ClientRequest, upRes: IncomingMessage, kind: StreamKind): void {
  if (res.destroyed) return void upReq.destroy();
  res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, filterHeaders(upRes.rawHeaders, ['transfer-encoding']));
  // kube-apiserver sends a watch's head at once; node would hold it until the first event (a client awaiting the
  // response, as client-node's Watch.watch does, then waits for an event that its next request would cause)
  res.flushHeaders();
  if (kind === undefined || upRes.statusCode !== 200) {
    pipeline(upRes, res, () => undefined);
    return;
  }
  const gate = new StreamGate();
  pipeline(upRes, gate, res, () => undefined);
  injectStreamFaults(ctx.opts.faults, kind, res, upReq, gate);
}

/** rawHeaders without hop-by-hop ones, keeping repeated headers (Impersonate-Group...) apart */
function filterHeaders(raw: string[], alsoDrop: string[] = []): string[] {
  const named = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') raw[i + 1]!.split(',').forEach((n) => named.add(n.trim().toLowerCase()));
  }
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name) && !alsoDrop.includes(name)) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

function injectStreamFaults(faults: Faults, kind: StreamKind, res: ServerResponse, upReq: ClientRequest, gate: StreamGate): void {
  const timers: NodeJS.Timeout[] = [];
  if (kind === 'watch' && faults.endWatchAfterMs > 0) {
    timers.push(setTimeout(() => endWatch(res, upReq, gate), faults.endWatchAfterMs));
  }
  // dropStreams cuts followed logs (and, in fault-upgrade.ts, exec, attach and port-forward sessions), not
  // watches: endWatchAfterMs is the watches' own switch
  if (kind === 'follow' && Math.random() < faults.dropStreams) {
    // no terminating chunk: the client sees its stream break, as when a connection is lost
    const drop = () => {
      res.destroy();
      upReq.destroy();
    };
    timers.push(setTimeout(drop, 50 + Math.random() * 450));
  }
  res.once('close', () => timers.forEach(clearTimeout));
}

/**
 * Ends the watch as the API server does when a watch times out: the chunked response is terminated properly
 * (the client sees a clean end and watches again). The upstream request is aborted only once the end is
 * written, as aborting it fails the pipeline, which then destroys whatever has not finished.
 */
function endWatch(res: ServerResponse, upReq: ClientRequest, gate: StreamGate): void {
  res.once('finish', () => upReq.destroy());
  gate.stop();
}

/** passes a stream through until stop(), which ends its output cleanly and drops whatever comes after */
class StreamGate extends Transform {
  private stopped = false;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (!this.stopped) this.push(chunk);
    callback();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.push(null);
  }
}
