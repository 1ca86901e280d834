// The line the harness repeats at the end of a run for each failed test: a test's own failure, not the suites and files
// that failed because of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failureLine } from '../../e2e/harness/failures-reporter.js';

test('a failed test gives its file, its name and the first line of its cause', () => {
  const line = failureLine(
    {
      type: 'test:fail',
      data: {
        name: 'caches rm refuses a cache in use',
        file: '/repo/dist/test/e2e/task/caches-life.test.js',
        details: { error: { failureType: 'testCodeFailure', message: 'wrapped', cause: new Error('\nno first line within 120 s\nmore') } },
      },
    },
    '/repo',
  );
  assert.equal(line, 'dist/test/e2e/task/caches-life.test.js: caches rm refuses a cache in use: no first line within 120 s\n');
});

test('a suite or file that failed only through its tests gives no line, nor does a pass', () => {
  assert.equal(
    failureLine({ type: 'test:fail', data: { name: 'suite', details: { error: { failureType: 'subtestsFailed', message: '1 subtest failed' } } } }),
    undefined,
  );
  assert.equal(failureLine({ type: 'test:pass', data: { name: 'ok' } }), undefined);
});

test('a failure whose cause is no Error (a timeout, a string) still names it', () => {
  const line = failureLine({
    type: 'test:fail',
    data: { name: 't', details: { error: { failureType: 'testTimeoutFailure', message: 'test timed out after 600000ms' } } },
  });
  assert.equal(line, '?: t: test timed out after 600000ms\n');
});
