// berth's image server on 127.0.0.1: a read-only OCI distribution API over HTTPS (its self-signed certificate
// verifies for the address it names) serving an OCI image layout folder: manifests by digest and by tag, blobs
// that hash to their digests, the spec's error bodies, nothing written, nothing outside blobs/sha256 reached.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import https from 'node:https';
import { connect as netConnect, createServer } from 'node:net';
import path from 'node:path';
import { connect } from 'node:tls';
import { writeOciLayout } from '../../../src/registry/layout-entries.js';
import { serveImageLayout, type LayoutServer } from '../../../src/registry/layout-server.js';
import type { AssembledImage } from '../../../src/registry/oci-image.js';
import { OCI_INDEX, OCI_MANIFEST } from '../../../src/registry/oci-media.js';
import { selfSignedCertificate } from '../../../src/registry/self-signed.js';
import { scratchDir } from '../../util/scratch.js';
import { folderWriter, layeredImage } from './image-fixtures.js';

const sha256 = (b: Buffer | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const tls = selfSignedCertificate({ commonName: 'berth-image-server', ipAddresses: ['127.0.0.1'], notAfter: new Date(Date.now() + 3600_000) });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request verified against the server's own certificate (its CA and its SAN 127.0.0.1). */
function request(port: number, method: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, method, path, ca: tls.cert, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const errorCodes = (a: Answer): string[] => (JSON.parse(a.body.toString()) as { errors: Array<{ code: string }> }).errors.map((e) => e.code);

async function layoutOf(image: AssembledImage, refName?: string): Promise<string> {
  const dir = scratchDir('berth-served-');
  await writeOciLayout(image, folderWriter(dir).add, { refName });
  return dir;
}

describe('serving an image layout', () => {
  let image: AssembledImage;
  let dir: string;
  let server: LayoutServer;
  const log: string[] = [];
  const logged = new EventEmitter();
  before(async () => {
    image = await layeredImage([{ 'bin/hello': '#!/bin/sh\necho served\n' }, { 'etc/motd': 'from a pod\n' }]);
    dir = await layoutOf(image, 'step-1');
    server = await serveImageLayout({
      dir,
      host: '127.0.0.1',
      port: 0,
      ...tls,
      log: (l) => {
        log.push(l);
        logged.emit('line', l);
      },
    });
  });
  after(() => server.close());

  test('a TLS handshake on 127.0.0.1 verifies against the certificate itself', async () => {
    const socket = connect({ host: '127.0.0.1', port: server.port, ca: tls.cert });
    await once(socket, 'secureConnect');
    try {
      assert.equal(socket.authorized, true, String(socket.authorizationError));
      assert.equal(socket.getPeerX509Certificate()?.subject, 'CN=berth-image-server');
      assert.match(socket.getProtocol() ?? '', /^TLSv1\.[23]$/);
    } finally {
      socket.destroy();
    }
  });

  test('GET /v2/ answers 200 {} as registry/2.0', async () => {
    const a = await request(server.port, 'GET', '/v2/');
    assert.equal(a.status, 200);
    assert.equal(a.headers['docker-distribution-api-version'], 'registry/2.0');
    assert.deepEqual(JSON.parse(a.body.toString()), {});
  });

  test('the manifest by digest and by its tag, from any repository name; HEAD with the same headers and no body', async () => {
    assert.deepEqual(server.manifests, [
      { mediaType: OCI_MANIFEST, digest: image.manifest.digest, size: image.manifest.size, annotations: { 'org.opencontainers.image.ref.name': 'step-1' } },
    ]);
    for (const path of [`/v2/berth/step/manifests/${image.manifest.digest}`, '/v2/a/b/c/manifests/step-1']) {
      const get = await request(server.port, 'GET', path);
      assert.equal(get.status, 200, path);
      assert.ok(get.body.equals(image.manifest.bytes));
      assert.equal(get.headers['content-type'], OCI_MANIFEST);
      assert.equal(get.headers['content-length'], String(image.manifest.size));
      assert.equal(get.headers['docker-content-digest'], image.manifest.digest);
      const head = await request(server.port, 'HEAD', path);
      assert.equal(head.status, 200);
      assert.equal(head.body.length, 0);
      assert.equal(head.headers['content-type'], OCI_MANIFEST);
      assert.equal(head.headers['content-length'], String(image.manifest.size));
      assert.equal(head.headers['docker-content-digest'], image.manifest.digest);
    }
  });

  test('blobs stream with their sizes and hash to their digests; HEAD gives the size alone', async () => {
    for (const d of [image.config, ...image.layers.map((l) => l.descriptor)]) {
      const get = await request(server.port, 'GET', `/v2/berth/step/blobs/${d.digest}`);
      assert.equal(get.status, 200);
      assert.equal(sha256(get.body), d.digest);
      assert.equal(get.headers['content-type'], 'application/octet-stream');
      assert.equal(get.headers['content-length'], String(d.size));
      assert.equal(get.headers['docker-content-digest'], d.digest);
      const head = await request(server.port, 'HEAD', `/v2/berth/step/blobs/${d.digest}`);
      assert.deepEqual([head.status, head.body.length, head.headers['content-length']], [200, 0, String(d.size)]);
    }
  });

  test('what the layout does not hold is 404 with the OCI error codes', async () => {
    const absent = sha256('absent');
    const cases: Array<[string, string, string]> = [
      ['GET', `/v2/berth/step/manifests/${absent}`, 'MANIFEST_UNKNOWN'],
      ['GET', '/v2/berth/step/manifests/latest', 'MANIFEST_UNKNOWN'],
      // a blob of the layout, but not a manifest its index names
      ['GET', `/v2/berth/step/manifests/${image.config.digest}`, 'MANIFEST_UNKNOWN'],
      ['GET', `/v2/berth/step/blobs/${absent}`, 'BLOB_UNKNOWN'],
      ['GET', `/v2/berth/step/blobs/${image.config.digest.toUpperCase().replace('SHA256', 'sha256')}`, 'BLOB_UNKNOWN'],
      ['GET', '/v2/berth/step/blobs/sha256:..%2F..%2Findex.json', 'BLOB_UNKNOWN'],
      ['GET', '/v2/berth/step/blobs/..%2F..%2Findex.json', 'BLOB_UNKNOWN'],
      ['GET', '/v2/berth/step/blobs/../../index.json', 'NAME_UNKNOWN'],
      ['GET', '/v2/_catalog', 'NAME_UNKNOWN'],
      ['GET', '/index.json', 'NAME_UNKNOWN'],
    ];
    for (const [method, path, code] of cases) {
      const a = await request(server.port, method, path);
      assert.equal(a.status, 404, `${method} ${path}: ${a.body.toString()}`);
      assert.equal(a.headers['content-type'], 'application/json');
      assert.deepEqual(errorCodes(a), [code], path);
    }
    const manifest = JSON.parse((await request(server.port, 'GET', `/v2/x/manifests/${absent}`)).body.toString());
    assert.deepEqual(manifest.errors[0].detail, { name: 'x', reference: absent });
    const head = await request(server.port, 'HEAD', `/v2/x/blobs/${absent}`);
    assert.deepEqual([head.status, head.body.length], [404, 0]);
  });

  test('writes are 405 UNSUPPORTED: the registry is read-only', async () => {
    for (const [method, path] of [
      ['PUT', `/v2/berth/step/manifests/step-2`],
      ['DELETE', `/v2/berth/step/manifests/${image.manifest.digest}`],
      ['POST', '/v2/berth/step/blobs/uploads/'],
      ['PATCH', '/v2/berth/step/blobs/uploads/1'],
    ]) {
      const a = await request(server.port, method, path);
      assert.equal(a.status, 405, `${method} ${path}`);
      assert.equal(a.headers.allow, 'GET, HEAD');
      const body = JSON.parse(a.body.toString());
      assert.equal(body.errors[0].code, 'UNSUPPORTED');
      assert.match(body.errors[0].message, /read-only/);
    }
    assert.equal((await request(server.port, 'GET', `/v2/berth/step/manifests/${image.manifest.digest}`)).status, 200, 'still there');
  });

  test('each request is logged with its method, path and status', async () => {
    const digest = image.layers[0].descriptor.digest;
    await request(server.port, 'HEAD', `/v2/logged/blobs/${digest}`);
    await request(server.port, 'PUT', '/v2/logged/manifests/x');
    const ours = log.filter((l) => l.includes('/v2/logged/'));
    assert.deepEqual(ours, [`HEAD /v2/logged/blobs/${digest} 200`, 'PUT /v2/logged/manifests/x 405']);
  });

  test('a client that goes away in the middle of a blob is logged as cut short, and the server serves on', async () => {
    const big = randomBytes(16 << 20);
    const digest = sha256(big);
    writeFileSync(path.join(dir, 'blobs', 'sha256', digest.slice(7)), big);
    const cut = new Promise<string>((resolve) => logged.on('line', (l: string) => l.includes('/v2/cut/') && resolve(l)));
    const req = https.get({ host: '127.0.0.1', port: server.port, path: `/v2/cut/blobs/${digest}`, ca: tls.cert, agent: false }, (res) => {
      res.once('data', () => req.destroy());
    });
    req.on('error', () => undefined);
    assert.equal(await cut, `GET /v2/cut/blobs/${digest} 200 (cut short)`);
    const whole = await request(server.port, 'GET', `/v2/after/blobs/${digest}`);
    assert.equal(sha256(whole.body), digest);
  });
});

describe('a layout whose index.json names an index', () => {
  test("the index's manifests are served by digest too (a multi-platform pull asks for one next)", async () => {
    const image = await layeredImage([{ a: 'nested\n' }]);
    const dir = await layoutOf(image);
    const inner = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: [{ mediaType: OCI_MANIFEST, digest: image.manifest.digest, size: image.manifest.size, platform: { os: 'linux', architecture: 'amd64' } }],
      }),
    );
    writeFileSync(path.join(dir, 'blobs', 'sha256', sha256(inner).slice(7)), inner);
    const outer = { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ mediaType: OCI_INDEX, digest: sha256(inner), size: inner.length }] };
    writeFileSync(path.join(dir, 'index.json'), JSON.stringify(outer));
    const server = await serveImageLayout({ dir, host: '127.0.0.1', port: 0, ...tls });
    try {
      const index = await request(server.port, 'GET', `/v2/x/manifests/${sha256(inner)}`);
      assert.equal(index.headers['content-type'], OCI_INDEX);
      assert.ok(index.body.equals(inner));
      const manifest = await request(server.port, 'GET', `/v2/x/manifests/${image.manifest.digest}`);
      assert.equal(manifest.status, 200);
      assert.equal(manifest.headers['content-type'], OCI_MANIFEST);
    } finally {
      await server.close();
    }
  });
});

