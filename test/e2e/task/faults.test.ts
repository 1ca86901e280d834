// berth task run (and a plan passing an artifact) under the dev cluster's fault switches: each scenario a few times under each fault case,
// judged against its fault-free run. A task's result is exact or a reported failure (berth's 2), never a
// wrong success or a wrong exit code, never a hang; nothing is left in the namespace.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthCli, BUSYBOX } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import { FAULT_CASES, judge, Tally, underFaults, type RunOutcome } from '../reliability/fault-kit.js';
import { comparableOutput, FIXTURES, runCommand, setUpTask, tempTree, type TaskEnv } from './task-env.js';

const RUNS = 2;
const BERTH_FAILURE = [2];

/** A run's outcome, with its stderr for the report of a bad verdict. */
type Outcome = RunOutcome & { stderr?: string };

interface Scenario {
  name: string;
  /** Runs under each fault case (default RUNS). */
  runs?: number;
  run(t: TaskEnv): Promise<Outcome>;
}

/** stdout, then every downloaded file: a wrong output file is a wrong result. */
function withFiles(stdout: string, dir: string): string {
  const files: string[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else files.push(`--- ${p}\n${readFileSync(join(dir, p), 'utf8')}`);
    }
  };
  walk('');
  return `${stdout}${files.join('')}`;
}

/** Two steps: an output of the first is the input of the second, and comes back with -o. */
const PLAN = `plan:
  - task: make
    config:
      platform: linux
      outputs: [{ name: made }]
      run: { path: sh, args: [-c, 'mkdir made/d && echo one > made/d/one && seq 1 2000 > made/numbers'] }
  - task: use
    config:
      platform: linux
      inputs: [{ name: made }]
      run: { path: sh, args: [-c, 'cat made/d/one && wc -l < made/numbers'] }
`;

const SCENARIOS: Scenario[] = [
  {
    name: 'print-param (params Secret)',
    run: async (t) => {
      const r = await t
        .run(['-c', join(FIXTURES, 'print-param.yml')], { extraEnv: { ALSO_ME: 'me' }, timeoutMs: 90_000 })
        .catch(() => ({ code: null, stdout: '', stderr: '' }));
      return { code: r.code, stdout: r.stdout, timedOut: r.code === null, stderr: r.stderr };
    },
  },
  {
    name: 'generic-outputs -o (outputs through exec)',
    run: async (t) => {
      const out = tempTree({});
      try {
        const r = await t
          .run(['-c', join(FIXTURES, 'generic-outputs.yml'), '-o', `main=${out.dir}/main`, '-o', `dev=${out.dir}/dev`], { timeoutMs: 90_000 })
          .catch(() => ({ code: null, stdout: '', stderr: '' }));
        return { code: r.code, stdout: withFiles(r.stdout, out.dir), timedOut: r.code === null, stderr: r.stderr };
      } finally {
        out.remove();
      }
    },
  },
  {
    name: 'binary-test -i (inputs through attach), exit 5',
    run: async (t) => {
      const tree = tempTree({ 'ascii-banner': ['#!/bin/sh\necho "banner $*"\n[ "$1" = pilot ] && exit 5\ntrue\n', 0o755] });
      try {
        const r = await t
          .run(['-c', join(FIXTURES, 'binary-test.yml'), '-i', `binary=${tree.dir}`], { timeoutMs: 90_000 })
          .catch(() => ({ code: null, stdout: '', stderr: '' }));
        return { code: r.code, stdout: comparableOutput(r.stdout), timedOut: r.code === null, stderr: r.stderr };
      } finally {
        tree.remove();
      }
    },
  },
  {
    name: 'plan: an artifact pod to pod (the default mode), -o at the end',
    runs: 1,
    run: async (t) => {
      const tree = tempTree({ 'plan.yml': PLAN });
      try {
        const r = await runCommand(
          process.execPath,
          [berthCli, 'task', 'plan', 'run', join(tree.dir, 'plan.yml'), '--image', BUSYBOX, '-o', `made=${tree.dir}/out`],
          { env: t.env(), timeoutMs: 150_000 },
        ).catch(() => ({ code: null, stdout: '', stderr: '' }));
        return { code: r.code, stdout: withFiles(r.stdout, join(tree.dir, 'out')), timedOut: r.code === null, stderr: r.stderr };
      } finally {
        tree.remove();
      }
    },
  },
];

describe('berth task run under faults', () => {
  let t: TaskEnv;
  const expected = new Map<string, RunOutcome>();
  const tally = new Tally('berth task run');
  before(async () => {
    t = await setUpTask('task-faults');
  });
  after(async () => {
    tally.print();
    await t?.close();
  });

  it('fault-free runs: the reference results', async () => {
    for (const s of SCENARIOS) {
      const r = await s.run(t);
      assert.ok(r.code !== null && r.code !== 2, `${s.name} failed without faults: ${JSON.stringify(r)}`);
      expected.set(s.name, r);
    }
    assert.equal(expected.get(SCENARIOS[2].name)?.code, 5);
    assert.match(String(expected.get(SCENARIOS[1].name)?.stdout), /--- main\/version\nhello-world\n/);
    assert.match(String(expected.get(SCENARIOS[3].name)?.stdout), /^one\n2000\n--- d\/one\none\n--- numbers\n1\n2\n/);
  });

  for (const fault of FAULT_CASES) {
    // several task runs and a plan under one fault case: more than the harness's 120 s per test on a loaded machine
    it(
      `under ${fault.name}: ${fault.retriable ? 'exact (retried)' : 'exact or a reported failure'}, never wrong, never a hang`,
      { timeout: 300_000 },
      async () => {
        const before = tally.bad().length;
        await underFaults(fault.faults, async () => {
          for (let i = 0; i < RUNS; i++) {
            for (const s of SCENARIOS.filter((x) => i < (x.runs ?? RUNS))) {
              const got = await s.run(t);
              tally.add(
                s.name,
                fault.name,
                judge(expected.get(s.name) as RunOutcome, got, BERTH_FAILURE),
                `code ${got.code} stdout ${JSON.stringify(got.stdout).slice(0, 300)} stderr ${JSON.stringify(got.stderr ?? '').slice(-1200)}`,
              );
            }
          }
        });
        assert.deepEqual(tally.bad().slice(before), []);
      },
    );
  }

  for (const fault of FAULT_CASES) {
    it(`SIGTERM mid-task under ${fault.name}: exit 3, nothing left in the namespace`, async () => {
      await underFaults(fault.faults, async () => {
        const child = spawn(process.execPath, [berthCli, 'task', 'run', '-c', join(FIXTURES, 'sleeper.yml'), '--image', BUSYBOX], {
          env: t.env(),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
        await eventually('the task is running', () => stdout.includes('started\n') || /^running /m.test(stderr), { timeoutMs: 60_000 });
        child.kill('SIGTERM');
        assert.equal(await exited, 3, stderr);
      });
      assert.deepEqual(await t.leftovers(), []);
    });
  }

  it('nothing of berth is left in the namespace', async () => {
    assert.deepEqual(await t.leftovers(), []);
  });
});
