// get steps of berth task plan run (a plan of 3 steps, and its variant whose middle step fails), through the real
// CLI, as the user bound to exactly deploy/rbac/task-role.yaml, with the local test resource type
// (images/test-resource). put steps and broken resource scripts: resources-put.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PLAN_TIMEOUT, RESOURCES_PLAN, pinned, planRunner } from './resource-env.js';
import { FIXTURES, setUpTask, tempTree, type TaskEnv } from './task-env.js';

describe('berth task plan run: get steps', () => {
  let t: TaskEnv;
  const plan = planRunner(() => t);
  before(async () => {
    t = await setUpTask('task-res');
  });
  after(async () => {
    await t?.close();
  });

  it('get (check, then in) → a task that transforms → a task that consumes; outputs on disk', PLAN_TIMEOUT, async () => {
    const out = tempTree({});
    try {
      const r = await plan([
        join(FIXTURES, 'plan-resources.yml'),
        '-o',
        `source-code=${out.dir}/src`,
        '-o',
        `built=${out.dir}/built`,
        '-o',
        `report=${out.dir}/report`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      // check listed 1.0 1.1 1.2; in fetched the last one, with the get's params over the source.
      assert.equal(readFileSync(join(out.dir, 'src/version'), 'utf8'), '1.2\n');
      assert.equal(readFileSync(join(out.dir, 'src/greeting'), 'utf8'), 'hi\n');
      assert.equal(readFileSync(join(out.dir, 'built/banner'), 'utf8'), 'hi from version 1.2\n');
      assert.equal(readFileSync(join(out.dir, 'report/size'), 'utf8').trim(), '20');
      assert.equal(r.stdout, 'ensure ran\nconsumed: hi from version 1.2\n');
      // The resource's stderr is its log; its response is shown as version and metadata; the
      // container's working directory is Concourse's /tmp/build/get.
      assert.match(r.stderr, /^berth task: warning: resources\[0\]\.check_every \(line 11\) is ignored/m);
      assert.match(
        r.stderr,
        /^get source-code\ncheck: versions of the source: 1\.0 1\.1 1\.2\nin: fetching version 1\.2 into \/tmp\/build\/get\nversion: ver=1\.2\n {2}dest: \/tmp\/build\/get\n {2}cwd: \/tmp\/build\/get\n/m,
      );
      assert.match(r.stderr, /^succeeded$/m);
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      out.remove();
    }
  });

  it('the middle step fails: its exit code, the last step never starts, ensure ran, nothing left behind', PLAN_TIMEOUT, async () => {
    const failing = tempTree({ 'plan.yml': pinned(RESOURCES_PLAN).replace('params: { EXIT: 0 }', 'params: { EXIT: 5 }') });
    try {
      const r = await plan([join(failing.dir, 'plan.yml')]);
      assert.equal(r.code, 5, r.stderr);
      assert.equal(r.stdout, 'ensure ran\n', 'consume never ran');
      assert.match(r.stderr, /^version: ver=1\.2$/m, 'the get ran first');
      assert.doesNotMatch(r.stderr, /^task consume$/m);
      assert.match(r.stderr, /^failed$/m);
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      failing.remove();
    }
  });
});
