import { test } from 'node:test';
import assert from 'node:assert/strict';
import { leaseIsFree } from '../../../src/kube/lease-lock.js';

const now = new Date('2026-01-01T00:00:30Z');
const held = (holderIdentity: string | undefined, renewTime: string, leaseDurationSeconds = 15) => ({
  spec: { holderIdentity, renewTime: new Date(renewTime), leaseDurationSeconds },
});

test('a missing, unheld or own lease is free', () => {
  assert.equal(leaseIsFree(undefined, 'me', now), true);
  assert.equal(leaseIsFree(held(undefined, '2026-01-01T00:00:29Z'), 'me', now), true);
  assert.equal(leaseIsFree(held('me', '2026-01-01T00:00:29Z'), 'me', now), true);
});

test("another holder's lease is free only once its duration has passed since the last renewal", () => {
  assert.equal(leaseIsFree(held('other', '2026-01-01T00:00:20Z'), 'me', now), false);
  assert.equal(leaseIsFree(held('other', '2026-01-01T00:00:14Z'), 'me', now), true);
  assert.equal(leaseIsFree(held('other', '2026-01-01T00:00:14Z', 60), 'me', now), false);
});
