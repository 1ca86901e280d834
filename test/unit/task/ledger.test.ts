import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ledger } from '../../../src/task/ledger.js';

test('the ledger names what was created and not yet deleted, by namespace', () => {
  const l = new Ledger();
  assert.equal(l.describe(), '', 'nothing created: nothing named');
  l.add('ci', 'pod', 'task-1');
  l.add('ci', 'secret', 'task-1-params');
  l.add('other', 'pod', 'task-2');
  assert.equal(l.describe(), 'pod/task-1, secret/task-1-params in namespace ci; pod/task-2 in namespace other');
  l.deleting('ci', 'secret', 'task-1-params');
  assert.equal(
    l.describe(),
    'pod/task-1, secret/task-1-params (deletion asked) in namespace ci; pod/task-2 in namespace other',
    'a deletion asked and not answered may not have happened',
  );
  l.remove('ci', 'secret', 'task-1-params');
  l.remove('other', 'pod', 'task-2');
  assert.equal(l.describe(), 'pod/task-1 in namespace ci');
  l.remove('ci', 'pod', 'task-1');
  assert.equal(l.describe(), '');
});
