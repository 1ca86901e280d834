// `berth task run` on an in-memory cluster (fake-task-cluster.ts): what a run creates, follows, reports and
// deletes, without a cluster. The kubelet is the test's: a task runs until the test ends it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parseTaskConfig } from '../../../src/task/config.js';
import { layOut } from '../../../src/task/layout.js';
import { planTaskPod, TASK_CONTAINER } from '../../../src/task/pod-plan.js';
import { runTask, type TaskRunOptions } from '../../../src/task/run-task.js';
import { eventually } from '../../util/eventually.js';
import { scratchDir } from '../../util/scratch.js';
import { FakeTaskCluster } from './fake-task-cluster.js';

const TTL = 600;
const HELPER = 'helper:1';
const IMAGE = 'busybox:1.36';
/** A task with a param, so the run makes a Secret and feeds an `inputs` container too. */
const TASK = `platform: linux
params: {GREETING: hello}
run: {path: sh, args: [-c, 'echo out; echo err >&2']}
`;

/** Text written to a Writable, as it is now. */
class Collected extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString('utf8');
    cb();
  }
}

interface Started {
  fake: FakeTaskCluster;
  code: Promise<number>;
  stdout: Collected;
  stderr: Collected;
  /** How often the run connected. */
  connects: () => number;
  configFile: string;
}

function start(opts: { config?: string; abort?: AbortController; extra?: Partial<TaskRunOptions> } = {}): Started {
  const dir = scratchDir('berth-task-run-');
  const configFile = path.join(dir, 'task.yml');
  writeFileSync(configFile, opts.config ?? TASK);
  const fake = new FakeTaskCluster();
  fake.output = { stdout: 'out\n', stderr: 'err\n' };
  let connects = 0;
  const stdout = new Collected();
  const stderr = new Collected();
  const code = runTask({
    connect: async () => {
      connects++;
      return { cluster: fake, context: 'ctx-a' };
    },
    configFile,
    inputs: [],
    outputs: [],
    includeIgnored: false,
    privileged: false,
    image: IMAGE,
    args: [],
    // no berth config file is found under this HOME: the settings are these
    env: { HOME: dir, XDG_CONFIG_HOME: dir, BERTH_OWNER: 'test-owner', BERTH_TTL: String(TTL), BERTH_HELPER_IMAGE: HELPER, BERTH_START_TIMEOUT: '20s' },
    cwd: dir,
    stdout,
    stderr,
    signal: (opts.abort ?? new AbortController()).signal,
    ...opts.extra,
  });
  return { fake, code, stdout, stderr, connects: () => connects, configFile };
}

test('a task that succeeds: its pod as planned, its output followed while it runs, exit 0, its pod and Secret deleted after', { timeout: 20_000 }, async () => {
  const run = start();
  const { fake } = run;
  await eventually('the pod', () => fake.created.length > 0);
  const name = fake.firstPod();
  await fake.taskRunning(name);
  // streamed, not read at the end: the output arrives while the task still runs
  await eventually("the task's stdout", () => run.stdout.text === 'out\n');
  await eventually("the task's stderr", () => run.stderr.text.includes('err\n'));
  assert.ok(fake.pods.has(name), 'the pod was gone before the task ended');
  fake.exit(name, 0);
  assert.equal(await run.code, 0);
  assert.equal(run.stdout.text, 'out\n', 'each byte of stdout once');
  assert.match(run.stderr.text, /^succeeded$/m);

  // the pod berth asked for is the plan of this task, for this run
  const created = fake.created[0];
  const runId = name.replace(/^task-/, '');
  const workDir = created.spec?.containers.find((c) => c.name === TASK_CONTAINER)?.workingDir ?? '';
  const expires = Date.parse(created.metadata?.annotations?.['berth.dev/expires-at'] ?? '');
  const config = parseTaskConfig(TASK, run.configFile);
  const layout = layOut(config, { inputs: [], outputs: [], args: [], workDir, cwd: path.dirname(run.configFile) });
  const planned = planTaskPod(
    config,
    layout,
    { GREETING: 'hello' },
    {
      step: 'task',
      target: 'ctx-a',
      privileged: false,
      namespace: 'ci',
      owner: 'test-owner',
      runId,
      now: new Date(expires - TTL * 1000),
      ttlSeconds: TTL,
      image: IMAGE,
      helperImage: HELPER,
    },
  );
  assert.deepEqual(created, planned);
  assert.match(workDir, /^\/tmp\/build\/[0-9a-f]{8}$/);

  assert.deepEqual(fake.calls, [`create pod ${name}`, `create secret ${name}-params`, `delete pod ${name}`, `delete secret ${name}-params`]);
  assert.equal(fake.pods.size + fake.secrets.size, 0, 'something was left in the cluster');
  assert.ok(fake.inputs.get(name)?.length, 'nothing was streamed into the inputs container');
  assert.equal(run.connects(), 1);
});

