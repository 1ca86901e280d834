// Name filters run in linear time; what the linear engine cannot run is a 400, not a stall.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FilterError, parseFilters, patternMatcher } from '../../../../src/dockerapi/filters/filters.js';

test('patterns keep Go regexp semantics for what clients send: unanchored, anchors, classes', () => {
  assert.equal(patternMatcher('name', 'web')('/my-web-1'), true);
  assert.equal(patternMatcher('name', '^/web$')('/web'), true);
  assert.equal(patternMatcher('name', '^/web$')('/web2'), false);
  assert.equal(patternMatcher('name', '[0-9]+$')('/db12'), true);
});

test('a catastrophic pattern runs in linear time', () => {
  const matches = patternMatcher('name', '^/(a+)+$');
  const started = process.hrtime.bigint();
  assert.equal(matches(`/${'a'.repeat(50_000)}b`), false);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  assert.ok(ms < 500, `took ${ms} ms`);
});

test('invalid, backreferencing or huge patterns are FilterErrors (400)', () => {
  assert.throws(() => patternMatcher('name', '(unclosed'), FilterError);
  assert.throws(() => patternMatcher('name', '(a)\\1'), /RE2 syntax/);
  assert.throws(() => patternMatcher('name', '(?=a)'), FilterError);
  assert.throws(() => patternMatcher('name', 'a'.repeat(5000)), /at most/);
});

test('filter values must be strings', () => {
  assert.throws(() => parseFilters('{"name":[5]}'), FilterError);
  assert.throws(() => parseFilters('{"name":5}'), FilterError);
  assert.throws(() => parseFilters('[1]'), FilterError);
  assert.deepEqual(parseFilters('{"name":{"x":true}}').get('name'), ['x']);
});
