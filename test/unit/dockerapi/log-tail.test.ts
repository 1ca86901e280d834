import { test } from 'node:test';
import assert from 'node:assert/strict';
import { windowStart } from '../../../src/dockerapi/log-tail.js';
import { timestampNanos } from '../../../src/dockerapi/log-time.js';

test('the window starts after the line before it; a log that fits has no start', () => {
  const merged = '2026-11-23T07:00:01.25Z a\n2026-11-23T07:00:02Z b\n2026-11-23T07:00:03Z c\n';
  assert.equal(windowStart(merged, 3), undefined);
  assert.equal(windowStart(merged, 2), timestampNanos('2026-11-23T07:00:01.25Z'));
  assert.equal(windowStart(merged, 0), timestampNanos('2026-11-23T07:00:01.25Z'));
  assert.throws(() => windowStart('garbage line\nx\n', 1), /not RFC 3339/);
});
