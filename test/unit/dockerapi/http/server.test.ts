import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { Router } from '../../../../src/dockerapi/http/http.js';
import { parseListener, serveDockerApi } from '../../../../src/dockerapi/http/server.js';
import { scratchDir } from '../../../util/scratch.js';

function get(opts: http.RequestOptions): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(opts, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

const router = (): Router =>
  new Router().add('GET', '/_ping', (call) => call.send(200, 'OK')).add('POST', '/echo', async (call) => call.send(200, (await call.json()) ?? {}));

test('unix socket is 0600, version prefixes route alike, versions outside 1.44–1.52 and unknown paths are refused', async () => {
  const dir = scratchDir('berth-unit-');
  const path = join(dir, 's.sock');
  const server = await serveDockerApi({ listeners: [parseListener(`unix://${path}`)], router: router() });
  try {
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const plain = await get({ socketPath: path, path: '/_ping' });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['api-version'], '1.52');
    assert.equal((await get({ socketPath: path, path: '/v1.44/_ping' })).status, 200);
    const old = await get({ socketPath: path, path: '/v1.41/_ping' });
    assert.equal(old.status, 400);
    assert.equal(
      JSON.parse(old.body).message,
      'client version 1.41 is too old. Minimum supported API version is 1.44, please upgrade your client to a newer version',
    );
    const tooNew = await get({ socketPath: path, path: '/v1.53/_ping' });
    assert.equal(tooNew.status, 400);
    assert.equal(JSON.parse(tooNew.body).message, 'client version 1.53 is too new. Maximum supported API version is 1.52');
    const missing = await get({ socketPath: path, path: '/nope' });
    assert.equal(missing.status, 404);
    assert.ok(JSON.parse(missing.body).message);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a lowered minimum (--min-api-version, as DOCKER_MIN_API_VERSION for dockerd) admits older clients down to it', async () => {
  const dir = scratchDir('berth-unit-');
  const path = join(dir, 's.sock');
  const server = await serveDockerApi({ listeners: [parseListener(`unix://${path}`)], router: router(), minApiVersion: '1.24' });
  try {
    assert.equal((await get({ socketPath: path, path: '/v1.24/_ping' })).status, 200);
    const old = await get({ socketPath: path, path: '/v1.12/_ping' });
    assert.equal(old.status, 400);
    assert.match(JSON.parse(old.body).message, /Minimum supported API version is 1\.24/);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a token is required on every request when set; off-loopback TCP needs one', async () => {
  await assert.rejects(serveDockerApi({ listeners: [parseListener('tcp://0.0.0.0:0')], router: router() }), /bearer token/);
  const server = await serveDockerApi({ listeners: [parseListener('tcp://127.0.0.1:0')], router: router(), token: 's3cret-of-16-chars-or-more' });
  try {
    const port = Number(server.addresses[0].split(':').pop());
    assert.equal((await get({ host: '127.0.0.1', port, path: '/_ping' })).status, 401);
    assert.equal((await get({ host: '127.0.0.1', port, path: '/_ping', headers: { Authorization: 'Bearer s3cret-of-16-chars-or-more' } })).status, 200);
  } finally {
    await server.close();
  }
});

test('a hijacked request with a never-ended body is answered once its JSON is complete', async () => {
  const server = await serveDockerApi({ listeners: [parseListener('tcp://127.0.0.1:0')], router: router() });
  try {
    const port = Number(server.addresses[0].split(':').pop());
    const reply = await new Promise<string>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => {
        // chunked, no terminating chunk: the body never ends (docker-modem's exec start)
        s.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
        s.write('c\r\n{"Tty":true}\r\n');
      });
      let data = '';
      s.on('data', (d: Buffer) => {
        data += d.toString();
        if (data.includes('{"Tty":true}')) {
          s.destroy();
          resolve(data);
        }
      });
      s.on('error', reject);
      s.on('close', () => resolve(data));
      s.setTimeout(5000, () => s.destroy());
    });
    assert.match(reply, /^HTTP\/1.1 200/);
  } finally {
    await server.close();
  }
});

test('clientGone: once per request, not a listener per request on the connection a keep-alive client reuses', async () => {
  const dir = scratchDir('berth-unit-');
  const path = join(dir, 'k.sock');
  const sockets = new Set<unknown>();
  const closeListeners: number[] = [];
  let gone = 0;
  let heldGone: Promise<void> | undefined;
  let entered!: () => void;
  const inHeld = new Promise<void>((resolve) => (entered = resolve));
  const r = new Router()
    .add('GET', '/quick', async (call) => {
      void call.clientGone().then(() => gone++);
      sockets.add(call.req.socket);
      closeListeners.push(call.req.socket.listenerCount('close'));
      call.send(200, 'ok');
    })
    .add('GET', '/held', async (call) => {
      heldGone = call.clientGone();
      entered();
      await heldGone;
    });
  const server = await serveDockerApi({ listeners: [parseListener(`unix://${path}`)], router: r });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < 15; i++) assert.equal((await get({ socketPath: path, path: '/quick', agent })).status, 200);
    assert.equal(sockets.size, 1, 'one kept-alive connection');
    assert.equal(Math.max(...closeListeners), closeListeners[0], `close listeners on the connection: ${closeListeners.join(' ')}`);
    assert.equal(gone, 15, 'each request was over for its client');
    // a client that goes away while its request is being answered: the call learns it
    const req = http.request({ socketPath: path, path: '/held' });
    req.on('error', () => undefined);
    req.end();
    await inHeld;
    req.destroy();
    await heldGone;
  } finally {
    agent.destroy();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
