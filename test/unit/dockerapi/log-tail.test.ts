import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { linesAfter, timestampNanos, windowStart } from '../../../src/dockerapi/log-tail.js';

test('timestamps compare exactly, whatever their precision', () => {
  const a = timestampNanos('2026-11-23T07:00:00Z')!;
  const b = timestampNanos('2026-11-23T07:00:00.000000001Z')!;
  const c = timestampNanos('2026-11-23T07:00:00.5Z')!;
  assert.ok(a < b && b < c);
  assert.equal(c - a, 500_000_000n);
  assert.equal(timestampNanos('yesterday'), undefined);
});

test('the window starts after the line before it; a log that fits has no start', () => {
  const merged = '2026-11-23T07:00:01.25Z a\n2026-11-23T07:00:02Z b\n2026-11-23T07:00:03Z c\n';
  assert.equal(windowStart(merged, 3), undefined);
  const start = windowStart(merged, 2)!;
  assert.equal(start.nanos, timestampNanos('2026-11-23T07:00:01.25Z'));
  assert.equal(start.sinceTime, '2026-11-23T07:00:01Z');
  assert.throws(() => windowStart('garbage line\nx\n', 1), /not RFC 3339/);
});

test('lines at or before the start are dropped; timestamps kept or cut; a last partial line passes', async () => {
  const log = '2026-11-23T07:00:01.25Z old\n2026-11-23T07:00:01.5Z new\n2026-11-23T07:00:02Z last';
  const after = timestampNanos('2026-11-23T07:00:01.25Z');
  assert.equal(await text(Readable.from([Buffer.from(log.slice(0, 30)), Buffer.from(log.slice(30))]).pipe(linesAfter(after, false))), 'new\nlast');
  assert.equal(await text(Readable.from([Buffer.from(log)]).pipe(linesAfter(undefined, true))), log);
});

test('a line without a timestamp fails the cut instead of passing silently', async () => {
  await assert.rejects(text(Readable.from([Buffer.from('no timestamp here\n')]).pipe(linesAfter(undefined, false))), /has none/);
});
