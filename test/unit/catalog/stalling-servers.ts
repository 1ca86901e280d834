// Servers on 127.0.0.1 that stall the way broken networks do: one that accepts connections and never
// says a word, an https one that sends headers and part of a body and then nothing, and an OCI registry
// whose manifest comes whole but whose blob stops midway. Each records what it was asked for.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sha256Digest } from '../../../src/catalog/oci.js';
import { scratchDir } from '../../util/scratch.js';

export interface StallingServer {
  url: string;
  /** PEM of the self-signed certificate (https servers). */
  caFile?: string;
  requests: string[];
  close(): Promise<void>;
}

function closer(server: net.Server, sockets: Set<net.Socket>): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

function tracked(server: net.Server): Set<net.Socket> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return sockets;
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Accepts TCP connections and never sends a byte (not even a TLS handshake). */
export async function startSilentServer(): Promise<StallingServer> {
  const requests: string[] = [];
  const server = net.createServer(() => requests.push('connection'));
  const sockets = tracked(server);
  const port = await listen(server);
  return { url: `https://127.0.0.1:${port}`, requests, close: closer(server, sockets) };
}

function selfSigned(): { key: Buffer; cert: Buffer; caFile: string } {
  const dir = scratchDir('berth-stall-ca-');
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key), cert: readFileSync(cert), caFile: cert };
}

/** https: answers 200 with a Content-Length, sends `head` of the body, then nothing more. */
export async function startHeadersThenStall(head: string): Promise<StallingServer> {
  const requests: string[] = [];
  const tls = selfSigned();
  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(200, { 'Content-Length': String(head.length * 4) });
    res.write(head);
  });
  const sockets = tracked(server);
  const port = await listen(server);
  return { url: `https://127.0.0.1:${port}`, caFile: tls.caFile, requests, close: closer(server, sockets) };
}

/**
 * A plain-http OCI registry (loopback registries are spoken to over http) holding one catalog artifact
 * at `repository:tag`: the manifest is served whole, the catalog layer stops after half its bytes.
 */
export async function startStallingRegistry(
  repository: string,
  tag: string,
  catalog: Buffer,
): Promise<StallingServer & { host: string; manifestDigest: string; layerDigest: string }> {
  const requests: string[] = [];
  const layerDigest = sha256Digest(catalog);
  const config = Buffer.from('{}');
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.empty.v1+json', digest: sha256Digest(config), size: config.length },
      layers: [{ mediaType: 'application/vnd.cncf.kubernetes.krm-func-catalog.layer.v1+yaml', digest: layerDigest, size: catalog.length }],
    }),
  );
  const manifestDigest = sha256Digest(manifest);
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === `/v2/${repository}/manifests/${tag}` || req.url === `/v2/${repository}/manifests/${manifestDigest}`) {
      res.writeHead(200, { 'Content-Type': 'application/vnd.oci.image.manifest.v1+json', 'Content-Length': String(manifest.length) }).end(manifest);
    } else if (req.url === `/v2/${repository}/blobs/${layerDigest}`) {
      res.writeHead(200, { 'Content-Length': String(catalog.length) });
      res.write(catalog.subarray(0, Math.floor(catalog.length / 2)));
    } else res.writeHead(404).end();
  });
  const sockets = tracked(server);
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}`, requests, manifestDigest, layerDigest, close: closer(server, sockets) };
}

/** A plain-http registry that answers every request 401 with a Bearer challenge whose realm is `realm`. */
export async function startChallengingRegistry(realm: string): Promise<StallingServer & { host: string }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(401, { 'WWW-Authenticate': `Bearer realm="${realm}",service="stall"` }).end();
  });
  const sockets = tracked(server);
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}`, requests, close: closer(server, sockets) };
}
