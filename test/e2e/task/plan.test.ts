// berth task plan run through the real CLI, as the user bound to exactly deploy/rbac/task-role.yaml.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthCli, BUSYBOX, kubectlOk } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import { FIXTURES, runCommand, setUpTask, tempTree, type TaskEnv } from './task-env.js';

describe('berth task plan run', () => {
  let t: TaskEnv;
  const plan = (args: string[]) =>
    runCommand(process.execPath, [berthCli, 'task', 'plan', 'run', ...args, '--image', BUSYBOX], { env: t.env(), timeoutMs: 180_000 });
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

  it("a task's own exit 3 is a failed step, not an interrupt: on_failure, ensure and -o run, berth exits 3 because the task did", async () => {
    const out = tempTree({});
    try {
      const r = await plan([join(FIXTURES, 'plan-own-exit-3.yml'), '-o', `report=${out.dir}/report`]);
      assert.equal(r.code, 3, r.stderr);
      assert.equal(r.stdout, 'exiting 3\non_failure ran\nensure ran\n');
      assert.equal(readFileSync(join(out.dir, 'report/summary'), 'utf8'), 'partial\n', 'the -o folder is written');
      assert.match(r.stderr, /^failed$/m);
      assert.doesNotMatch(r.stderr, /interrupted/);
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      out.remove();
    }
  });

  /** `berth task plan run FILE` running, its output as it comes. */
  const startPlan = (file: string) => {
    const child = spawn(process.execPath, [berthCli, 'task', 'plan', 'run', join(FIXTURES, file), '--image', BUSYBOX], {
      env: t.env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = { stdout: '', stderr: '' };
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out.stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out.stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { child, out, exited };
  };

  it('SIGTERM mid-plan: the running step is deleted, then its ensure hook runs (not on_failure); exit 3, nothing left', async () => {
    const { child, out, exited } = startPlan('plan-interrupt.yml');
    await eventually('the step prints started', () => out.stdout.includes('started\n'), { timeoutMs: 90_000 });
    child.kill('SIGTERM');
    assert.equal(await exited, 3, out.stderr);
    assert.equal(out.stdout, 'started\nensure ran\n');
    assert.match(out.stderr, /^task cleanup$/m);
    assert.match(out.stderr, /interrupted\n$/);
    assert.deepEqual(await t.leftovers(), []);
  });

  it("a second signal while ensure hooks run after an interrupt: berth exits at once; the hook's pod is left, named, berth's and expiring; berth gc removes it", async () => {
    const { child, out, exited } = startPlan('plan-interrupt-slow-ensure.yml');
    await eventually('the step prints started', () => out.stdout.includes('started\n'), { timeoutMs: 90_000 });
    child.kill('SIGTERM');
    await eventually('the ensure hook runs after the interrupt', () => out.stdout.includes('ensure started\n'), { timeoutMs: 90_000 });
    const signalled = Date.now();
    child.kill('SIGINT');
    assert.equal(await exited, 3, out.stderr);
    assert.ok(Date.now() - signalled < 5_000, `berth exited at once: ${out.stderr}`);
    const said =
      /^berth task: interrupted again: exiting immediately; left (pod\/task-[0-9a-f]{8}) in namespace (\S+): each expires by its deadline \(BERTH_TTL\) and `berth gc` removes it$/m.exec(
        out.stderr,
      );
    assert.ok(said, `one line names the ensure hook's pod (the first step's is gone): ${out.stderr}`);
    assert.equal(said[2], t.namespace);
    const pod = JSON.parse(await kubectlOk(['-n', t.namespace, 'get', said[1], '-o', 'json'])) as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: { activeDeadlineSeconds?: number };
    };
    assert.equal(pod.metadata.labels['app.kubernetes.io/managed-by'], 'berth');
    assert.equal(pod.metadata.labels['berth.dev/step'], 'slow-cleanup');
    assert.ok(pod.metadata.labels['berth.dev/owner']);
    assert.ok(Date.parse(pod.metadata.annotations['berth.dev/expires-at']) > Date.now(), 'it expires');
    assert.ok((pod.spec.activeDeadlineSeconds ?? 0) > 0, 'it has a deadline');
    const gc = await runCommand(process.execPath, [berthCli, 'gc', '--all', '--kinds', 'pods', '-n', t.namespace, '--context', String(t.env().BERTH_CONTEXT)], {
      env: t.env(),
    });
    assert.equal(gc.code, 0, gc.stderr);
    assert.match(gc.stdout, new RegExp(`^${said[1]} \\(namespace ${t.namespace}\\) deleted$`, 'im'));
    await eventually('berth gc --all removed what was left', async () => (await t.leftovers()).length === 0, { timeoutMs: 60_000 });
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
