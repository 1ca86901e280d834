/**
 * A read-only OCI distribution (v2) registry over HTTPS serving an OCI image layout folder: what a node's
 * containerd needs to pull the image in it by digest (or by its ref.name tag), from any repository name.
 * index.json is read once at start; each blob is opened per request and streamed. A blob's path is made
 * only from a digest that matched `sha256:<64 hex>`, so no request reaches a file outside `blobs/sha256`.
 */
import { once } from 'node:events';
import { open } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { blobFile, readLayoutManifests, type LayoutManifests } from './layout-manifests.js';
import { DIGEST_PATTERN, type Descriptor } from './oci-media.js';

export interface LayoutServerOptions {
  /** The OCI image layout folder. */
  dir: string;
  /** Omitted: every address, IPv6 and IPv4 where the host has IPv6, else IPv4 (Node's default). */
  host?: string;
  /** 0 for any free port. */
  port: number;
  /** PEM. */
  cert: string;
  key: string;
  /** One line per request: method, path, status. */
  log?: (line: string) => void;
}

export interface LayoutServer {
  port: number;
  /** The manifests index.json lists, in its order. */
  manifests: Descriptor[];
  close(): Promise<void>;
}

type ErrorCode = 'MANIFEST_UNKNOWN' | 'BLOB_UNKNOWN' | 'NAME_UNKNOWN' | 'UNSUPPORTED' | 'UNKNOWN';

const ROUTE = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/;

export async function serveImageLayout(o: LayoutServerOptions): Promise<LayoutServer> {
  const manifests = await readLayoutManifests(o.dir);
  const server = createServer({ cert: o.cert, key: o.key, minVersion: 'TLSv1.2' }, (req, res) => {
    // Cut short: the body was not all handed to the socket. (Not "finished": a client may read it all and hang
    // up before Node learns that the last write was flushed.)
    res.on('close', () => o.log?.(`${req.method} ${req.url} ${res.statusCode}${res.writableEnded ? '' : ' (cut short)'}`));
    answer(req, res, o.dir, manifests).catch((err: Error) => {
      if (!res.headersSent) ociError(res, 500, 'UNKNOWN', err.message);
      else res.destroy(err);
    });
  });
  // Every socket, from its first byte: the HTTP server's own list misses one still in its TLS handshake,
  // which would keep close() waiting for as long as the client lets it hang.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await listen(server, o.port, o.host);
  return {
    port: (server.address() as AddressInfo).port,
    manifests: manifests.listed,
    close: async () => {
      const closed = once(server, 'close');
      server.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

async function listen(server: Server, port: number, host: string | undefined): Promise<void> {
  try {
    server.listen(port, host);
    await once(server, 'listening');
  } catch (err) {
    throw new Error(`cannot listen on ${host ?? '*'}:${port}: ${(err as Error).message}`, { cause: err });
  }
}

async function answer(req: IncomingMessage, res: ServerResponse, dir: string, manifests: LayoutManifests): Promise<void> {
  res.setHeader('Docker-Distribution-API-Version', 'registry/2.0');
  const method = req.method ?? '';
  if (method !== 'GET' && method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return ociError(res, 405, 'UNSUPPORTED', 'this registry is read-only', { method });
  }
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/v2/' || path === '/v2') return sendJson(res, 200, {});
  const route = ROUTE.exec(path);
  if (!route) return ociError(res, 404, 'NAME_UNKNOWN', 'not a path this registry serves', { path });
  const [, name, kind, reference] = route;
  if (kind === 'manifests') {
    const d = DIGEST_PATTERN.test(reference) ? manifests.byDigest.get(reference) : manifests.byTag.get(reference);
    const unknown = (): void => ociError(res, 404, 'MANIFEST_UNKNOWN', 'manifest unknown to registry', { name, reference });
    return d ? sendBlob(res, method, dir, d.digest, d.mediaType, unknown) : unknown();
  }
  const unknown = (): void => ociError(res, 404, 'BLOB_UNKNOWN', 'blob unknown to registry', { name, digest: reference });
  return DIGEST_PATTERN.test(reference) ? sendBlob(res, method, dir, reference, 'application/octet-stream', unknown) : unknown();
}

async function sendBlob(res: ServerResponse, method: string, dir: string, digest: string, contentType: string, unknown: () => void): Promise<void> {
  const handle = await open(blobFile(dir, digest)).catch(() => undefined);
  if (!handle) return unknown();
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return unknown();
    res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': stats.size, 'Docker-Content-Digest': digest });
    if (method === 'HEAD' || stats.size === 0) {
      res.end();
      return;
    }
    // Read to the size said, no further: the stream ends with its last bytes, not after one more read finds
    // the end of the file, by which time a client with all it was promised may have hung up. The handle is
    // closed below, once, whether the copy ended or the client went away.
    await pipeline(handle.createReadStream({ autoClose: false, start: 0, end: stats.size - 1 }), res);
  } finally {
    await handle.close();
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': bytes.length }).end(bytes);
}

/** The error body the distribution spec defines (`errors: [{code, message, detail}]`). */
function ociError(res: ServerResponse, status: number, code: ErrorCode, message: string, detail?: unknown): void {
  sendJson(res, status, { errors: [{ code, message, ...(detail === undefined ? {} : { detail }) }] });
}
