// What the fault proxy answers itself: the fault switches endpoint (for cluster admins only) and Kubernetes
// `Status` errors, over HTTP or on a raw upgrade socket, where no ServerResponse exists.
import { createHash, timingSafeEqual } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Faults } from './faults.js';

export const FAULTS_PATH = '/berth-dev/v1/faults';
// a fault document is a few hundred bytes; the cap only stops a runaway upload from filling memory
const MAX_BODY_BYTES = 64 * 1024;

const FRACTIONS: readonly string[] = ['dropStreams', 'error500', 'throttle429'];
const DURATIONS: readonly string[] = ['endWatchAfterMs', 'delayPodStartMs'];
const COUNTS: readonly string[] = ['failPortForwards', 'containerLogMaxBytes', 'containerLogCheckMs'];
const KNOWN: readonly string[] = [...FRACTIONS, ...DURATIONS, ...COUNTS];

export interface FaultsEndpoint {
  adminTokens: readonly string[];
  faults: Faults;
  onChange?: (faults: Faults) => void;
}

export function statusJson(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

export function sendJson(res: ServerResponse, code: number, body: string): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

export function sendStatus(res: ServerResponse, code: number, reason: string, message: string): void {
  sendJson(res, code, statusJson(code, reason, message));
}

/** An HTTP error on a socket whose request asked for an upgrade: the connection is not reused afterwards. */
export function writeRawStatus(socket: Duplex, code: number, reason: string, message: string): void {
  const body = statusJson(code, reason, message);
  const head = [
    `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

/** host:port as a Host header or a message names it (IPv6 in brackets) */
export function authority(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

export function unreachableMessage(host: string, port: number, err: Error): string {
  return `the API server at ${authority(host, port)} cannot be reached: ${err.message}`;
}

function bearerToken(req: IncomingMessage): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** compares every admin token in constant time, so timing tells a guesser nothing about how close it came */
function isAdminToken(token: string, adminTokens: readonly string[]): boolean {
  const d = digest(token);
  return adminTokens.reduce((found, t) => timingSafeEqual(d, digest(t)) || found, false);
}

const VERBS: Record<string, string> = { GET: 'get', PUT: 'update', POST: 'create', PATCH: 'patch', DELETE: 'delete' };

/** Answers 401 or 403 and returns false unless the request carries a cluster admin's token. */
export function admitAdmin(req: IncomingMessage, res: ServerResponse, adminTokens: readonly string[], path: string): boolean {
  const token = bearerToken(req);
  if (token === undefined) {
    sendStatus(res, 401, 'Unauthorized', 'Unauthorized');
    return false;
  }
  if (!isAdminToken(token, adminTokens)) {
    // the proxy knows tokens, not user names: the API server behind it does the authentication
    const verb = VERBS[req.method ?? ''] ?? (req.method ?? '').toLowerCase();
    sendStatus(res, 403, 'Forbidden', `forbidden: User (bearer token of no cluster admin) cannot ${verb} path "${path}"`);
    return false;
  }
  return true;
}

/** GET/PUT /berth-dev/v1/faults; PUT changes the shared Faults in place, all switches or none */
export function handleFaultsRequest(req: IncomingMessage, res: ServerResponse, ep: FaultsEndpoint): void {
  if (!admitAdmin(req, res, ep.adminTokens, FAULTS_PATH)) return;
  if (req.method === 'GET') return sendJson(res, 200, JSON.stringify(ep.faults));
  if (req.method !== 'PUT') return sendStatus(res, 405, 'MethodNotAllowed', `${req.method} is not supported on ${FAULTS_PATH}: use GET or PUT`);
  readSmallBody(req).then(
    (body) => applyFaults(res, ep, body),
    () => res.destroy(),
  );
}

function applyFaults(res: ServerResponse, ep: FaultsEndpoint, body: Buffer | undefined): void {
  if (body === undefined) return sendStatus(res, 413, 'RequestEntityTooLarge', `the request body is larger than ${MAX_BODY_BYTES} bytes`);
  const parsed = parseFaults(body.toString('utf8'));
  if ('error' in parsed) return sendStatus(res, 400, 'BadRequest', parsed.error);
  Object.assign(ep.faults, parsed.patch);
  sendJson(res, 200, JSON.stringify(ep.faults));
  try {
    ep.onChange?.(ep.faults);
  } catch (err) {
    // a listener's bug must not take the proxy down: the switches are already in place
    process.emitWarning(`fault proxy: onChange failed: ${(err as Error).message}`);
  }
}

/** undefined when larger than the cap; reads on to the end so the keep-alive connection stays usable */
function readSmallBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size <= MAX_BODY_BYTES ? Buffer.concat(chunks) : undefined));
    req.on('error', reject);
  });
}

/** A PUT body as a partial Faults, or why it is refused. */
export function parseFaults(text: string): { patch: Partial<Faults> } | { error: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { error: `the body must be a JSON object of fault switches: ${KNOWN.join(', ')}` };
  const patch: Record<string, number> = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === 'kind' || key === 'apiVersion') continue;
    if (!KNOWN.includes(key)) return { error: `unknown fault ${JSON.stringify(key)}; known: ${KNOWN.join(', ')}` };
    const problem = requirement(key, value);
    if (problem) return { error: `fault ${key} must be ${problem}, not ${JSON.stringify(value)}` };
    patch[key] = value as number;
  }
  return { patch: patch as Partial<Faults> };
}

function requirement(key: string, value: unknown): string | undefined {
  const fraction = FRACTIONS.includes(key);
  const whole = COUNTS.includes(key);
  const ok = typeof value === 'number' && Number.isFinite(value) && value >= 0 && (!fraction || value <= 1) && (!whole || Number.isInteger(value));
  if (ok) return undefined;
  return fraction ? 'a number between 0 and 1' : whole ? 'a whole number >= 0' : 'a number >= 0';
}
