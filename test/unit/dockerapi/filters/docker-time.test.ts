// The prune filter `until` as dockerd reads it: a Go duration back from now, an RFC 3339 time, or unix seconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goDurationMs, parseTimeOrDuration } from '../../../../src/dockerapi/filters/docker-time.js';

const NOW = Date.parse('2026-03-10T12:00:00Z');
const local = -new Date(NOW).getTimezoneOffset() * 60_000;

test('Go durations: units, fractions, sums, a sign; what Go refuses is undefined', () => {
  assert.equal(goDurationMs('1h'), 3_600_000);
  assert.equal(goDurationMs('1h30m'), 5_400_000);
  assert.equal(goDurationMs('1.5h'), 5_400_000);
  assert.equal(goDurationMs('500ms'), 500);
  assert.equal(goDurationMs('2m5s'), 125_000);
  assert.equal(goDurationMs('-10s'), -10_000);
  assert.equal(goDurationMs('.5s'), 500);
  assert.equal(goDurationMs('0'), 0);
  for (const bad of ['', '5', '1d', 'h', '1hx', '1h 2m', '.s', '1mm']) assert.equal(goDurationMs(bad), undefined, bad);
});

test('until: a duration counts back from now', () => {
  assert.equal(parseTimeOrDuration('10m', NOW), NOW - 600_000);
  assert.equal(parseTimeOrDuration('24h', NOW), NOW - 86_400_000);
  assert.equal(parseTimeOrDuration('-1h', NOW), NOW + 3_600_000, 'a negative duration is in the future');
});

test('until: RFC 3339 with a zone, in the layouts dockerd picks by the colons', () => {
  assert.equal(parseTimeOrDuration('2026-03-01T10:20:30Z', NOW), Date.parse('2026-03-01T10:20:30Z'));
  assert.equal(parseTimeOrDuration('2026-03-01T10:20:30.25Z', NOW), Date.parse('2026-03-01T10:20:30.250Z'));
  assert.equal(parseTimeOrDuration('2026-03-01T10:20:30+02:00', NOW), Date.parse('2026-03-01T08:20:30Z'));
  assert.equal(parseTimeOrDuration('2026-03-01T10:20:30-05:00', NOW), Date.parse('2026-03-01T15:20:30Z'));
  assert.equal(parseTimeOrDuration('2026-03-01T10:20Z', NOW), Date.parse('2026-03-01T10:20:00Z'));
  assert.equal(parseTimeOrDuration('2026-03-01T10Z', NOW), Date.parse('2026-03-01T10:00:00Z'));
  assert.equal(parseTimeOrDuration('2026-03-01Z', NOW), Date.parse('2026-03-01T00:00:00Z'));
});

test("until: without a zone, the server's own (as dockerd reads it in its local zone)", () => {
  assert.equal(parseTimeOrDuration('2026-03-01T10:20:30', NOW), Date.parse('2026-03-01T10:20:30Z') - local);
  assert.equal(parseTimeOrDuration('2026-03-01T10:20', NOW), Date.parse('2026-03-01T10:20:00Z') - local);
  assert.equal(parseTimeOrDuration('2026-03-01T10', NOW), Date.parse('2026-03-01T10:00:00Z') - local);
  assert.equal(parseTimeOrDuration('2026-03-01', NOW), Date.parse('2026-03-01T00:00:00Z') - local);
  assert.equal(parseTimeOrDuration('2026-03-01T10:20:30.5', NOW), Date.parse('2026-03-01T10:20:30.500Z') - local);
});

test('until: unix seconds, with a fraction; "0" is the epoch, not a duration', () => {
  assert.equal(parseTimeOrDuration('1700000000', NOW), 1_700_000_000_000);
  assert.equal(parseTimeOrDuration('1700000000.5', NOW), 1_700_000_000_500);
  assert.equal(parseTimeOrDuration('0', NOW), 0);
});

test('until: what dockerd cannot parse is undefined (the caller refuses it)', () => {
  for (const bad of ['', ' ', 'yesterday', '2026-13-01', '2026-02-30', '2026-02-29', '2026-03-01T25:00:00Z', '2026-03-01 10:20', '-5', '1h later', '12:00']) {
    assert.equal(parseTimeOrDuration(bad, NOW), undefined, bad);
  }
  assert.equal(parseTimeOrDuration('2024-02-29', NOW), Date.parse('2024-02-29T00:00:00Z') - local, 'a leap day');
});
