// A worker lost in the middle of a run, as a machine that loses power: a function call (the docker shim), a berth
// serve container and a task step, each running on the worker, each fail saying which node went and that the
// container's state is unknown, never a success; berth serve keeps serving its container on the other node and shows
// the lost one exited 255 with the reason; once the worker is back, nothing berth created is left.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { berthCli, BUSYBOX, freshNamespace, kubectlOk, runCommand, stateDir, type Result } from '../harness/cluster.js';
import { bindServeRole, type DockerEngine, startBerth, stopAndCheckLeftovers } from '../serve/serve-env.js';
import { setUpShim, tempTree, type ShimEnv } from '../shim/shim-env.js';
import { setUpTask, type TaskEnv } from '../task/task-env.js';
import { eventually } from '../../util/eventually.js';

const WORKER = 'berth-worker';
const SLEEP_INPUT =
  'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {seconds: "600"}\n';
const PLAN = `plan:
  - task: long
    tags: [lost]
    config:
      platform: linux
      run: { path: sh, args: [-c, 'echo step running; sleep 600'] }
`;

let shim: ShimEnv;
let task: TaskEnv;
let engine: DockerEngine;
let serveNamespace = '';
const files = tempTree({ 'plan.yml': PLAN, 'on-worker.yaml': JSON.stringify({ spec: { nodeSelector: { 'kubernetes.io/hostname': WORKER } } }) });
const prefix = `nl${process.pid}`;

before(async () => {
  shim = await setUpShim('nodes-loss-fn');
  task = await setUpTask('nodes-loss-task');
  serveNamespace = await freshNamespace('nodes-loss-serve');
  await bindServeRole(serveNamespace, 'shim');
  engine = await startBerth(serveNamespace, `${prefix}-serve`, { user: 'shim' });
  await engine.dockerOk(['pull', BUSYBOX]);
  await kubectlOk(['label', 'node', WORKER, 'tags.berth.dev/lost=true', '--overwrite']);
});

after(async () => {
  await kubectlOk(['label', 'node', WORKER, 'tags.berth.dev/lost-']).catch(() => undefined);
  try {
    for (const n of ['lost', 'kept', 'gone']) await engine?.docker(['rm', '-f', `${prefix}-${n}`]);
    if (engine) await stopAndCheckLeftovers(engine, serveNamespace, `${prefix}-serve`);
  } finally {
    files.remove();
    await shim?.close();
    await task?.close();
  }
});

/** A command left running until `ready` shows in its output; its end, with the time it ended (wrapped: a promise resolved with a promise would wait for it). */
function running(cmd: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp, input?: string): Promise<{ ended: Promise<Result & { at: number }> }> {
  const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const done = new Promise<Result & { at: number }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr, at: Date.now() })));
  child.stdin.end(input ?? '');
  return new Promise((resolve, reject) => {
    const check = () => ready.test(stdout + stderr) && resolve({ ended: done });
    child.stdout.setEncoding('utf8').on('data', (d: string) => ((stdout += d), check()));
    child.stderr.setEncoding('utf8').on('data', (d: string) => ((stderr += d), check()));
    void done.then((r) => reject(new Error(`${cmd} ${args.join(' ')} ended before it ran (${r.code}): ${r.stdout}${r.stderr}`)));
  });
}

/** A function call (the docker shim), a task step and a berth serve container named `container`, each running on the worker. */
async function runningOnWorker(container: string) {
  const fn = await running(
    'docker',
    ['run', '--rm', '-i', 'localhost/berth/krm-sleep:1'],
    shim.env('berth', { BERTH_POD_TEMPLATE: join(files.dir, 'on-worker.yaml') }),
    /sleep: sleeping/,
    SLEEP_INPUT,
  );
  const step = await running(process.execPath, [berthCli, 'task', 'plan', 'run', join(files.dir, 'plan.yml'), '--image', BUSYBOX], task.env(), /step running/);
  await engine.dockerOk(['run', '-d', '--name', container, '--label', `berth.dev/node-selector=kubernetes.io/hostname=${WORKER}`, BUSYBOX, 'sleep', '3600']);
  return { fn, step };
}

