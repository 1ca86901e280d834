// The network sources of the catalog tests: an https server with its own self-signed CA, and Debian's
// docker-registry on 127.0.0.1. Both stop on close(), which the tests also use to go offline.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface HttpsSource {
  url: string;
  caFile: string;
  /** Path → body; `cut` sends a Content-Length it never fulfils and drops the connection. */
  files: Map<string, Buffer | 'cut'>;
  close(): Promise<void>;
}

export async function startHttps(): Promise<HttpsSource> {
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-ca-'));
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
  const files = new Map<string, Buffer | 'cut'>();
  const server = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const body = files.get(req.url ?? '');
    if (body === undefined) {
      res.writeHead(404).end('not found');
      return;
    }
    if (body === 'cut') {
      res.writeHead(200, { 'Content-Length': '4096' });
      res.write('apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\n', () => res.socket?.destroy());
      return;
    }
    res.writeHead(200, { 'Content-Length': String(body.length) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caFile: cert,
    files,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        rmSync(dir, { recursive: true, force: true });
      }),
  };
}

export interface Registry {
  host: string;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/**
 * `auth` is the `auth:` section of the registry's config (YAML flow style), e.g. `{htpasswd: {realm: r, path: /f}}`;
 * `deletes` lets manifests be deleted (distribution refuses DELETE with 405 unless told).
 */
export async function startRegistry(opts: { auth?: string; deletes?: boolean } = {}): Promise<Registry> {
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-registry-'));
  const port = await freePort();
  const config = path.join(dir, 'config.yml');
  writeFileSync(
    config,
    `version: 0.1\nlog: {level: info}\nstorage: {filesystem: {rootdirectory: ${dir}/data}${opts.deletes ? ', delete: {enabled: true}' : ''}}\nhttp: {addr: 127.0.0.1:${port}}\n${opts.auth ? `auth: ${opts.auth}\n` : ''}`,
  );
  const child: ChildProcess = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      const onData = (c: Buffer): void => {
        seen += c.toString();
        if (/listening on/.test(seen)) resolve();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`docker-registry exited ${code}: ${seen}`)));
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { host: `127.0.0.1:${port}`, close: stop };
}
