import { test } from 'node:test';
import assert from 'node:assert/strict';
import { windowStart } from '../../../../src/dockerapi/logs/log-tail.js';
import { timestampNanos } from '../../../../src/dockerapi/logs/log-time.js';

test('the window starts after the line before it; a log that fits has no start', () => {
  const merged = '2026-11-23T07:00:01.25Z a\n2026-11-23T07:00:02Z b\n2026-11-23T07:00:03Z c\n';
  assert.equal(windowStart(merged, 3), undefined);
  assert.equal(windowStart(merged, 2), timestampNanos('2026-11-23T07:00:01.25Z'));
  assert.equal(windowStart(merged, 0), timestampNanos('2026-11-23T07:00:01.25Z'));
  assert.throws(() => windowStart('garbage line\nx\n', 1), /not RFC 3339/);
});

test('a line longer than a record counts its records, as dockerd counts the messages of a long line', () => {
  const part = 'x'.repeat(16 * 1024);
  // pods/log: a long line's records each stamped where they begin, inside the line
  const merged = `2026-11-23T07:00:01Z a\n2026-11-23T07:00:02Z ${part}2026-11-23T07:00:02.5Z ${part}2026-11-23T07:00:03Z end\n2026-11-23T07:00:04Z b\n`;
  assert.equal(windowStart(merged, 5), undefined);
  assert.equal(windowStart(merged, 4), timestampNanos('2026-11-23T07:00:01Z'));
  const window = merged.slice(merged.indexOf('2026-11-23T07:00:02.5Z'));
  assert.equal(windowStart(window, 3), undefined);
  assert.equal(windowStart(window, 2), timestampNanos('2026-11-23T07:00:02.5Z'));
});

test("a kubelet's long line, stamped only where it begins, counts a record per 16 KiB (containerd's partial entries)", () => {
  // as kube-apiserver 1.36 serves it: 20000 bytes written as entries of 16384 and 3616, one stamp
  const merged = `2026-11-28T06:31:30.536Z a\n2026-11-28T06:31:30.544Z ${'x'.repeat(20000)}\n2026-11-28T06:31:30.545Z last\n`;
  assert.equal(windowStart(merged, 4), undefined);
  assert.equal(windowStart(merged, 3), timestampNanos('2026-11-28T06:31:30.536Z'));
  // tailLines=3 of that log: the line's first entry, its last one and `last`; the window (2) starts after the first
  const tail3 = merged.slice(merged.indexOf('\n') + 1);
  assert.equal(windowStart(tail3, 2), timestampNanos('2026-11-28T06:31:30.544Z'));
  assert.equal(windowStart(tail3, 3), undefined);
});