const berthPods = async (namespace: string) =>
  (await kubectlOk(['get', 'pods', '-n', namespace, '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'name'])).split('\n').filter(Boolean);

test('the worker lost mid-run: each face fails naming the node, serve keeps serving, nothing is left once it returns', { timeout: 480_000 }, async () => {
  const { fn, step } = await runningOnWorker(`${prefix}-lost`);
  await engine.dockerOk(['run', '-d', '--name', `${prefix}-kept`, '--label', 'berth.dev/node-selector=kubernetes.io/hostname=berth', BUSYBOX, 'sleep', '3600']);
  const waited = engine.docker(['wait', `${prefix}-lost`], { timeoutMs: 300_000 }).then((r) => ({ ...r, at: Date.now() }));

  const stoppedAt = Date.now();
  const stop = await runCommand(process.execPath, [berthCli, 'dev-cluster', 'node', 'stop', WORKER, '--state-dir', stateDir()]);
  assert.equal(stop.code, 0, stop.stderr);
  const [fnEnd, stepEnd, waitEnd] = await Promise.all([fn.ended, step.ended, waited]);
  const after = (r: { at: number }) => `${((r.at - stoppedAt) / 1000).toFixed(0)} s`;
  console.log(
    `node-loss: the worker stopped; the function call failed after ${after(fnEnd)}, the task step after ${after(stepEnd)}, docker wait returned after ${after(waitEnd)}`,
  );

  const named = new RegExp(`node ${WORKER} stopped reporting to the API server`);
  assert.notEqual(fnEnd.code, 0, 'the function call is no success');
  assert.match(fnEnd.stderr, named);
  assert.notEqual(stepEnd.code, 0, 'the task step is no success');
  assert.match(stepEnd.stderr, named);
  assert.equal(waitEnd.code, 0, waitEnd.stderr);
  assert.equal(waitEnd.stdout.trim(), '255', 'docker wait: exited 255, as dockerd shows a container whose machine went down');
  assert.match(await engine.dockerOk(['ps', '-a', '--filter', `name=${prefix}-lost`, '--format', '{{.Status}}']), /^Exited \(255\)/);
  assert.match(await engine.dockerOk(['inspect', '-f', '{{.State.Error}}', `${prefix}-lost`]), named);
  // serve keeps serving: the container on the first node answers, a new one runs
  assert.equal(await engine.dockerOk(['exec', `${prefix}-kept`, 'echo', 'still here']), 'still here\n');
  const fresh = await engine.docker(['run', '--rm', '--label', 'berth.dev/node-selector=kubernetes.io/hostname=berth', BUSYBOX, 'echo', 'new run']);
  assert.equal(fresh.stdout, 'new run\n', fresh.stderr);
  const rm = await engine.docker(['rm', `${prefix}-lost`]);
  assert.equal(rm.code, 0, `docker rm of the lost container does not wait for its node: ${rm.stderr}`);

  const start = await runCommand(process.execPath, [berthCli, 'dev-cluster', 'node', 'start', WORKER, '--state-dir', stateDir()], { timeoutMs: 180_000 });
  assert.equal(start.code, 0, start.stderr);
  // the pods berth deleted while the node was gone go once its kubelet confirms; none outlives its return
  for (const namespace of [shim.namespace, task.namespace]) {
    await eventually(`no pod of berth left in ${namespace}`, async () => (await berthPods(namespace)).length === 0, { timeoutMs: 90_000 });
  }
  await eventually(
    `no pod of the lost container left in ${serveNamespace}`,
    async () => !(await kubectlOk(['get', 'pods', '-n', serveNamespace, '-o', 'jsonpath={.items[*].spec.nodeName}'])).includes(WORKER),
    { timeoutMs: 90_000 },
  );
  assert.deepEqual(await shim.leftovers(), []);
  assert.deepEqual(await task.leftovers(), []);
});

test(
  'the lost worker deleted from the cluster (kubectl delete node): each face fails naming the node, and nothing is left before it returns',
  { timeout: 480_000 },
  async () => {
    const { fn, step } = await runningOnWorker(`${prefix}-gone`);
    await eventually(
      `${prefix}-gone running`,
      async () => (await engine.dockerOk(['inspect', '-f', '{{.State.Status}}', `${prefix}-gone`])).trim() === 'running',
      {
        timeoutMs: 60_000,
      },
    );
    const waited = engine.docker(['wait', `${prefix}-gone`], { timeoutMs: 300_000 }).then((r) => ({ ...r, at: Date.now() }));

    const stoppedAt = Date.now();
    const stop = await runCommand(process.execPath, [berthCli, 'dev-cluster', 'node', 'stop', WORKER, '--state-dir', stateDir()]);
    assert.equal(stop.code, 0, stop.stderr);
    // the operator gives up on the machine: its pods are the pod garbage collector's from now on
    await kubectlOk(['delete', 'node', WORKER, '--wait=true']);
    const [fnEnd, stepEnd, waitEnd] = await Promise.all([fn.ended, step.ended, waited]);
    const after = (r: { at: number }) => `${((r.at - stoppedAt) / 1000).toFixed(0)} s`;
    console.log(
      `node-deleted: the worker stopped and deleted; the function call failed after ${after(fnEnd)}, the task step after ${after(stepEnd)}, docker wait returned after ${after(waitEnd)}`,
    );

    // deleted before the node lifecycle controller marked it lost, or after: either sentence names the node
    const named = new RegExp(`node ${WORKER} (was deleted from the cluster|stopped reporting to the API server)`);
    assert.notEqual(fnEnd.code, 0, 'the function call is no success');
    assert.match(fnEnd.stderr, named);
    assert.notEqual(stepEnd.code, 0, 'the task step is no success');
    assert.match(stepEnd.stderr, named);
    assert.equal(waitEnd.stdout.trim(), '255', `docker wait: exited 255, as dockerd shows a container whose machine went down (${waitEnd.stderr})`);
    assert.match(await engine.dockerOk(['inspect', '-f', '{{.State.Error}}', `${prefix}-gone`]), named);
    assert.equal((await engine.docker(['rm', `${prefix}-gone`])).code, 0);

    // no node to come back: what berth made goes with the node object, not with the node's return
    for (const namespace of [shim.namespace, task.namespace, serveNamespace]) {
      await eventually(
        `no pod of berth on ${WORKER} in ${namespace}`,
        async () => !(await kubectlOk(['get', 'pods', '-n', namespace, '-o', 'wide'])).includes(WORKER),
        {
          timeoutMs: 120_000,
        },
      );
    }
    assert.deepEqual(await shim.leftovers(), []);
    assert.deepEqual(await task.leftovers(), []);

    // the machine returns: its kubelet registers the node again, with its pod range, and pods run there
    const start = await runCommand(process.execPath, [berthCli, 'dev-cluster', 'node', 'start', WORKER, '--state-dir', stateDir()], { timeoutMs: 180_000 });
    assert.equal(start.code, 0, start.stderr);
    await kubectlOk(['label', 'node', WORKER, 'tags.berth.dev/lost=true', '--overwrite']);
    const back = await engine.docker(['run', '--rm', '--label', `berth.dev/node-selector=kubernetes.io/hostname=${WORKER}`, BUSYBOX, 'echo', 'back']);
    assert.equal(back.stdout, 'back\n', back.stderr);
  },
);
