/**
 * Whole-body HTTP(S) requests for catalogs, executables and OCI registries. A body that ends before
 * its Content-Length is an error (a download cut midway must never pass for a short file).
 * Credentials never follow a redirect to another origin (registries send blobs to a CDN with a
 * signed URL, which must not see the registry's token).
 *
 * No request can hang: a connection not made within the fetch timeout, or one that goes that long
 * without a byte (before the headers, or midway through the body), fails naming the URL. The timeout
 * is BERTH_FETCH_TIMEOUT_SECONDS (default 30; fractions allowed, so tests can lower it). Callers cache
 * only whole, verified bodies, so a stalled download leaves nothing behind.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';

export class FetchError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

export interface FetchOptions {
  method?: string;
  headers?: Record<string, string>;
  /** A stream is given as a function that opens it: a request sent again (a redirect) sends it from its start. */
  body?: Buffer | string | (() => Readable);
  /** Extra CA certificates (PEM file), added to the system roots. Defaults to $BERTH_CA_FILE. */
  caFile?: string;
  /** Statuses accepted besides 2xx. */
  accept?: number[];
  /** Gives up on a request (each redirect hop) that has not finished within this time. */
  timeoutMs?: number;
  /** Connect and idle timeout (no bytes for this long); default from BERTH_FETCH_TIMEOUT_SECONDS. */
  idleMs?: number;
  /** What is fetched, for messages: `catalog source https://…` (default: the method). */
  label?: string;
  /** Called as the body arrives: bytes so far and the Content-Length, if any (progress lines). */
  onProgress?: (received: number, total: number | undefined) => void;
}

export const FETCH_TIMEOUT_ENV = 'BERTH_FETCH_TIMEOUT_SECONDS';
const DEFAULT_FETCH_TIMEOUT_SECONDS = 30;

/** The connect/idle timeout in ms, from BERTH_FETCH_TIMEOUT_SECONDS (a positive number of seconds). */
export function fetchTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[FETCH_TIMEOUT_ENV];
  if (raw === undefined || raw === '') return DEFAULT_FETCH_TIMEOUT_SECONDS * 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new FetchError(`${FETCH_TIMEOUT_ENV}=${raw} is not a positive number of seconds`);
  return seconds * 1000;
}

export interface FetchResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const MAX_REDIRECTS = 5;

export async function fetchUrl(url: string, opts: FetchOptions = {}): Promise<FetchResult> {
  let target = new URL(url);
  let hopOpts = opts;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const res = await request(target, hopOpts);
    if ([301, 302, 303, 307, 308].includes(res.status) && res.headers.location && !opts.accept?.includes(res.status)) {
      const next = new URL(res.headers.location, target);
      if (next.origin !== target.origin) hopOpts = { ...hopOpts, headers: withoutAuthorization(hopOpts.headers) };
      target = next;
      continue;
    }
    if ((res.status < 200 || res.status > 299) && !opts.accept?.includes(res.status)) {
      const detail = res.body.toString('utf8').slice(0, 300).trim();
      throw new FetchError(`${opts.method ?? 'GET'} ${redact(target)} answered ${res.status}${detail ? `: ${detail}` : ''}`, res.status);
    }
    return res;
  }
  throw new FetchError(`${redact(new URL(url))}: more than ${MAX_REDIRECTS} redirects`);
}

function request(url: URL, opts: FetchOptions): Promise<FetchResult> {
  const caFile = opts.caFile ?? process.env.BERTH_CA_FILE;
  let ca: string[] | undefined;
  if (url.protocol === 'https:' && caFile) {
    try {
      ca = [...rootCertificates, readFileSync(caFile, 'utf8')];
    } catch (err) {
      throw new FetchError(`cannot read the CA file ${caFile}: ${(err as Error).message}`);
    }
  }
  const lib = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
  if (!lib) throw new FetchError(`${url.href}: only https (and http to a loopback registry) can be fetched`);
  const idleMs = opts.idleMs ?? fetchTimeoutMs();
  const what = `${opts.label ?? opts.method ?? 'GET'} ${redact(url)}`;
  return new Promise((resolve, reject) => {
    // One clock for "no progress": re-armed when the connection is made and on every byte received.
    let connected = false;
    let idle: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        const seconds = `${idleMs / 1000} s`;
        const err = new FetchError(connected ? `${what} stalled: no data for ${seconds}` : `${what}: no connection within ${seconds}`);
        // Settled here, first: destroying the request then reports the stall as an abort as well.
        reject(err);
        req.destroy(err);
      }, idleMs);
    };
    const req = lib.request(url, { method: opts.method ?? 'GET', headers: opts.headers, ...(ca ? { ca } : {}) }, (res) => {
      arm();
      const chunks: Buffer[] = [];
      let received = 0;
      const expected = res.headers['content-length'] !== undefined ? Number(res.headers['content-length']) : undefined;
      const cut = (why: string): void =>
        reject(new FetchError(`download of ${redact(url)} failed midway (${received}${expected !== undefined ? ` of ${expected}` : ''} bytes): ${why}`));
      res.on('data', (c: Buffer) => {
        arm();
        chunks.push(c);
        received += c.length;
        opts.onProgress?.(received, expected);
      });
      res.on('aborted', () => cut('the connection was closed'));
      res.on('error', (err) => cut(err.message));
      res.on('end', () => {
        clearTimeout(idle);
        if (!res.complete) return cut('the connection was closed');
        if (expected !== undefined && received !== expected && opts.method !== 'HEAD') return cut('the body is shorter than its Content-Length');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });
    arm();
    req.on('socket', (socket) => {
      const onConnect = (): void => {
        connected = true;
        arm();
      };
      if (!socket.connecting) onConnect();
      else socket.once('connect', onConnect);
    });
    // A request body sent in full is progress too (the answer may take a while to come).
    req.on('finish', () => arm());
    req.on('close', () => clearTimeout(idle));
    if (opts.timeoutMs) {
      const timer = setTimeout(() => req.destroy(new Error(`not done within ${opts.timeoutMs} ms`)), opts.timeoutMs);
      req.on('close', () => clearTimeout(timer));
    }
    req.on('error', (err) =>
      reject(new FetchError(`${what}: ${err.message}${/certificate/i.test(err.message) ? ' (trust its CA with --ca-file or BERTH_CA_FILE)' : ''}`)),
    );
    if (typeof opts.body === 'function') sendStream(req, opts.body(), arm);
    else req.end(opts.body);
  });
}

/** Streams a request body; every chunk sent is progress (a large upload is not a stall). */
function sendStream(req: http.ClientRequest, body: Readable, progress: () => void): void {
  body.on('data', progress);
  body.once('error', (err) => req.destroy(new Error(`the body could not be read: ${err.message}`)));
  req.once('close', () => body.destroy());
  body.pipe(req);
}

function withoutAuthorization(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!headers) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'));
}

function redact(url: URL): string {
  const u = new URL(url.href);
  u.password = '';
  u.username = '';
  return u.href;
}
