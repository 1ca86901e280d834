/**
 * The HTTP side of the Docker API: one Call per request, whether it came as a plain request or as a
 * hijack (`Connection: Upgrade`, `Upgrade: tcp`, which node hands to the 'upgrade' event with the
 * raw socket). Errors are Docker's `{"message": ...}` bodies.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { DEFAULT_BODY_TIMEOUT_MS, bodyTimeoutError, idleTimeout } from './body-timeout.js';
import { DockerError, badRequest } from './docker-error.js';
import { API_VERSION } from './api-version.js';

// Handlers import DockerError and its helpers from here, as they did before docker-error.ts.
export { DockerError, badRequest, conflict, notFound } from './docker-error.js';

export const MAX_JSON_BYTES = 2 * 1024 * 1024;
/** How much of a body berth reads and drops after answering it early before it closes the connection instead. */
const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024;

/** `/v1.41/containers/json` → `{ version: '1.41', path: '/containers/json' }`. */
export function splitVersion(pathname: string): { version?: string; path: string } {
  const m = /^\/v(\d+\.\d+)(\/.*)$/.exec(pathname);
  if (!m) return { path: pathname };
  return { version: m[1], path: m[2] };
}

/** What a handler writes a stream to: the hijacked socket or a chunked 200 response. */
export interface OpenedStream {
  out: Writable;
  /** Bytes the client sends after the request (stdin); ends at the client's half-close. */
  input: Readable;
  end(): void;
  /** Settles when the client goes away. */
  closed: Promise<void>;
}

export class Call {
  readonly method: string;
  readonly path: string;
  readonly version: string;
  readonly query: URLSearchParams;
  /** Set when the request line's URL cannot be parsed: the server answers 400 without routing. */
  readonly badUrl?: string;
  private responded = false;
  /** Body bytes already read off the socket (hijack) that belong to the request. */
  private readonly bodyStream: Readable;

