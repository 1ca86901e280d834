// Task caches through the real `berth` CLI, as the user bound to exactly deploy/rbac/task-role.yaml: each plan
// step has its own cache, a cache in use by a running task is not deleted, and `berth gc` deletes a cache whose
// expiry passed. (caches.test.ts: runs of a task file, caches ls, caches rm.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthCli, BUSYBOX, kubectl } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import { setUpCaches, type CachesEnv } from './caches-env.js';
import { runCommand } from './task-env.js';

describe('berth task caches: plans, use, expiry', () => {
  let c: CachesEnv;
  before(async () => {
    c = await setUpCaches('caches-life');
  });
  after(async () => {
    await c?.close();
  });

  it('a plan step has its own cache, kept for the next run of the plan', async () => {
    const plan = () =>
      runCommand(process.execPath, [berthCli, 'task', 'plan', 'run', join(c.dir, 'plan.yml'), '--image', BUSYBOX], { env: c.t.env(), timeoutMs: 180_000 });
    const once = await plan();
    assert.equal(once.code, 0, once.stderr);
    assert.equal(once.stdout, '1\n1\n', 'each step starts with its own empty cache');
    const twice = await plan();
    assert.equal(twice.code, 0, twice.stderr);
    assert.equal(twice.stdout, '2\n2\n');
    const steps = (await c.listed()).map((e) => e.task).filter((task) => task.includes('plan.yml'));
    assert.deepEqual(steps, [`${c.dir}/plan.yml#first`, `${c.dir}/plan.yml#second`]);
    const rm = await c.caches(['rm', '--task', `${join(c.dir, 'plan.yml')}#first`]);
    assert.equal(rm.code, 0, rm.stderr);
    assert.deepEqual(
      (await c.listed()).map((e) => e.task).filter((task) => task.includes('plan.yml')),
      [`${c.dir}/plan.yml#second`],
    );
    const rest = await c.caches(['rm', '--task', `${join(c.dir, 'plan.yml')}#second`]);
    assert.equal(rest.code, 0, rest.stderr);
  });

  it('caches rm refuses a cache in use by a running task and deletes nothing', async () => {
    const child = spawn(process.execPath, [berthCli, 'task', 'run', '-c', c.taskA, '--image', BUSYBOX], {
      env: c.t.env({ LINE: 'busy', SLEEP: '600' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      // the task's first run: its claim is provisioned first. Once seen to take over 60 s: the failure says where
      // the task stood
      await eventually('the task prints its cache', () => stdout.includes('busy\n'), { timeoutMs: 120_000 }).catch(async (err: Error) => {
        const cluster = await kubectl(['get', 'pvc,pods', '-n', c.t.namespace, '-o', 'wide']);
        throw new Error(`${err.message}\ntask stderr: ${stderr}\n${cluster.stdout}${cluster.stderr}`);
      });
      const refused = await c.caches(['rm', '--all']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /the cache cache of .*a\/task\.yml \(claim .*\) is in use by pod task-[0-9a-f]{8}: nothing was deleted/);
      assert.deepEqual(
        (await c.listed()).map((e) => e.task),
        [c.taskA],
        'the cache is still there',
      );
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 3);
  });

  it('berth gc deletes a cache whose expiry passed (BERTH_TASK_CACHE_TTL), not the others', async () => {
    const short = await c.run(c.taskB, { LINE: 'b3', BERTH_TASK_CACHE_TTL: '1s' });
    assert.equal(short.code, 0, short.stderr);
    const claimB = (await c.listed()).find((e) => e.task === c.taskB)!.claim;
    const gc = await eventually(
      'berth gc deletes the expired cache',
      async () => {
        const r = await runCommand(
          process.execPath,
          [berthCli, 'gc', '--kinds', 'persistentvolumeclaims', '--context', c.t.env().BERTH_CONTEXT!, '-n', c.t.namespace],
          { env: c.t.env() },
        );
        return r.stdout.includes(claimB) ? r : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    assert.match(gc.stdout, new RegExp(`PersistentVolumeClaim/${claimB} \\(namespace ${c.t.namespace}\\) deleted`));
    assert.deepEqual(
      (await c.listed()).map((e) => e.task),
      [c.taskA],
    );
  });
});