describe('starting', () => {
  const start = (dir: string, port = 0): Promise<LayoutServer> => serveImageLayout({ dir, host: '127.0.0.1', port, ...tls });

  test('a folder that is not a whole layout fails the start, naming the file', async () => {
    const missing = path.join(scratchDir('berth-none-'), 'nothing');
    await assert.rejects(start(missing), (err: Error) => err.message === `${missing}: missing: no such folder`);
    const empty = scratchDir('berth-empty-');
    await assert.rejects(start(empty), (err: Error) => err.message === `${path.join(empty, 'oci-layout')}: missing: not an OCI image layout`);

    const image = await layeredImage([{ a: '1\n' }]);
    const broken = await layoutOf(image);
    const index = path.join(broken, 'index.json');
    writeFileSync(index, '{"manifests": [');
    await assert.rejects(start(broken), (err: Error) => err.message === `${index}: is not a JSON object`);
    writeFileSync(index, JSON.stringify({ manifests: [{ mediaType: OCI_MANIFEST, digest: sha256('x'), size: 1 }] }));
    await assert.rejects(start(broken), (err: Error) => err.message.startsWith(`${index}: manifests[0] names ${sha256('x')}, which the layout has no blob of`));
    writeFileSync(index, JSON.stringify({ manifests: [{ mediaType: OCI_MANIFEST, digest: '../../etc/passwd', size: 1 }] }));
    await assert.rejects(start(broken), /index\.json: manifests\[0\] has the digest \.\.\/\.\.\/etc\/passwd, not sha256:<64 hex>/);
    writeFileSync(index, JSON.stringify({ manifests: [] }));
    await assert.rejects(start(broken), /index\.json: names no manifest/);
  });

  test('a port in use fails the start', async () => {
    const image = await layeredImage([{ a: '1\n' }]);
    const dir = await layoutOf(image);
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as { port: number }).port;
    try {
      await assert.rejects(start(dir, port), new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
    } finally {
      taken.close();
    }
  });

  test('close ends open connections, an idle one and one that never finished its handshake, and frees the port', { timeout: 10_000 }, async () => {
    const dir = await layoutOf(await layeredImage([{ a: '1\n' }]));
    const server = await start(dir);
    const idle = connect({ host: '127.0.0.1', port: server.port, ca: tls.cert }).on('error', () => undefined);
    await once(idle, 'secureConnect');
    const silent = netConnect(server.port, '127.0.0.1').on('error', () => undefined);
    await once(silent, 'connect');
    const closed = Promise.all([once(idle, 'close'), once(silent, 'close')]);
    await server.close();
    await closed;
    const again = await start(dir, server.port);
    await again.close();
  });
});
