// Request bodies are bounded in bytes (after gzip inflation too) and in time; a broken tar is a 400, never a crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as pause } from 'node:timers/promises';
import { createGzip, gzipSync } from 'node:zlib';
import { idleTimeout } from '../../../../src/dockerapi/http/body-timeout.js';
import { Router } from '../../../../src/dockerapi/http/http.js';
import { parseListener, serveDockerApi } from '../../../../src/dockerapi/http/server.js';
import { ArchiveError, sanitizeArchive } from '../../../../src/runtime/files.js';
import { tarOf } from '../../../util/tar.js';

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
  await assert.rejects(
    sanitizeArchive(Readable.from([bomb]), '/dest', 32 << 20),
    (err: unknown) => err instanceof ArchiveError && err.status === 413 && /once inflated is larger than/.test(err.message),
  );
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

test('idleTimeout does not count a slow reader as a stalled upload', async () => {
  const src = new PassThrough();
  for (let i = 0; i < 5; i++) src.write(Buffer.alloc(64 * 1024, i));
  src.end();
  const guarded = src.pipe(idleTimeout(100, 'the upload'));
  let chunks = 0;
  // a reader that takes three times the timeout per chunk (as gunzip on a loaded machine), with the bytes all there
  const slow = new Writable({
    highWaterMark: 1,
    write(_chunk, _enc, cb) {
      chunks++;
      setTimeout(cb, 300);
    },
  });
  await pipeline(guarded, slow);
  assert.ok(chunks >= 5, `all of it was read (${chunks} chunks)`);
});

test('a JSON body that stalls is answered 408 and the server keeps serving', async () => {
  const router = new Router()
    .add('POST', '/echo', async (call) => call.send(200, (await call.json()) ?? {}))
    .add('GET', '/_ping', (call) => call.send(200, 'OK'));
  const server = await serveDockerApi({ listeners: [parseListener('tcp://127.0.0.1:0')], router, bodyTimeoutMs: 200 });
  try {
    const port = Number(server.addresses[0].split(':').pop());
    const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: '/echo', headers: { 'Content-Type': 'application/json', 'Content-Length': 100 } },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
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

test('an answer given before the whole body leaves at once, and the client may still send the rest (no broken pipe)', async () => {
  // A route that refuses after the first bytes, as the archive route does with a gzip bomb.
  const router = new Router().add('PUT', '/upload', async (call) => {
    const body = call.body();
    await new Promise((resolve) => body.once('data', resolve));
    body.destroy();
    call.send(413, { message: 'too large' });
  });
  const server = await serveDockerApi({ listeners: [parseListener('tcp://127.0.0.1:0')], router, bodyTimeoutMs: 200 });
  try {
    const port = Number(server.addresses[0].split(':').pop());
    const socket = net.connect(port, '127.0.0.1');
    const failures: Error[] = [];
    socket.on('error', (err) => failures.push(err));
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    const answered = new Promise<void>((resolve) => socket.on('data', () => answer.includes('too large') && resolve()));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    // chunked, as the docker CLI sends what it reads from a pipe
    const chunk = (b: Buffer): Buffer => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
    socket.write('PUT /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
    socket.write(chunk(Buffer.alloc(1024, 1)));
    await answered;
    assert.match(answer, /^HTTP\/1.1 413/);
    // what a client still writing sends after the answer arrived: longer in all than the body timeout, never pausing as long
    let written = 0;
    for (; written < 8; written++) {
      if (socket.destroyed || socket.readableEnded) break;
      if (!socket.write(chunk(Buffer.alloc(1 << 20, 2)))) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
      await pause(50);
    }
    socket.end('0\r\n\r\n');
    await closed;
    assert.equal(written, 8, 'the connection stayed open until the whole body was sent');
    assert.deepEqual(
      failures.map((e) => e.message),
      [],
    );
  } finally {
    await server.close();
  }
});
