import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePlan, PlanConfigError } from '../../../src/task/plan-config.js';
import { parseTaskConfig, TaskConfigError } from '../../../src/task/config.js';

test('steps, in_parallel (list or steps:), do, hooks, mappings, params', () => {
  const steps = parsePlan(
    [
      'plan:',
      '  - task: a',
      '    file: repo/ci/a.yml',
      '    input_mapping: { src: repo }',
      '    output_mapping: { out: built }',
      '    params: { NUM: 1, B: true }',
      '    ensure: { task: e, file: e.yml }',
      '  - in_parallel:',
      '      steps:',
      '        - task: b',
      '          config: { platform: linux, run: { path: ls } }',
      '        - do:',
      '            - task: c',
      '              file: c.yml',
      '      fail_fast: true',
      '    on_failure: { task: f, file: f.yml }',
    ].join('\n'),
    'plan.yml',
  );
  assert.equal(steps.length, 2);
  const a = steps[0];
  assert.ok(a.kind === 'task');
  assert.equal(a.file, 'repo/ci/a.yml');
  assert.deepEqual(a.inputMapping, { src: 'repo' });
  assert.deepEqual(a.outputMapping, { out: 'built' });
  assert.deepEqual(a.params, { NUM: '1', B: 'true' });
  assert.equal(a.ensure?.kind, 'task');
  const par = steps[1];
  assert.ok(par.kind === 'in_parallel');
  assert.deepEqual(
    par.steps.map((s) => s.kind),
    ['task', 'do'],
  );
  assert.equal(par.onFailure?.kind, 'task');
});

test("an inline config is parsed with the plan file's own line numbers", () => {
  const steps = parsePlan('plan:\n  - task: b\n    config:\n      platform: linux\n      run:\n        paht: ls\n', 'plan.yml');
  const b = steps[0];
  assert.ok(b.kind === 'task' && b.configText !== undefined);
  assert.throws(
    () => parseTaskConfig(b.configText as string, 'plan.yml (task b)'),
    (e: Error) =>
      e instanceof TaskConfigError &&
      /unknown field run\.paht \(line 6\)/.test(e.message) &&
      /missing path to executable to run: run\.path \(line 6\)/.test(e.message),
  );
});

test('a get of an undeclared resource, unknown fields and steps, file and config together: refused with their line', () => {
  try {
    parsePlan('plan:\n  - get: repo\n  - task: x\n    file: x.yml\n    config: {}\n    bogus: 1\n  - wat: 1\n', 'plan.yml');
    assert.fail('accepted');
  } catch (err) {
    assert.ok(err instanceof PlanConfigError);
    const text = err.problems.join('\n');
    assert.match(text, /plan\[0\] \(get repo\): no resource `repo` \(line 2\): declare it under resources: \(the plan has none\)/);
    assert.match(text, /plan\[1\] \(task x\): give exactly one of file and config \(line 3\)/);
    assert.match(text, /plan\[1\]: unknown field bogus \(line 6\)/);
    assert.match(text, /plan\[2\]: not a step berth knows \(line 7\)/);
  }
  assert.throws(() => parsePlan('steps: []\n', 'p.yml'), /unknown field steps[\s\S]*must hold plan:/);
});

test('in_parallel: limit and fail_fast are read (a whole number above 0, a boolean); anything else is refused with its line', () => {
  const [par] = parsePlan(
    'plan:\n  - in_parallel:\n      limit: 2\n      fail_fast: true\n      steps:\n        - task: a\n          file: a.yml\n',
    'plan.yml',
  );
  assert.ok(par.kind === 'in_parallel');
  assert.equal(par.limit, 2);
  assert.equal(par.failFast, true);
  const [list] = parsePlan('plan:\n  - in_parallel:\n      - task: a\n        file: a.yml\n', 'plan.yml');
  assert.ok(list.kind === 'in_parallel');
  assert.equal(list.limit, undefined, 'a list: no limit');
  assert.equal(list.failFast, false);
  try {
    parsePlan('plan:\n  - in_parallel:\n      limit: 0\n      fail_fast: maybe\n      steps: []\n      wait: 1\n', 'plan.yml');
    assert.fail('accepted');
  } catch (err) {
    assert.ok(err instanceof PlanConfigError);
    const text = err.problems.join('\n');
    assert.match(text, /plan\[0\]\.in_parallel\.limit \(line 3\): must be a whole number of steps above 0/);
    assert.match(text, /plan\[0\]\.in_parallel\.fail_fast \(line 4\): must be true or false/);
    assert.match(text, /plan\[0\]\.in_parallel: unknown field wait \(line 6\)/);
  }
});

test("a task step's image: names the artifact it runs in; an empty one is refused with its line", () => {
  const [step] = parsePlan('plan:\n  - task: t\n    image: my-image\n    file: t.yml\n', 'plan.yml');
  assert.equal(step?.kind === 'task' && step.image, 'my-image');
  try {
    parsePlan('plan:\n  - task: t\n    image: ""\n    file: t.yml\n', 'plan.yml');
    assert.fail('accepted');
  } catch (err) {
    assert.ok(err instanceof PlanConfigError);
    assert.match(err.problems.join('\n'), /plan\[0\]\.image: give the name of an artifact of the plan .*\(line 3\)/);
  }
});

test("a task step's tags place its pod on nodes labeled tags.berth.dev/TAG=true, each of them; bad tags are refused with their line", async () => {
  const { planTaskPod } = await import('../../../src/task/pod-plan.js');
  const { layOut } = await import('../../../src/task/layout.js');
  const [step] = parsePlan('plan:\n  - task: build\n    tags: [gpu, eu-west]\n    file: t.yml\n', 'plan.yml');
  assert.ok(step && step.kind === 'task');
  assert.deepEqual(step.tags, ['gpu', 'eu-west']);
  const c = parseTaskConfig('platform: linux\nrun: {path: ls}\n', 't.yml');
  const ctx = { namespace: 'ci', owner: 'me', runId: 'abcd1234', now: new Date(0), ttlSeconds: 600, image: 'busybox:1', helperImage: 'helper:1' };
  const layout = layOut(c, { inputs: [], outputs: [], args: [], workDir: '/tmp/build/x', cwd: '/' });
  assert.deepEqual(planTaskPod(c, layout, {}, { ...ctx, tags: step.tags }).spec!.nodeSelector, {
    'tags.berth.dev/gpu': 'true',
    'tags.berth.dev/eu-west': 'true',
  });
  assert.equal(planTaskPod(c, layout, {}, ctx).spec!.nodeSelector, undefined, 'no tags: any node');
  assert.throws(
    () => parsePlan('plan:\n  - task: a\n    file: a.yml\n    tags: ["no spaces"]\n', 'plan.yml'),
    /plan\[0\]\.tags: tag "no spaces" cannot be a node label's name .* \(line 4/,
  );
  assert.throws(() => parsePlan('plan:\n  - task: a\n    file: a.yml\n    tags: gpu\n', 'plan.yml'), /plan\[0\]\.tags: tags must be a list of strings/);
  assert.throws(() => parsePlan('plan:\n  - get: repo\n    tags: [gpu]\n', 'plan.yml'), /tags .*: worker tags place task steps only/);
});
