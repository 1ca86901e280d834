import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Serial } from '../../../src/dockerapi/serial.js';
import { isOurs } from '../../../src/kube/client.js';

test('calls of one key run one at a time, in order; a failure does not block the next', async () => {
  const serial = new Serial();
  const log: string[] = [];
  let running = 0;
  const call =
    (name: string, fail = false) =>
    async (): Promise<string> => {
      running++;
      assert.equal(running, 1, 'never two at once');
      await new Promise((r) => setTimeout(r, 5));
      log.push(name);
      running--;
      if (fail) throw new Error(name);
      return name;
    };
  const results = await Promise.allSettled([serial.run('c', call('a')), serial.run('c', call('b', true)), serial.run('c', call('c'))]);
  assert.deepEqual(log, ['a', 'b', 'c']);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
});

test('an object found after a lost create answer is ours only when it carries every label and annotation sent', () => {
  const sent = { name: 'p', labels: { 'berth.dev/owner': 'i1' }, annotations: { 'berth.dev/expires-at': '2030-01-01T00:00:00Z' } };
  assert.equal(isOurs(sent, { ...sent, labels: { ...sent.labels, extra: 'x' } }), true);
  assert.equal(isOurs(sent, { ...sent, labels: { 'berth.dev/owner': 'i2' } }), false);
  assert.equal(isOurs(sent, { ...sent, annotations: {} }), false);
  assert.equal(isOurs(sent, { ...sent, deletionTimestamp: new Date() }), false);
});
