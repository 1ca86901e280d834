// A plan whose steps run on different nodes: worker tags (Concourse's `tags:`) put each step's pod on a node labeled
// for it, and an artifact streams from the producer's pod on one node to the consumer's on the other, pod to pod
// (direct) and through berth, byte-identical. Through the real CLI as the user bound to the shipped task Role.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { berthCli, BUSYBOX, contextFor, kubectlOk } from '../harness/cluster.js';
import { BERTH_IMAGE } from '../incluster/recipes-env.js';
import { runCommand, setUpTask, tempTree, TASK_USER, type TaskEnv } from '../task/task-env.js';

const NODES = { near: 'berth', far: 'berth-worker' };

/** prints the node each step ran on (the downward API), so the test sees the crossing the tags asked for */
const PLAN = `plan:
  - task: make
    tags: [near]
    config:
      platform: linux
      outputs: [{ name: blob }]
      run:
        path: sh
        args: [-c, 'head -c 5242880 /dev/urandom > blob/data && echo "made $(sha256sum blob/data | cut -d" " -f1)"']
  - task: use
    tags: [far]
    input_mapping: { in: blob }
    config:
      platform: linux
      inputs: [{ name: in }]
      run:
        path: sh
        args: [-c, 'echo "used $(sha256sum in/data | cut -d" " -f1) $(wc -c < in/data)"']
`;

let t: TaskEnv;
const plan = tempTree({ 'plan.yml': PLAN });
before(async () => {
  t = await setUpTask('nodes-task');
  for (const [tag, node] of Object.entries(NODES)) await kubectlOk(['label', 'node', node, `tags.berth.dev/${tag}=true`, '--overwrite']);
});
after(async () => {
  for (const [tag, node] of Object.entries(NODES)) await kubectlOk(['label', 'node', node, `tags.berth.dev/${tag}-`]).catch(() => undefined);
  plan.remove();
  await t?.close();
});

/**
 * the node of each step's pod in the order the scheduler placed them, from its events ("Successfully assigned NS/POD
 * to NODE"; the pods are gone once the plan ends), ordered by their microsecond eventTime: a list's order is not
 */
async function nodesOfSteps(): Promise<string[]> {
  const events = JSON.parse(await kubectlOk(['get', 'events', '-n', t.namespace, '--field-selector', 'reason=Scheduled', '-o', 'json'])).items as {
    eventTime?: string;
    firstTimestamp?: string;
    message: string;
  }[];
  const at = (e: { eventTime?: string; firstTimestamp?: string }) => e.eventTime ?? e.firstTimestamp ?? '';
  return events.sort((a, b) => at(a).localeCompare(at(b))).map((e) => / to (\S+)$/.exec(e.message)?.[1] ?? e.message);
}

for (const mode of ['direct', 'through-berth']) {
  test(`--artifacts ${mode}: the step tagged near runs on ${NODES.near}, the one tagged far on ${NODES.far}, and the artifact arrives whole`, async () => {
    const before = (await nodesOfSteps()).length;
    const r = await runCommand(process.execPath, [berthCli, 'task', 'plan', 'run', join(plan.dir, 'plan.yml'), '--image', BUSYBOX, '--artifacts', mode], {
      env: t.env(),
      timeoutMs: 300_000,
    });
    assert.equal(r.code, 0, r.stderr);
    const made = /^made ([0-9a-f]{64})$/m.exec(r.stdout)?.[1];
    assert.ok(made, r.stdout);
    assert.match(r.stdout, new RegExp(`^used ${made} 5242880$`, 'm'));
    assert.deepEqual((await nodesOfSteps()).slice(before), [NODES.near, NODES.far]);
    assert.deepEqual(await t.leftovers(), []);
  });
}

test('a tag no node has: the step fails saying no node takes its pod, naming its node selector', async () => {
  const lonely = tempTree({
    'plan.yml': 'plan:\n  - task: nowhere\n    tags: [nonexistent]\n    config:\n      platform: linux\n      run: { path: "true" }\n',
  });
  try {
    const r = await runCommand(process.execPath, [berthCli, 'task', 'plan', 'run', join(lonely.dir, 'plan.yml'), '--image', BUSYBOX], {
      env: t.env({ BERTH_START_TIMEOUT: '20' }),
      timeoutMs: 120_000,
    });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /cannot be scheduled: .*its nodeSelector: tags\.berth\.dev\/nonexistent=true/);
    assert.deepEqual(await t.leftovers(), []);
  } finally {
    lonely.remove();
  }
});

test('target check --image-server: the probe image is served from a pod on one node and pulled by a pod on the other', async () => {
  const home = tempTree({});
  const env = t.env({ XDG_CONFIG_HOME: home.dir });
  const target = (args: string[]) => runCommand(process.execPath, [berthCli, 'task', 'target', ...args], { env, timeoutMs: 180_000 });
  try {
    const add = await target(['add', 'nodes', '--kubeconfig', String(env.KUBECONFIG), '--context', contextFor(TASK_USER), '-n', t.namespace]);
    assert.equal(add.code, 0, add.stderr);
    const before = (await nodesOfSteps()).length;
    const check = await target(['check', 'nodes', '--image-server', BERTH_IMAGE]);
    assert.equal(check.code, 0, check.stderr);
    const pulledOn = new RegExp(`^step images served from pods of ${BERTH_IMAGE}: node (\\S+) pulled one$`, 'm').exec(check.stdout)?.[1];
    assert.ok(pulledOn, check.stdout);
    // the image pod, then the probe pod: apart, as the probe asks the scheduler (the pull crossed the pod network)
    const [served, pulled] = (await nodesOfSteps()).slice(before);
    assert.equal(pulled, pulledOn);
    assert.notEqual(served, pulled);
    assert.deepEqual(await t.leftovers(), []);
  } finally {
    home.remove();
  }
});