  constructor(
    readonly req: IncomingMessage,
    private readonly res: ServerResponse | undefined,
    private readonly socket: Duplex | undefined,
    head: Buffer | undefined,
    private readonly bodyTimeoutMs = DEFAULT_BODY_TIMEOUT_MS,
  ) {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://docker');
    } catch {
      url = new URL('/', 'http://docker');
      this.badUrl = `invalid request URL ${JSON.stringify(req.url)}`;
    }
    const { version, path } = splitVersion(url.pathname);
    this.method = req.method ?? 'GET';
    this.path = path;
    this.version = version ?? API_VERSION;
    this.query = url.searchParams;
    if (socket) {
      const pass = new PassThrough();
      if (head?.length) pass.write(head);
      socket.pipe(pass);
      this.bodyStream = pass;
    } else {
      this.bodyStream = req;
    }
  }

  get hijacked(): boolean {
    return this.socket !== undefined;
  }

  get isResponded(): boolean {
    return this.responded;
  }

  flag(name: string, fallback = false): boolean {
    const v = this.query.get(name);
    if (v === null) return fallback;
    return v === '1' || v.toLowerCase() === 'true';
  }

  /** An integer query parameter (undefined when absent); anything else is a 400 naming it. */
  int(name: string): number | undefined {
    const v = this.query.get(name);
    if (v === null || v === '') return undefined;
    if (!/^-?\d+$/.test(v.trim())) throw badRequest(`invalid value for ${name}: "${v}" is not an integer`);
    return Number(v);
  }

  /** The body as JSON, read eagerly: some clients never end the request (exec start). */
  async json<T>(optional = true): Promise<T | undefined> {
    const length = Number(this.req.headers['content-length'] ?? NaN);
    const chunks: Buffer[] = [];
    let size = 0;
    const text = await new Promise<string>((resolve, reject) => {
      const stream = this.bodyStream;
      const stop = (): void => {
        clearTimeout(timer);
        stream.off('data', onData);
        stream.off('end', onEnd);
        stream.pause();
      };
      const finish = (value: string): void => {
        stop();
        resolve(value);
      };
      const refuse = (err: DockerError): void => {
        stop();
        reject(err);
      };
      // The whole JSON must be here within the timeout: a client that stalls mid-body gets a 408.
      const timer = setTimeout(() => refuse(bodyTimeoutError(this.bodyTimeoutMs, 'the request body')), this.bodyTimeoutMs);
      timer.unref();
      const onData = (c: Buffer): void => {
        size += c.length;
        if (size > MAX_JSON_BYTES) {
          refuse(new DockerError(413, `request body larger than ${MAX_JSON_BYTES} bytes`));
          return;
        }
        chunks.push(c);
        const all = Buffer.concat(chunks);
        if (Number.isFinite(length)) {
          if (all.length >= length) {
            // Anything after the body is stdin on a hijacked connection.
            if (all.length > length) stream.unshift(all.subarray(length));
            finish(all.subarray(0, length).toString('utf8'));
          }
          return;
        }
        try {
          JSON.parse(all.toString('utf8'));
          finish(all.toString('utf8'));
        } catch {
          /* not complete yet */
        }
      };
      const onEnd = (): void => finish(Buffer.concat(chunks).toString('utf8'));
      if (length === 0) {
        clearTimeout(timer);
        return resolve('');
      }
      stream.on('data', onData);
      stream.on('end', onEnd);
    });
    if (text.trim() === '') {
      if (optional) return undefined;
      throw badRequest('request body is empty, JSON expected');
    }
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed === null || typeof parsed !== 'object') throw new Error('not an object');
      return parsed as T;
    } catch (err) {
      throw badRequest(`invalid JSON in the request body: ${(err as Error).message}`);
    }
  }

  /** The raw body stream (archives), failing with a 408 when it pauses longer than the body timeout. */
  body(): Readable {
    // Piped, not handed over: whoever reads may destroy what it got without tearing down the socket.
    return this.bodyStream.pipe(idleTimeout(this.bodyTimeoutMs, 'the request body'));
  }

  /** Whether the request's body has not all arrived (plain requests only). */
  private get bodyPending(): boolean {
    return !this.socket && !this.req.complete;
  }

  /**
   * Ends an answer given before the whole body arrived (a refused archive, an unknown id) once the client has
   * sent the rest, which is read and dropped meanwhile. The answer itself leaves at once; ending the response
   * is what makes node close the connection, and a close under a client still writing gives it `broken pipe`
   * instead of the answer (the docker CLI reports whichever of the two it sees first). A client that keeps
   * sending past DISCARD_LIMIT_BYTES, or stops for the body timeout, has its connection closed.
   */
  private endAfterRestOfBody(res: ServerResponse): void {
    const req = this.req;
    const close = (): void => void req.socket.destroy();
    const timer = setTimeout(close, this.bodyTimeoutMs);
    let dropped = 0;
    const count = (chunk: Buffer): void => {
      dropped += chunk.length;
      if (dropped > DISCARD_LIMIT_BYTES) close();
      else timer.refresh();
    };
    req.unpipe();
    req.on('data', count);
    const stop = (): void => {
      clearTimeout(timer);
      req.off('data', count);
    };
    req.once('end', () => {
      stop();
      res.end();
    });
    req.once('close', stop);
    req.resume();
  }

  send(status: number, body?: unknown, headers: Record<string, string> = {}): void {
    if (this.responded) return;
    this.responded = true;
    const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const h: Record<string, string | number> = { ...commonHeaders(), ...headers };
    // An answer before the whole body: a client that stalled (408) is not waited for; any other may finish sending.
    const early = this.bodyPending;
    if (early && status === 408) h.Connection = 'close';
    if (payload !== undefined && !h['Content-Type']) h['Content-Type'] = typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
    if (payload !== undefined) h['Content-Length'] = Buffer.byteLength(payload);
    if (this.res) {
      this.res.writeHead(status, h);
      const answer = this.method === 'HEAD' ? undefined : payload;
      if (!early || status === 408) return void this.res.end(answer);
      if (answer !== undefined) this.res.write(answer);
      this.endAfterRestOfBody(this.res);
      return;
    }
    const socket = this.socket as Duplex;
    const lines = [`HTTP/1.1 ${status} ${statusText(status)}`, ...Object.entries(h).map(([k, v]) => `${k}: ${v}`), 'Connection: close', '', ''];
    socket.write(lines.join('\r\n'));
    socket.end(payload);
    // A hijacked client that stalled gets the answer, then the connection goes (it may never half-close).
    if (status === 408) socket.once('finish', () => socket.destroy());
  }

  fail(err: unknown): void {
    const status =
      err instanceof DockerError ? err.status : typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 500;
    const message = (err as Error).message ?? String(err);
    if (this.responded) {
      this.res?.destroy();
      this.socket?.destroy();
      return;
    }
    this.send(status, { message });
  }

  /** A streamed response whose headers leave at once (wait, logs, events, pulls). */
  startChunked(contentType: string, status = 200, headers: Record<string, string> = {}): ServerResponse | Writable {
    this.responded = true;
    if (this.res) {
      this.res.writeHead(status, { ...commonHeaders(), ...headers, 'Content-Type': contentType });
      this.res.flushHeaders();
      return this.res;
    }
    const socket = this.socket as Duplex;
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`HTTP/1.1 ${status} ${statusText(status)}\r\nContent-Type: ${contentType}\r\n${extra}Connection: close\r\n\r\n`);
    return socket;
  }

  /**
   * Resolves when this call is over for the client: its response ended, or its connection closed first. Not the
   * connection's own 'close': a keep-alive client sends its next requests on it, and a listener per request
   * would pile up there for as long as the connection lives.
   */
  clientGone(): Promise<void> {
    const own: NodeJS.EventEmitter | undefined = this.res ?? this.socket;
    return new Promise<void>((resolve) => own?.once('close', () => resolve()));
  }

  /** attach / exec start: 101 on a hijack, else a 200 whose body is the stream. */
  openStream(contentType: string): OpenedStream {
    this.responded = true;
    if (this.socket) {
      const socket = this.socket;
      socket.write(`HTTP/1.1 101 UPGRADED\r\nContent-Type: ${contentType}\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n${apiHeaderLines()}\r\n`);
      // pipe() resumes the body stream, which json() left paused after the request's JSON.
      const input = this.bodyStream.pipe(new PassThrough());
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      return { out: socket, input, end: () => socket.end(), closed };
    }
    const res = this.res as ServerResponse;
    res.writeHead(200, { ...commonHeaders(), 'Content-Type': contentType });
    res.flushHeaders();
    const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
    return { out: res, input: this.bodyStream.pipe(new PassThrough()), end: () => res.end(), closed };
  }
}