test('a task that fails: berth exits with its exit code, says failed, and deletes what it made', { timeout: 20_000 }, async () => {
  const run = start();
  const { fake } = run;
  await eventually('the pod', () => fake.created.length > 0);
  const name = fake.firstPod();
  await fake.taskRunning(name);
  fake.exit(name, 7);
  assert.equal(await run.code, 7);
  assert.match(run.stderr.text, /^failed$/m);
  assert.doesNotMatch(run.stderr.text, /^succeeded$/m);
  assert.deepEqual(
    fake.calls.filter((c) => c.startsWith('delete')),
    [`delete pod ${name}`, `delete secret ${name}-params`],
  );
  assert.equal(fake.pods.size + fake.secrets.size, 0);
});

// gone at once, its log goes with it (the deletion is the cause to tell); still terminating, its log reads whole
for (const [how, podGone] of [
  ['gone at once', true],
  ['still terminating', false],
] as const) {
  test(`a pod deleted under a running task (${how}) is no success, though the task exited 0 (it trapped SIGTERM)`, { timeout: 20_000 }, async () => {
    const run = start();
    const { fake } = run;
    await eventually('the pod', () => fake.created.length > 0);
    const name = fake.firstPod();
    await fake.taskRunning(name);
    fake.deleteFromOutside(name, podGone);
    assert.equal(await run.code, 2, "berth's failure, not the task's 0");
    assert.match(
      run.stderr.text,
      new RegExp(`^berth task: pod ${name} was deleted while the task ran .*: its end is not its own, whatever its exit code$`, 'm'),
    );
    assert.match(run.stderr.text, /^errored$/m);
    assert.doesNotMatch(run.stderr.text, /^succeeded$/m);
    assert.equal(fake.pods.size + fake.secrets.size, 0, 'something was left in the cluster');
  });
}

for (const [what, inputs, said] of [
  ['not given', [], /^berth task: missing required input `src`: pass -i src=DIR$/m],
  [
    'a folder that does not exist',
    [{ name: 'src', dir: '/nonexistent/berth-src' }],
    /^berth task: input `src`: \/nonexistent\/berth-src does not exist \(-i src=DIR names a local folder\)$/m,
  ],
] as const) {
  test(`a missing input (${what}) is refused before the cluster is reached, let alone a pod created`, { timeout: 20_000 }, async () => {
    const run = start({ config: `platform: linux\ninputs: [{name: src}]\nrun: {path: ls}\n`, extra: { inputs: [...inputs] } });
    assert.equal(await run.code, 2);
    assert.match(run.stderr.text, said);
    assert.equal(run.connects(), 0, 'the run connected to the cluster');
    assert.deepEqual(run.fake.calls, []);
  });
}

test("an interrupt deletes the running task's pod and its Secret, and ends the run with 3", { timeout: 20_000 }, async () => {
  const abort = new AbortController();
  const run = start({ abort });
  const { fake } = run;
  await eventually('the pod', () => fake.created.length > 0);
  const name = fake.firstPod();
  await fake.taskRunning(name);
  abort.abort();
  assert.equal(await run.code, 3);
  assert.match(run.stderr.text, /^interrupted$/m);
  assert.deepEqual(
    fake.calls.filter((c) => c.startsWith('delete')),
    [`delete pod ${name}`, `delete secret ${name}-params`],
  );
  assert.equal(fake.pods.size + fake.secrets.size, 0, 'the interrupted run left its objects');
});
