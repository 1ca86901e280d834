// Request bodies are bounded in bytes (after gzip inflation too) and in time; a broken tar is a 400, never a crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import { idleTimeout } from '../../../src/dockerapi/body-timeout.js';
import { Router } from '../../../src/dockerapi/http.js';
import { parseListener, serveDockerApi } from '../../../src/dockerapi/server.js';
import { ArchiveError, sanitizeArchive } from '../../../src/runtime/files.js';
import { tarOf } from '../../util/tar.js';

/** `mib` MiB of zeros, gzipped as they are made (never whole in memory). */
async function gzipOfZeros(mib: number): Promise<Buffer> {
  const gz = createGzip();
  const mb = Buffer.alloc(1 << 20);
  void (async () => {
    for (let i = 0; i < mib; i++) if (!gz.write(mb)) await new Promise((r) => gz.once('drain', r));
    gz.end();
  })();
  const out: Buffer[] = [];
  for await (const c of gz) out.push(c as Buffer);
  return Buffer.concat(out);
}

test('a truncated tar, plain or gzip, is a 400 ArchiveError and nothing else happens', async () => {
  const tar = await tarOf([{ name: 'big.bin', content: Buffer.alloc(100_000, 1) }]);
  for (const body of [tar.subarray(0, 20_000), tar.subarray(0, 700), gzipSync(tar).subarray(0, 200)]) {
    await assert.rejects(sanitizeArchive(body, '/dest'), (err: unknown) => err instanceof ArchiveError && err.status === 400);
  }
  assert.equal((await sanitizeArchive(gzipSync(tar), '/dest')).entries, 1, 'the whole archive, gzipped, is fine');
});

test('a gzip bomb is refused once its inflated bytes pass the limit, without holding them', async () => {
  const bomb = await gzipOfZeros(512);
  assert.ok(bomb.length < 1 << 20, `the bomb is small (${bomb.length} bytes)`);
  const before = process.memoryUsage().rss;
  await assert.rejects(sanitizeArchive(Readable.from([bomb]), '/dest', 32 << 20), (err: unknown) => err instanceof ArchiveError && err.status === 413 && /once inflated is larger than/.test(err.message));
  const grown = process.memoryUsage().rss - before;
  assert.ok(grown < 128 << 20, `RSS grew by ${grown} bytes for a 512 MiB bomb`);
});

test('the compressed size is bounded too', async () => {
  await assert.rejects(sanitizeArchive(Buffer.alloc(2048, 7), '/dest', 1024), (err: unknown) => err instanceof ArchiveError && err.status === 413);
});

test('idleTimeout fails a stream that stops arriving with a 408, not one that keeps coming', async () => {
  const src = new PassThrough();
  const guarded = src.pipe(idleTimeout(100, 'the upload'));
  src.write('a');
  const failed = new Promise<Error>((resolve) => guarded.on('error', resolve));
  guarded.resume();
  const err = (await failed) as Error & { status?: number };
  assert.equal(err.status, 408);
  assert.match(err.message, /the upload stopped arriving/);
  const ok = new PassThrough();
  const flowing = ok.pipe(idleTimeout(100, 'x'));
  const ended = new Promise((resolve, reject) => flowing.on('end', resolve).on('error', reject));
  flowing.resume();
  ok.end('done');
  await ended;
});

test('a JSON body that stalls is answered 408 and the server keeps serving', async () => {
  const router = new Router().add('POST', '/echo', async (call) => call.send(200, (await call.json()) ?? {})).add('GET', '/_ping', (call) => call.send(200, 'OK'));
  const server = await serveDockerApi({ listeners: [parseListener('tcp://127.0.0.1:0')], router, bodyTimeoutMs: 200 });
  try {
    const port = Number(server.addresses[0].split(':').pop());
    const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/echo', headers: { 'Content-Type': 'application/json', 'Content-Length': 100 } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('{"Image": "half'); // and nothing more
    });
    assert.equal(status.status, 408);
    assert.match((JSON.parse(status.body) as { message: string }).message, /stopped arriving/);
    const ping = await fetch(`http://127.0.0.1:${port}/_ping`);
    assert.equal(ping.status, 200);
  } finally {
    await server.close();
  }
});