export function commonHeaders(): Record<string, string> {
  return { 'Api-Version': API_VERSION, 'Docker-Experimental': 'false', Ostype: 'linux', Server: `Docker/${API_VERSION} (berth)` };
}

function apiHeaderLines(): string {
  return Object.entries(commonHeaders())
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
}

function statusText(status: number): string {
  return STATUS_CODES[status] ?? 'Status';
}

export type Handler = (call: Call, params: string[]) => Promise<void> | void;

export interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
  /** The Docker Engine API operation served (the spec's operationId, e.g. `ContainerCreate`). */
  operation?: string;
}

export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string | RegExp, handler: Handler, operation?: string): this {
    const re = typeof pattern === 'string' ? new RegExp(`^${pattern.replace(/\{[a-z]+\}/g, '([^/]+)')}$`) : pattern;
    this.routes.push({ method, pattern: re, handler, operation });
    return this;
  }

  /** Registers the handler of one Docker Engine API operation (named by the spec's operationId). */
  op(operation: string, method: string, pattern: string | RegExp, handler: Handler): this {
    return this.add(method, pattern, handler, operation);
  }

  /** The operations registered, in order (for tests and docs). */
  operations(): string[] {
    return this.routes.flatMap((r) => (r.operation ? [r.operation] : []));
  }

  async dispatch(call: Call): Promise<void> {
    let pathMatched = false;
    for (const r of this.routes) {
      const m = r.pattern.exec(call.path);
      if (!m) continue;
      pathMatched = true;
      if (
        r.method !== call.method &&
        !(r.method === 'GET' && call.method === 'HEAD' && !this.routes.some((x) => x.method === 'HEAD' && x.pattern.test(call.path)))
      )
        continue;
      await r.handler(call, m.slice(1).map(decodePathPart));
      return;
    }
    if (pathMatched) throw new DockerError(405, `method ${call.method} not allowed on ${call.path}`);
    throw new DockerError(404, `page not found: ${call.method} ${call.path}`);
  }
}

/** A %-escaped part of the path; a malformed escape (`%zz`, a lone `%`, invalid UTF-8) is the client's error. */
export function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw badRequest(`invalid %-escape in the request path: "${part}" (escape '%' as %25)`);
  }
}

export function readAllText(stream: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
}
