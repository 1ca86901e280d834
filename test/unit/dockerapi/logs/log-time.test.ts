import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dockerLogTimestampOf, isWholeSecond, parseUnixTimestamp, sinceTimeOf, timestampNanos } from '../../../../src/dockerapi/logs/log-time.js';

test('since/until as dockerd parses them: seconds, a fraction padded or cut to nanoseconds', () => {
  assert.equal(parseUnixTimestamp('1700000000'), 1_700_000_000_000_000_000n);
  assert.equal(parseUnixTimestamp('1700000000.5'), 1_700_000_000_500_000_000n);
  // what the docker CLI sends for an RFC 3339 time: %d.%09d
  assert.equal(parseUnixTimestamp('1700000000.000000001'), 1_700_000_000_000_000_001n);
  assert.equal(parseUnixTimestamp('1700000000.1234567891234'), 1_700_000_000_123_456_789n);
  assert.equal(parseUnixTimestamp('1700000000.'), 1_700_000_000_000_000_000n);
  assert.equal(parseUnixTimestamp('-1.5'), -500_000_000n);
});

test('a time dockerd refuses is refused in its words', () => {
  assert.throws(() => parseUnixTimestamp('yesterday'), { message: 'invalid timestamp "yesterday": invalid seconds "yesterday": invalid syntax' });
  assert.throws(() => parseUnixTimestamp('.5'), { message: 'invalid timestamp ".5": invalid seconds "": invalid syntax' });
  assert.throws(() => parseUnixTimestamp('99999999999999999999'), /value out of range/);
  assert.throws(() => parseUnixTimestamp('1.5x'), { message: `invalid timestamp "1.5x": invalid nanoseconds: invalid character 'x' at position 1` });
  assert.throws(() => parseUnixTimestamp(`1.${'1'.repeat(21)}`), /length 21 exceeds maximum 20/);
});

test('kubelet timestamps compare exactly, whatever their precision', () => {
  const a = timestampNanos('2026-11-23T07:00:00Z')!;
  const b = timestampNanos('2026-11-23T07:00:00.000000001Z')!;
  const c = timestampNanos('2026-11-23T07:00:00.5Z')!;
  assert.ok(a < b && b < c);
  assert.equal(c - a, 500_000_000n);
  assert.equal(timestampNanos('2026-11-23T08:00:00.5+01:00'), c);
  assert.equal(timestampNanos('yesterday'), undefined);
});

test('a sinceTime reads from the start of the second, within the years RFC 3339 spells', () => {
  const t = timestampNanos('2026-11-23T07:00:01.999999999Z')!;
  assert.equal(sinceTimeOf(t), '2026-11-23T07:00:01Z');
  assert.equal(sinceTimeOf(-5n), '1970-01-01T00:00:00Z');
  assert.equal(sinceTimeOf(10n ** 30n), '9999-12-31T23:59:59Z');
  assert.ok(isWholeSecond(timestampNanos('2026-11-23T07:00:01Z')!));
  assert.ok(!isWholeSecond(t));
});

test("a kubelet time in dockerd's form: the fraction padded to 9 digits, another zone turned to UTC, none for no time", () => {
  assert.equal(dockerLogTimestampOf('2026-11-23T07:00:01.25Z'), '2026-11-23T07:00:01.250000000Z');
  assert.equal(dockerLogTimestampOf('2026-11-23T07:00:01Z'), '2026-11-23T07:00:01.000000000Z');
  assert.equal(dockerLogTimestampOf('2026-11-23T08:00:01.5+01:00'), '2026-11-23T07:00:01.500000000Z');
  for (const none of ['', 'hello', '2026-11-23 07:00:01Z', '2026-11-23T07:00:01.Z']) assert.equal(dockerLogTimestampOf(none), undefined, none);
});
