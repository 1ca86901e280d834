// berth task's output when the kubelet rotates the task's log (containerLogMaxSize) while it runs: a real
// kubelet serves only the newest file once it has rotated, and berth's last check of the output reads the log
// again. The dev cluster's kubelet rotates at 64 KiB here, looked at every 3 s (instead of 10 MiB every 10 s), on
// its own clock: a look may fall at any moment of the task. So the task writes one line at once, which berth's
// follow receives, and its bulk only 2 s later, when berth follows it: a log rotated before berth has received
// any of it is beyond what the API lets berth see (docs/reliability.md), and not what this test is about.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { servesSplitLogs } from '../harness/cluster.js';
import { judge, NO_FAULTS, setFaults, underFaults } from '../reliability/fault-kit.js';
import { comparableOutput, setUpTask, tempTree, type TaskEnv } from './task-env.js';

const ROTATE = { containerLogMaxBytes: 64 * 1024, containerLogCheckMs: 3000 };
const LINES = 40000;
/** a first line, then half the lines, a pause past a look at the log's size, the other half: rotated in the middle */
const TASK = `platform: linux\nrun: { path: sh, args: [-c, 'echo start; sleep 2; seq 1 ${LINES / 2}; sleep 3.5; seq ${LINES / 2 + 1} ${LINES}; seq 1 500 >&2'] }\n`;
const lines = (n: number): string => `${Array.from({ length: n }, (_, i) => i + 1).join('\n')}\n`;
const expectedStdout = `start\n${lines(LINES)}`;
/** without split log streams the task's stderr comes merged into stdout, as in a Concourse build log (comparableOutput) */
const taskStdout = (): string => comparableOutput(servesSplitLogs() ? expectedStdout : expectedStdout + lines(500));
const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

describe("berth task run while the kubelet rotates the task's log", () => {
  let t: TaskEnv;
  let tree: { dir: string; remove(): void };
  before(async () => {
    t = await setUpTask('task-logrot');
    tree = tempTree({ 'chatty.yml': TASK });
  });
  after(async () => {
    await setFaults(NO_FAULTS);
    tree?.remove();
    await t?.close();
  });

  it('prints every line once and exits 0 (it failed with exit 2: "does not match what berth delivered")', async () => {
    const r = await underFaults(ROTATE, () => t.run(['-c', join(tree.dir, 'chatty.yml')]));
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    const expected = taskStdout();
    assert.equal(
      sha(comparableOutput(r.stdout)),
      sha(expected),
      `stdout of ${r.stdout.length} bytes, ${expected.length} expected; its end: ${r.stdout.slice(-200)}`,
    );
    if (servesSplitLogs()) assert.match(r.stderr, /(^|\n)1\n2\n[\s\S]*\n500\n/);
  });

  it('with followed logs cut as well (dropStreams 0.5): exact or a reported failure, never a wrong success', { timeout: 300_000 }, async () => {
    const verdicts: string[] = [];
    await underFaults({ ...ROTATE, dropStreams: 0.5 }, async () => {
      for (let i = 0; i < 3; i++) {
        const r = await t.run(['-c', join(tree.dir, 'chatty.yml')], { timeoutMs: 120_000 });
        const verdict = judge({ code: 0, stdout: taskStdout() }, { code: r.code, stdout: comparableOutput(r.stdout) }, [2]);
        verdicts.push(verdict);
        assert.ok(
          verdict === 'exact' || verdict === 'failed',
          `run ${i + 1}: ${verdict}, exit ${r.code}, ${r.stdout.length} bytes of stdout; stderr: ${r.stderr.slice(-1500)}`,
        );
        if (verdict === 'failed') assert.match(r.stderr, /rotated|does not match|broke/, r.stderr.slice(-1500));
      }
    });
    process.stdout.write(`# verdicts under rotation and dropStreams 0.5: ${verdicts.join(', ')}\n`);
  });

  it('nothing of berth is left in the namespace', async () => {
    assert.deepEqual(await t.leftovers(), []);
  });
});
