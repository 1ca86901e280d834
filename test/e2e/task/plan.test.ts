// berth task plan run through the real CLI, as the user bound to exactly deploy/rbac/task-role.yaml.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthCli, BUSYBOX } from '../harness/cluster.js';
import { FIXTURES, runCommand, setUpTask, tempTree, type TaskEnv } from './task-env.js';

describe('berth task plan run', () => {
  let t: TaskEnv;
  const plan = (args: string[]) => runCommand(process.execPath, [berthCli, 'task', 'plan', 'run', ...args, '--image', BUSYBOX], { env: t.env(), timeoutMs: 180_000 });
  before(async () => {
    t = await setUpTask('task-plan');
  });
  after(async () => {
    await t?.close();
  });

  it('outputs of one step are inputs of the next; in_parallel; mappings; step params; -o at the end', async () => {
    const out = tempTree({});
    try {
      const r = await plan([join(FIXTURES, 'plan-artifacts.yml'), '-i', `tasks=${FIXTURES}`, '-o', `report=${out.dir}/report`, '-o', `dev=${out.dir}/dev`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^hi hello-world$/m, 'use-report read what read wrote from what make wrote');
      for (const name of ['main', 'dev', 'ci']) assert.match(r.stdout, new RegExp(` ${name}\\n`), 'list saw the three outputs of make');
      assert.equal(readFileSync(join(out.dir, 'report/summary'), 'utf8'), 'hi hello-world\n');
      assert.equal(readFileSync(join(out.dir, 'dev/version'), 'utf8'), 'hey there dev\n');
      assert.match(r.stderr, /^task make$/m);
      assert.match(r.stderr, /^succeeded$/m);
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      out.remove();
    }
  });

  it('a failed step stops the plan with its code; on_failure and ensure run, on_success does not', async () => {
    const r = await plan([join(FIXTURES, 'plan-failure.yml')]);
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, 'failing\non_failure ran\nensure ran\n');
    assert.match(r.stderr, /^failed$/m);
    assert.deepEqual(await t.leftovers(), []);
  });

  it('a get of an undeclared resource and unknown steps are refused with their line, before anything runs', async () => {
    const bad = tempTree({ 'plan.yml': 'plan:\n  - get: repo\n  - task: x\n    file: x.yml\n    timeout: 1h\n' });
    try {
      const r = await plan([join(bad.dir, 'plan.yml')]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /plan\[0\] \(get repo\): no resource `repo` \(line 2\): declare it under resources:/);
      assert.match(r.stderr, /plan\[1\]: timeout \(line 5\)/);
      assert.equal(r.stdout, '');
    } finally {
      bad.remove();
    }
  });
});
