// Boolean query parameters as the real server's parameter codec reads them, and the verb a GET becomes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queryBool } from '../../../src/devcluster/api/query-bool.js';
import { resourceByKind } from '../../../src/devcluster/api/resources.js';
import { requestVerb } from '../../../src/devcluster/server/handlers-route.js';

const q = (s: string) => new URLSearchParams(s);

test('only absent, 0 and false (any case) are false; every other value is true, as Convert_Slice_string_To_bool', () => {
  for (const v of ['1', 't', 'T', 'true', 'TRUE', 'True', 'yes', 'anything', '']) assert.equal(queryBool(q(`watch=${v}`), 'watch'), true, v);
  for (const v of ['0', 'false', 'False', 'FALSE', 'fAlSe']) assert.equal(queryBool(q(`watch=${v}`), 'watch'), false, v);
  assert.equal(queryBool(q(''), 'watch'), false);
  assert.equal(queryBool(q('watch'), 'watch'), true);
  assert.equal(queryBool(q('watch=False&watch=true'), 'watch'), false, 'the first value decides');
});

test('a collection GET with watch=True (the Python client) is a watch, with watch=False a list', () => {
  const route = { rt: resourceByKind('Pod'), namespace: 'ns', watchPath: false };
  assert.equal(requestVerb('GET', route, q('watch=True')), 'watch');
  assert.equal(requestVerb('GET', route, q('watch=False')), 'list');
  assert.equal(requestVerb('GET', route, q('watch=0')), 'list');
});
