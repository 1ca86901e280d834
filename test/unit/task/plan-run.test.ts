// `berth task plan run` on an in-memory cluster (fake-task-cluster.ts): each step reaches the cluster through
// the connection the plan was handed, as it starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { runPlan } from '../../../src/task/plan-run.js';
import { eventually } from '../../util/eventually.js';
import { scratchDir } from '../../util/scratch.js';
import { FakeTaskCluster } from './fake-task-cluster.js';

const sink = (): Writable => new Writable({ write: (_c, _e, cb) => cb() });

test(
  "a plan's task steps run on the connection the plan is handed, one connection per step as it starts; the first failure stops the plan",
  { timeout: 20_000 },
  async () => {
    const dir = scratchDir('berth-plan-run-');
    const planFile = path.join(dir, 'plan.yml');
    const step = (name: string) =>
      `  - task: ${name}\n    config: {platform: linux, image_resource: {type: registry-image, source: {repository: busybox}}, run: {path: ls}}\n`;
    writeFileSync(planFile, `plan:\n${step('first')}${step('second')}${step('third')}`);
    const fake = new FakeTaskCluster();
    let connects = 0;
    const code = runPlan({
      connect: async () => {
        connects++;
        return { cluster: fake, context: 'ctx-a' };
      },
      planFile,
      inputs: [],
      outputs: [],
      artifacts: 'direct',
      env: { HOME: dir, XDG_CONFIG_HOME: dir, BERTH_OWNER: 'test-owner' },
      cwd: dir,
      stdout: sink(),
      stderr: sink(),
      signal: new AbortController().signal,
    });
    await eventually("the first step's pod", () => fake.created.length === 1);
    assert.equal(connects, 1, 'a step connected before it started');
    const first = fake.firstPod();
    await fake.taskRunning(first);
    fake.exit(first, 0);
    await eventually("the second step's pod", () => fake.created.length === 2);
    const second = fake.created[1].metadata?.name ?? '';
    assert.equal(fake.created[1].metadata?.labels?.['berth.dev/step'], 'second');
    await fake.taskRunning(second);
    fake.exit(second, 5);
    assert.equal(await code, 5);
    assert.equal(connects, 2, 'the step after the failed one ran');
    assert.equal(fake.pods.size, 0, "a step's pod was left");
  },
);

test('a plan given both --image-registry and --image-server is refused before any step, naming both', async () => {
  const dir = scratchDir('berth-plan-run-');
  const planFile = path.join(dir, 'plan.yml');
  writeFileSync(planFile, 'plan:\n  - task: t\n    image: img\n    config: {platform: linux, run: {path: ls}}\n');
  let said = '';
  const fake = new FakeTaskCluster();
  const code = await runPlan({
    connect: async () => ({ cluster: fake, context: 'ctx-a' }),
    planFile,
    inputs: [],
    outputs: [],
    artifacts: 'direct',
    imageRegistry: { registry: 'registry.example.com', prefix: 'ci', plainHttp: false },
    imageServer: 'registry.example.com/berth/berth:0.1.0',
    env: { HOME: dir, XDG_CONFIG_HOME: dir },
    cwd: dir,
    stdout: sink(),
    stderr: new Writable({ write: (c, _e, cb) => ((said += String(c)), cb()) }),
    signal: new AbortController().signal,
  });
  assert.equal(code, 2);
  assert.match(
    said,
    /--image-registry \(or \$BERTH_TASK_IMAGE_REGISTRY\) and --image-server \(or \$BERTH_TASK_IMAGE_SERVER\) are two ways to hand a step its image: give one/,
  );
  assert.equal(fake.created.length, 0);
});
