import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sizeToBytes, sizeToQuantity } from '../../../src/runtime/size.js';

test('sizes: docker binary units, with or without i and b, as bytes and as quantities', () => {
  assert.equal(sizeToBytes('64Mi'), 64 * 1024 ** 2);
  assert.equal(sizeToBytes('64m'), 64 * 1024 ** 2);
  assert.equal(sizeToBytes('1GiB'), 1024 ** 3);
  assert.equal(sizeToBytes('2kb'), 2048);
  assert.equal(sizeToBytes('100'), 100);
  assert.equal(sizeToBytes('100b'), 100);
  assert.equal(sizeToBytes('1.5k'), 1536);
  assert.equal(sizeToQuantity('512m'), '512Mi');
  assert.equal(sizeToQuantity('512Mi'), '512Mi');
  assert.equal(sizeToQuantity('1.5k'), '1536');
  for (const bad of ['lots', '', '1x', '-1m', '1 Mi B']) {
    assert.equal(sizeToBytes(bad), undefined, bad);
    assert.equal(sizeToQuantity(bad), undefined, bad);
  }
});
