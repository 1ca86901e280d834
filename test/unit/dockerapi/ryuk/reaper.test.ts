// Ryuk's timeouts as berth's reaper reads them: Go durations (docker-time.ts goDurationMs) and plain seconds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ryukTimeoutMs } from '../../../../src/dockerapi/ryuk/reaper.js';

const read = (text: string | undefined): number => ryukTimeoutMs('RYUK_RECONNECTION_TIMEOUT', text, 10_000);

test('what berth took before stays as it was: 10s, 1m, 500ms, 2h, plain and fractional seconds', () => {
  assert.deepEqual(['10s', '1m', '500ms', '2h', '30', '1.5', ' 5s '].map(read), [10_000, 60_000, 500, 7_200_000, 30_000, 1_500, 5_000]);
  assert.equal(read(undefined), 10_000);
  assert.equal(read(''), 10_000);
});

test('every Go duration Ryuk reads is read as Go reads it', () => {
  assert.deepEqual(['1m30s', '1.5m', '.5s', '250us', '2h45m', '0'].map(read), [90_000, 90_000, 500, 0.25, 9_900_000, 0]);
  assert.equal(read('-5s'), 0, 'a negative timeout is over at once');
});

test('a value that is no duration keeps the default', () => {
  for (const bad of ['1d', 'ten', '5 s', '1h 2m', 's']) assert.equal(read(bad), 10_000, bad);
});
