import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchUrl } from '../../../src/registry/http.js';

async function listen(handler: http.RequestListener): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

test('a redirect to another origin does not carry the Authorization header; one to the same origin does', async () => {
  const cdnSaw: string[] = [];
  const cdn = await listen((req, res) => {
    cdnSaw.push(req.headers.authorization ?? '-');
    res.end('blob');
  });
  const registry = await listen((req, res) => {
    if (req.url === '/same') res.writeHead(200).end(req.headers.authorization ?? '-');
    else if (req.url === '/to-same') res.writeHead(307, { Location: '/same' }).end();
    else res.writeHead(307, { Location: `${cdn.url}/signed?sig=1` }).end();
  });
  try {
    const far = await fetchUrl(`${registry.url}/blob`, { headers: { Authorization: 'Bearer secret' } });
    assert.equal(far.body.toString(), 'blob');
    assert.deepEqual(cdnSaw, ['-']);
    const near = await fetchUrl(`${registry.url}/to-same`, { headers: { Authorization: 'Bearer secret' } });
    assert.equal(near.body.toString(), 'Bearer secret');
  } finally {
    await close(registry.server);
    await close(cdn.server);
  }
});

test('timeoutMs gives up on a server that never answers', async () => {
  const silent = await listen(() => undefined);
  try {
    const t0 = Date.now();
    await assert.rejects(fetchUrl(`${silent.url}/v2/`, { timeoutMs: 300 }), /not done within 300 ms/);
    assert.ok(Date.now() - t0 < 2000);
  } finally {
    await close(silent.server);
  }
});
