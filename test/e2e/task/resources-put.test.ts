// put steps, and resource scripts that break the contract, of berth task plan run: through the real CLI, as the
// user bound to exactly deploy/rbac/task-role.yaml, with the local test resource type (images/test-resource).
// (Apart from resources.test.ts so that each file stays short: their plans run several pods one after another.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PLAN_TIMEOUT, RESOURCES_PLAN, pinned, planRunner } from './resource-env.js';
import { FIXTURES, setUpTask, tempTree, type TaskEnv } from './task-env.js';

describe('berth task plan run: put steps and broken resource scripts', () => {
  let t: TaskEnv;
  const plan = planRunner(() => t);
  before(async () => {
    t = await setUpTask('task-put');
  });
  after(async () => {
    await t?.close();
  });

  it('put: out sees the artifacts its inputs name below /tmp/build/put, then the implicit get of its version; no_get', PLAN_TIMEOUT, async () => {
    const out = tempTree({});
    try {
      const r = await plan([join(FIXTURES, 'plan-put.yml'), '-o', `release=${out.dir}/release`]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '');
      // inputs: detect → only `built` (named by params.file); inputs: all (default) → every artifact so far.
      assert.match(
        r.stderr,
        /^put release\nout: artifacts in \/tmp\/build\/put: built \nversion: ver=2\.0\n {2}file: built\/next\nget release\nin: fetching version 2\.0 into \/tmp\/build\/get\n/m,
      );
      assert.match(
        r.stderr,
        /\nput notes-release\nout: artifacts in \/tmp\/build\/put: built notes release \nversion: ver=2\.0-notes\n {2}file: notes\/n\nsucceeded\n$/,
      );
      assert.doesNotMatch(r.stderr, /^get notes-release$/m, 'no_get: no implicit get');
      assert.doesNotMatch(r.stderr, /check:/, 'the implicit get fetches the version out made, without a check');
      assert.equal(readFileSync(join(out.dir, 'release/version'), 'utf8'), '2.0\n');
      assert.equal(readFileSync(join(out.dir, 'release/greeting'), 'utf8'), 'put then got\n', 'get_params');
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      out.remove();
    }
  });

  it('a resource whose in exits non-zero, or prints no JSON, fails the step with a clear sentence', PLAN_TIMEOUT, async () => {
    const broken = (mode: string): string => pinned(RESOURCES_PLAN).replace('greeting: hello }', `greeting: hello, mode: ${mode} }`);
    const plans = tempTree({ 'fails.yml': broken('in-fails'), 'not-json.yml': broken('in-not-json') });
    try {
      const fails = await plan([join(plans.dir, 'fails.yml')]);
      assert.equal(fails.code, 7, fails.stderr);
      assert.match(fails.stderr, /^in: the source is broken \(mode in-fails\)$/m, 'its log');
      assert.match(fails.stderr, /^berth task: get source-code: resource script '\/opt\/resource\/in \/tmp\/build\/get' failed: exit status 7$/m);
      assert.doesNotMatch(fails.stderr, /^task transform$/m);
      assert.equal(fails.stdout, '');
      const notJson = await plan([join(plans.dir, 'not-json.yml')]);
      assert.equal(notJson.code, 1, notJson.stderr);
      assert.match(
        notJson.stderr,
        /^berth task: get source-code: resource script '\/opt\/resource\/in \/tmp\/build\/get' printed invalid JSON on stdout: "fetched version 1\.2\\n" \(a resource script prints its JSON response on stdout, its log on stderr\)$/m,
      );
      assert.doesNotMatch(notJson.stderr, /^task transform$/m);
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      plans.remove();
    }
  });
});
