// Placing a container's log, read again after its end, against what berth delivered of it: whole, rotated
// (the newest file begins inside the delivered stream), or not placed when that place is not certain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { placeLog, type LogPlacement } from '../../../src/runtime/log-placement.js';
import { StreamDigest, TAIL_BYTES } from '../../../src/runtime/stream-digest.js';

/** numbered lines: no stretch of them repeats */
const lines = (from: number, to: number): Buffer => Buffer.from(Array.from({ length: to - from }, (_, i) => `line ${from + i} of the build\n`).join(''));

/** what follows the delivered bytes, where the log was placed */
const rest = (p: LogPlacement): Buffer | undefined => (p.kind === 'unplaced' ? undefined : p.rest);
const why = (p: LogPlacement): string => (p.kind === 'unplaced' ? p.why : '');

function delivered(...chunks: Buffer[]): StreamDigest {
  const d = new StreamDigest();
  for (const c of chunks) d.add(c);
  return d;
}

test('the tail keeps the last bytes in order across chunks of every size', () => {
  const all = lines(0, 20000);
  const d = new StreamDigest();
  for (let at = 0, size = 1; at < all.length; at += size, size = (size * 7) % 90001) d.add(all.subarray(at, at + size));
  assert.equal(d.bytes, all.length);
  assert.ok(d.tail().equals(all.subarray(all.length - TAIL_BYTES)));
  assert.ok(delivered(Buffer.from('short')).tail().equals(Buffer.from('short')));
  assert.equal(new StreamDigest().tail().length, 0);
});

test('a whole log gives what follows the delivered bytes', () => {
  const log = lines(0, 100);
  const p = placeLog(log, delivered(log.subarray(0, 1000)));
  assert.equal(p.kind, 'whole');
  assert.ok(rest(p)?.equals(log.subarray(1000)));
});

test('a rotated log that begins inside the delivered stream gives only what follows its end', () => {
  const written = lines(0, 30000);
  // everything was delivered; the newest file holds the last 200 KiB (beyond the kept tail) ...
  const sent = delivered(written);
  let p = placeLog(written.subarray(written.length - 200 * 1024), sent);
  assert.deepEqual([p.kind, rest(p)?.length], ['rotated', 0]);
  // ... or less than the kept tail: the log begins inside it
  p = placeLog(written.subarray(written.length - 5000), sent);
  assert.deepEqual([p.kind, rest(p)?.length], ['rotated', 0]);
  // the follow missed the last 3000 bytes: they are what the rotated log adds
  const partly = delivered(written.subarray(0, written.length - 3000));
  for (const keep of [200 * 1024, 10_000]) {
    p = placeLog(written.subarray(written.length - keep), partly);
    assert.equal(p.kind, 'rotated');
    assert.ok(rest(p)?.equals(written.subarray(written.length - 3000)));
  }
  // a newest file of one short line that berth delivered last
  p = placeLog(Buffer.from('line 29999 of the build\n'), sent);
  assert.deepEqual([p.kind, rest(p)?.length], ['rotated', 0]);
});

test('a rotated log whose start berth never saw is not placed', () => {
  const written = lines(0, 30000);
  const sent = delivered(written.subarray(0, 400_000));
  // the follow broke at 400000 bytes and the newest file begins after that: what lay between is gone
  const p = placeLog(written.subarray(500_000), sent);
  assert.equal(p.kind, 'unplaced');
  assert.match(why(p), /neither begins/);
});

test('output that repeats itself cannot be placed in a rotated log: it fails rather than guess', () => {
  const x = Buffer.alloc(300 * 1024, 'x');
  const p = placeLog(x.subarray(0, 100 * 1024), delivered(x));
  assert.equal(p.kind, 'unplaced');
  assert.match(why(p), /more than once/);
});

test('a log with bytes before all of a short delivered stream is no rotation of it', () => {
  const log = lines(0, 10);
  const p = placeLog(Buffer.concat([Buffer.from('something else\n'), log]), delivered(log));
  assert.equal(p.kind, 'unplaced');
});

test("a few delivered bytes at a log's start do not place it when more follows them", () => {
  const sent = delivered(lines(0, 100), Buffer.from('ok\n'));
  // a new file that begins with "ok\n" by chance and goes on with output berth never saw
  const p = placeLog(Buffer.from('ok\nsomething new\n'), sent);
  assert.equal(p.kind, 'unplaced');
});

test('a log with nothing of the stream is placed only after one whole follow (the other stream filled the newest file)', () => {
  const sent = delivered(Buffer.from('echo: a report on stderr\n'));
  assert.equal(placeLog(Buffer.alloc(0), sent).kind, 'unplaced');
  const p = placeLog(Buffer.alloc(0), sent, true);
  assert.deepEqual([p.kind, rest(p)?.length], ['rotated', 0]);
  // a log with other bytes is placed by them as ever, whole follow or not
  assert.equal(placeLog(Buffer.from('something else\n'), sent, true).kind, 'unplaced');
});
