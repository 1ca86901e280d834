import assert from 'node:assert/strict';
import { finished } from 'node:stream/promises';
import { PassThrough, type Writable } from 'node:stream';
import { test } from 'node:test';
import { RunSink } from '../../../../src/dockerapi/containers/resumed-read.js';
import { StreamDigest } from '../../../../src/runtime/stream-digest.js';

function collect(): { out: PassThrough; bytes: () => Buffer } {
  const out = new PassThrough();
  const seen: Buffer[] = [];
  out.on('data', (b: Buffer) => seen.push(b));
  return { out, bytes: () => Buffer.concat(seen) };
}

async function feed(sink: RunSink, ...chunks: string[]): Promise<void> {
  for (const c of chunks)
    await new Promise<void>((resolve, reject) => sink.stream.write(Buffer.from(c), (err?: Error | null) => (err ? reject(err) : resolve())));
}

async function end(stream: Writable): Promise<void> {
  stream.end();
  await finished(stream);
}

test('a run lost midway is continued by the next run where the client stopped, nothing repeated or missing', async () => {
  const { out, bytes } = collect();
  const passed = new StreamDigest();
  const first = new RunSink(passed);
  first.attach(out);
  await feed(first, 'hello ', 'wor');
  const second = new RunSink(passed);
  second.attach(out);
  await feed(second, 'hel', 'lo world', '!');
  await end(second.stream);
  second.check('/f');
  assert.equal(bytes().toString(), 'hello world!');
  assert.equal(passed.bytes, 12);
});

test('bytes that arrive before the client is known wait, and an earlier run is skipped among them too', async () => {
  const { out, bytes } = collect();
  const passed = new StreamDigest();
  const first = new RunSink(passed);
  first.attach(out);
  await feed(first, 'abc');
  const second = new RunSink(passed);
  await feed(second, 'ab', 'cdef');
  second.attach(out);
  await feed(second, 'g');
  second.check('/f');
  assert.equal(bytes().toString(), 'abcdefg');
});

test('a file that changed between runs fails the read, and nothing of the second version goes out', async () => {
  const { out, bytes } = collect();
  const passed = new StreamDigest();
  const first = new RunSink(passed);
  first.attach(out);
  await feed(first, 'version 1 ');
  const second = new RunSink(passed);
  second.attach(out);
  await feed(second, 'version 2 ', 'and more');
  assert.throws(() => second.check('/f in container c'), /\/f in container c changed while it was read/);
  assert.equal(bytes().toString(), 'version 1 ');
});

test('a second run shorter than what was passed on fails the read', async () => {
  const { out } = collect();
  const passed = new StreamDigest();
  const first = new RunSink(passed);
  first.attach(out);
  await feed(first, 'long content');
  const second = new RunSink(passed);
  second.attach(out);
  await feed(second, 'long');
  assert.throws(() => second.check('/f'), /changed while it was read/);
});

test("the exec's last chunks queued behind a slow client all go on before the read counts as ended; a client gone does not hold it", async () => {
  // a client that takes 1 byte of buffer and drains late: each write waits for it
  const slow = new PassThrough({ highWaterMark: 1 });
  const sink = new RunSink(new StreamDigest());
  sink.attach(slow);
  // as the websocket writes the exec's frames: without waiting, then its end arrives
  for (const c of ['tar-part-1;', 'tar-part-2;', 'tar-part-3;']) sink.stream.write(Buffer.from(c));
  const ended = sink.ended();
  const seen: Buffer[] = [];
  slow.on('data', (b: Buffer) => seen.push(b));
  await ended;
  slow.end();
  await finished(slow);
  assert.equal(Buffer.concat(seen).toString(), 'tar-part-1;tar-part-2;tar-part-3;', 'every chunk reached the client before the end');

  const gone = new PassThrough({ highWaterMark: 1 });
  const orphan = new RunSink(new StreamDigest());
  orphan.attach(gone);
  for (const c of ['a', 'b', 'c']) orphan.stream.write(Buffer.from(c));
  const left = orphan.ended();
  gone.destroy();
  await left;
});
