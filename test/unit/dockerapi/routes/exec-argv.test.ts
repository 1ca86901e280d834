// An exec's Env and WorkingDir, which a Kubernetes exec has not, as the command that gives them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { execArgv } from '../../../../src/dockerapi/routes/exec.js';

test('Env through env, a bare key unset as dockerd unsets it, WorkingDir through sh', () => {
  assert.deepEqual(execArgv({ cmd: ['id'], env: [], workingDir: '' }), ['id']);
  assert.deepEqual(execArgv({ cmd: ['id'], env: ['A=1', 'GONE', 'B=x y'], workingDir: '' }), ['env', '-u', 'GONE', 'A=1', 'B=x y', 'id']);
  assert.deepEqual(execArgv({ cmd: ['pwd'], env: ['A=1'], workingDir: '/tmp' }), ['/bin/sh', '-c', 'cd "$0" && exec "$@"', '/tmp', 'env', 'A=1', 'pwd']);
});
