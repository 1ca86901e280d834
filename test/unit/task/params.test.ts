import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTaskConfig } from '../../../src/task/config.js';
import { goJson, overrideFromEnv } from '../../../src/task/params.js';

const paramsOf = (yaml: string): Record<string, string> => parseTaskConfig(`platform: linux\nrun: {path: ls}\nparams:\n${yaml}`, 't.yml').params;

test('params convert as Concourse CoercedString does (YAML 1.1: yes is a boolean)', () => {
  const p = paramsOf(
    [
      '  STRING: hello',
      '  EMPTY:',
      '  NULL_VALUE: null',
      '  INT: 42',
      '  BIG: 12345678901234567890',
      '  FLOAT: 1.5',
      '  WHOLE_FLOAT: 2.0',
      '  BOOL: true',
      '  ANSWER: yes',
      '  QUOTED: "true"',
      '  LIST: [1, "two", null]',
      '  MAP: { z: 1, a: "<&>", m: { k: false } }',
      '  MULTI: |',
      '    line 1',
      '    line 2',
    ].join('\n'),
  );
  assert.deepEqual(p, {
    STRING: 'hello',
    EMPTY: '',
    NULL_VALUE: '',
    INT: '42',
    BIG: '12345678901234567890',
    FLOAT: '1.5',
    WHOLE_FLOAT: '2',
    BOOL: 'true',
    ANSWER: 'true',
    QUOTED: 'true',
    LIST: '[1,"two",null]',
    MAP: '{"a":"\\u003c\\u0026\\u003e","m":{"k":false},"z":1}',
    MULTI: 'line 1\nline 2\n',
  });
});

test("fly execute: the caller's environment overrides a param the task lists, and adds nothing else", () => {
  assert.deepEqual(overrideFromEnv({ A: 'task', B: 'task' }, { A: 'shell', C: 'shell' }), { A: 'shell', B: 'task' });
  assert.deepEqual(overrideFromEnv({ A: 'task' }, { A: '' }), { A: '' }, 'set but empty still overrides');
});

test("goJson writes what Go's encoding/json writes", () => {
  assert.equal(goJson({ b: [true, 1e21, 0.000001], a: 'é\u2028' }), '{"a":"é\\u2028","b":[true,1e+21,0.000001]}');
});

test('a timestamp-like value is the text it is (go-yaml v2 into an untyped value), as a param, an arg and in a map', () => {
  const c = parseTaskConfig(
    'platform: linux\nparams: { D: 2024-01-01, T: 2001-12-14t21:59:43.10-05:00, M: { d: 2024-01-01 } }\nrun: { path: echo, args: [2024-01-01] }\n',
    't.yml',
  );
  assert.deepEqual(c.params, { D: '2024-01-01', T: '2001-12-14t21:59:43.10-05:00', M: '{"d":"2024-01-01"}' });
  assert.deepEqual(c.run.args, ['2024-01-01']);
});
