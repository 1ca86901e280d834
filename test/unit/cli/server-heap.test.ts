import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { scratchDir } from '../../util/scratch.js';

const moduleUrl = pathToFileURL(join(import.meta.dirname, '../../../src/cli/server-heap.js')).href;
const hasExecve = typeof (process as { execve?: unknown }).execve === 'function';

/** runs a script that calls useServerHeap and reports its pid, node flags and arguments */
function run(env: NodeJS.ProcessEnv): { pid: number; reported: { pid: number; execArgv: string[]; argv: string[] } } {
  const dir = scratchDir('berth-heap-');
  try {
    const script = join(dir, 'serve.mjs');
    writeFileSync(
      script,
      `const { useServerHeap } = await import(${JSON.stringify(moduleUrl)});\nuseServerHeap();\nconsole.log(JSON.stringify({ pid: process.pid, execArgv: process.execArgv, argv: process.argv.slice(2) }));\n`,
    );
    const r = spawnSync(process.execPath, [script, 'serve', '-n', 'ci'], {
      env: { ...process.env, BERTH_DEFAULT_HEAP: '', NODE_OPTIONS: '', ...env },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    return { pid: r.pid, reported: JSON.parse(r.stdout) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('berth serve replaces itself, same pid and arguments, with a 1 MiB young generation', { skip: !hasExecve && 'this node has no process.execve' }, () => {
  const { pid, reported } = run({});
  assert.equal(reported.pid, pid);
  assert.deepEqual(reported.execArgv, ['--max-semi-space-size=1']);
  assert.deepEqual(reported.argv, ['serve', '-n', 'ci']);
});

test('BERTH_DEFAULT_HEAP=1, or a size of the user own, keeps the heap as it is', () => {
  assert.deepEqual(run({ BERTH_DEFAULT_HEAP: '1' }).reported.execArgv, []);
  assert.deepEqual(run({ NODE_OPTIONS: '--max-semi-space-size=4' }).reported.execArgv, []);
});

test('serverHeapFlags: the flags a server berth starts (the dev cluster) gets, with the same opt-outs', async () => {
  const { serverHeapFlags } = (await import(moduleUrl)) as typeof import('../../../src/cli/server-heap.js');
  assert.deepEqual(serverHeapFlags([], {}), ['--max-semi-space-size=1']);
  assert.deepEqual(serverHeapFlags([], { BERTH_DEFAULT_HEAP: '1' }), []);
  assert.deepEqual(serverHeapFlags(['--max-semi-space-size=8'], {}), []);
  assert.deepEqual(serverHeapFlags([], { NODE_OPTIONS: '--enable-source-maps --max-semi-space-size=2' }), []);
});
