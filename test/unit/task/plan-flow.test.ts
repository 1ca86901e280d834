import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePlan } from '../../../src/task/plan-config.js';
import { runFlow, type LeafStep } from '../../../src/task/plan-flow.js';
import { exitCodeOf, failed, outcomeOfCode, SUCCEEDED, type StepOutcome } from '../../../src/task/outcome.js';

function plan(yaml: string) {
  return parsePlan(yaml, 'plan.yml');
}

interface Leaves {
  /** Steps in the order they started. */
  started: string[];
  /** Steps that were aborted, in order. */
  aborted: string[];
  /** How many ran at once, at most. */
  widest: number;
  runLeaf(step: LeafStep, signal: AbortSignal): Promise<StepOutcome>;
}

/** Steps named `ok`, `exit-N`, `errored`, `hang` (until its signal aborts), `slow` (a few event-loop turns). */
function leaves(opts: { onStart?: (name: string) => void } = {}): Leaves {
  let running = 0;
  const l: Leaves = {
    started: [],
    aborted: [],
    widest: 0,
    async runLeaf(step, signal) {
      const name = step.name;
      l.started.push(name);
      running++;
      l.widest = Math.max(l.widest, running);
      opts.onStart?.(name);
      try {
        if (signal.aborted) throw new Error(`${name} started under an aborted signal`);
        const kind = name.replace(/#.*/, '');
        if (kind === 'hang') {
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          l.aborted.push(name);
          return { kind: 'aborted' };
        }
        if (kind === 'slow') for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
        if (kind === 'errored') return { kind: 'errored' };
        const code = /^exit-(\d+)$/.exec(kind);
        return code ? outcomeOfCode(Number(code[1])) : SUCCEEDED;
      } finally {
        running--;
      }
    },
  };
  return l;
}

const task = (name: string, indent = '  ') => `${indent}- task: ${name}\n${indent}  config: { platform: linux, run: { path: x } }\n`;
const never = new AbortController().signal;

test("a task's own exit 3 or 2 is a failure: on_failure and ensure run, the next step does not; the code is the task's", async () => {
  for (const code of [3, 2]) {
    const l = leaves();
    const steps = plan(
      `plan:\n${task(`exit-${code}`)}    on_failure: { task: notify, config: { platform: linux, run: { path: x } } }\n    ensure: { task: tidy, config: { platform: linux, run: { path: x } } }\n${task('next')}`,
    );
    const outcome = await runFlow(steps, { interrupt: never, ensureTimeoutMs: 1000, runLeaf: (s, sig) => l.runLeaf(s, sig) });
    assert.deepEqual(outcome, failed(code));
    assert.equal(exitCodeOf(outcome), code);
    assert.deepEqual(l.started, [`exit-${code}`, 'notify', 'tidy']);
  }
});

test('an errored step runs ensure but not on_failure; berth exits 2', async () => {
  const l = leaves();
  const steps = plan(
    `plan:\n${task('errored')}    on_failure: { task: notify, config: { platform: linux, run: { path: x } } }\n    ensure: { task: tidy, config: { platform: linux, run: { path: x } } }\n`,
  );
  const outcome = await runFlow(steps, { interrupt: never, ensureTimeoutMs: 1000, runLeaf: (s, sig) => l.runLeaf(s, sig) });
  assert.equal(exitCodeOf(outcome), 2);
  assert.deepEqual(l.started, ['errored', 'tidy']);
});

test('an interrupt aborts the running step, then its ensure hooks run (inner first), not on_failure; later steps never start', async () => {
  const interrupt = new AbortController();
  const l = leaves({ onStart: (name) => name === 'hang' && setImmediate(() => interrupt.abort()) });
  const steps = plan(
    `plan:\n  - do:\n${task('hang', '      ')}        on_failure: { task: notify, config: { platform: linux, run: { path: x } } }\n        ensure: { task: inner-ensure, config: { platform: linux, run: { path: x } } }\n    ensure: { task: outer-ensure, config: { platform: linux, run: { path: x } } }\n${task('next')}`,
  );
  const outcome = await runFlow(steps, { interrupt: interrupt.signal, ensureTimeoutMs: 60_000, runLeaf: (s, sig) => l.runLeaf(s, sig) });
  assert.equal(outcome.kind, 'aborted');
  assert.equal(exitCodeOf(outcome), 3);
  assert.deepEqual(l.started, ['hang', 'inner-ensure', 'outer-ensure']);
});

test('after an interrupt the ensure hooks are bounded in time: one that hangs is aborted when the bound passes', async () => {
  const interrupt = new AbortController();
  const l = leaves({ onStart: (name) => name === 'hang' && setImmediate(() => interrupt.abort()) });
  const steps = plan(`plan:\n${task('hang')}    ensure: { task: 'hang#ensure', config: { platform: linux, run: { path: x } } }\n`);
  const began = Date.now();
  const outcome = await runFlow(steps, { interrupt: interrupt.signal, ensureTimeoutMs: 200, runLeaf: (s, sig) => l.runLeaf(s, sig) });
  assert.equal(outcome.kind, 'aborted');
  assert.deepEqual(l.aborted, ['hang', 'hang#ensure']);
  assert.ok(Date.now() - began < 5000, 'the bound ended the ensure hook');
});

test('in_parallel limit: at most that many steps at once, every step run', async () => {
  const l = leaves();
  const steps = plan(
    `plan:\n  - in_parallel:\n      limit: 2\n      steps:\n${['slow#1', 'slow#2', 'slow#3', 'slow#4', 'slow#5'].map((n) => task(n, '        ')).join('')}`,
  );
  const outcome = await runFlow(steps, { interrupt: never, ensureTimeoutMs: 1000, runLeaf: (s, sig) => l.runLeaf(s, sig) });
  assert.equal(outcome.kind, 'succeeded');
  assert.equal(l.widest, 2);
  assert.deepEqual(l.started, ['slow#1', 'slow#2', 'slow#3', 'slow#4', 'slow#5']);
  const all = leaves();
  await runFlow(plan(`plan:\n  - in_parallel:\n${['slow#1', 'slow#2', 'slow#3'].map((n) => task(n, '      ')).join('')}`), {
    interrupt: never,
    ensureTimeoutMs: 1000,
    runLeaf: (s, sig) => all.runLeaf(s, sig),
  });
  assert.equal(all.widest, 3, 'without a limit, all at once');
});

test('in_parallel fail_fast: a failing step aborts the running ones (their ensure runs) and starts no more; the outcome is the failure', async () => {
  const l = leaves();
  const steps = plan(
    `plan:\n  - in_parallel:\n      limit: 2\n      fail_fast: true\n      steps:\n${task('hang', '        ')}          ensure: { task: hang-ensure, config: { platform: linux, run: { path: x } } }\n${task('exit-5', '        ')}${task('not-started', '        ')}    on_failure: { task: notify, config: { platform: linux, run: { path: x } } }\n`,
  );
  const outcome = await runFlow(steps, { interrupt: never, ensureTimeoutMs: 1000, runLeaf: (s, sig) => l.runLeaf(s, sig) });
  assert.deepEqual(outcome, failed(5));
  assert.deepEqual(l.aborted, ['hang']);
  assert.ok(!l.started.includes('not-started'), `started: ${l.started.join(', ')}`);
  assert.ok(l.started.includes('hang-ensure') && l.started.includes('notify'), `started: ${l.started.join(', ')}`);
});

test('in_parallel without fail_fast: the others run to their end; the outcome is the first failure in step order', async () => {
  const l = leaves();
  const steps = plan(`plan:\n  - in_parallel:\n${task('slow', '      ')}${task('exit-6', '      ')}${task('exit-7', '      ')}${task('ok', '      ')}`);
  const outcome = await runFlow(steps, { interrupt: never, ensureTimeoutMs: 1000, runLeaf: (s, sig) => l.runLeaf(s, sig) });
  assert.deepEqual(outcome, failed(6));
  assert.deepEqual([...l.started].sort(), ['exit-6', 'exit-7', 'ok', 'slow']);
  assert.deepEqual(l.aborted, []);
});
