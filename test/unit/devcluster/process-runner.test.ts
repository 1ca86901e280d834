import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HelperProcessRunner, runHere } from '../../../src/devcluster/node/process-runner.js';

const helperPath = fileURLToPath(new URL('../../../src/devcluster/node/runner-helper.js', import.meta.url));
const sh = (script: string, timeoutMs = 10_000) => ({ file: '/bin/sh', args: ['-c', script], timeoutMs, what: 'sh -c' });

/** the helper's child process, reached through the runner's private field: the tests kill it and wait for it */
const helperOf = (runner: HelperProcessRunner) => (runner as unknown as { helper?: import('node:child_process').ChildProcess }).helper;

test('the helper runs each command and answers with its exit code, stdout and stderr', async () => {
  const runner = new HelperProcessRunner(helperPath);
  try {
    const results = await Promise.all([sh('printf out; printf err >&2; exit 3'), sh('printf "%s" "$PPID"')].map((r) => runner.run(r)));
    assert.deepEqual(results[0], { code: 3, stdout: 'out', stderr: 'err' });
    // the command's parent is the helper, not this process
    assert.equal(results[1]!.stdout, String(helperOf(runner)!.pid));
    assert.notEqual(results[1]!.stdout, String(process.pid));
  } finally {
    runner.close();
  }
});

test('a command past its timeout is killed and answered with code -1 and the reason', async () => {
  const runner = new HelperProcessRunner(helperPath);
  try {
    const r = await runner.run(sh('exec sleep 30', 200));
    assert.equal(r.code, -1);
    assert.match(r.stderr, /sh -c timed out after 200 ms/);
  } finally {
    runner.close();
  }
});

test('a missing binary is code -1 with the error, from the helper and from this process alike', async () => {
  const runner = new HelperProcessRunner(helperPath);
  try {
    const req = { file: '/nonexistent/podman', args: ['ps'], timeoutMs: 5000, what: 'podman ps' };
    const [there, here] = await Promise.all([runner.run(req), runHere(req)]);
    assert.equal(there.code, -1);
    assert.match(there.stderr, /ENOENT/);
    assert.deepEqual(there, here);
  } finally {
    runner.close();
  }
});

test('when the helper dies, the calls it held fail with the reason and later calls run in this process', async () => {
  const runner = new HelperProcessRunner(helperPath);
  try {
    const held = runner.run(sh('sleep 30'));
    const helper = helperOf(runner)!;
    helper.kill('SIGKILL');
    const r = await held;
    assert.equal(r.code, -1);
    assert.match(r.stderr, /process runner ended before sh -c was answered/);
    const later = await runner.run(sh('printf "%s" "$PPID"'));
    assert.deepEqual(later, { code: 0, stdout: String(process.pid), stderr: '' });
  } finally {
    runner.close();
  }
});

test('close: the helper exits once the calls it holds are answered', async () => {
  const runner = new HelperProcessRunner(helperPath);
  const first = runner.run(sh('sleep 0.2; printf done'));
  const helper = helperOf(runner)!;
  const exited = once(helper, 'exit');
  runner.close();
  assert.deepEqual(await first, { code: 0, stdout: 'done', stderr: '' });
  const [code] = await exited;
  assert.equal(code, 0);
});

test('a SIGINT to the process group (Ctrl-C) leaves the helper serving: the dev cluster removes its pods through it', async () => {
  const runner = new HelperProcessRunner(helperPath);
  try {
    await runner.run(sh('true'));
    const helper = helperOf(runner)!;
    helper.kill('SIGINT');
    const r = await runner.run(sh('printf "%s" "$PPID"'));
    assert.deepEqual(r, { code: 0, stdout: String(helper.pid), stderr: '' });
  } finally {
    runner.close();
  }
});
