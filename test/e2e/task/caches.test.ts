// Task caches through the real `berth` CLI, as the user bound to exactly deploy/rbac/task-role.yaml: a cache
// keeps what a task wrote for the next run of the same task file (also when the task failed, as in
// Concourse), another task file has its own, `caches ls` lists them, `caches rm` empties them, a cache in use
// is not deleted, and `berth gc` deletes a cache whose expiry passed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthCli, BUSYBOX, kubectlOk } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import { runCommand, setUpTask, tempTree, type TaskEnv } from './task-env.js';

/** Appends $LINE to cache/log and prints the log; fails when $FAIL is set (a shell variable overrides the param). */
const APPEND = `platform: linux
image_resource: { type: registry-image, source: { repository: busybox } }
caches:
  - path: cache
params:
  LINE: line
  FAIL: ""
  SLEEP: "0"
run:
  path: sh
  args: [-ec, 'echo "$LINE" >> cache/log; cat cache/log; sleep "$SLEEP"; test -z "$FAIL"']
`;

interface CacheJson {
  task: string;
  path: string;
  claim: string;
  size: string;
  phase: string;
  lastUsed: string;
  expiresAt: string;
  target: string;
}

describe('berth task caches', () => {
  let t: TaskEnv;
  const files = tempTree({ 'a/task.yml': APPEND, 'b/task.yml': APPEND });
  const taskA = realpathSync(join(files.dir, 'a/task.yml'));
  const taskB = realpathSync(join(files.dir, 'b/task.yml'));
  const run = (task: string, env: NodeJS.ProcessEnv) => t.run(['-c', task], { extraEnv: env });
  const caches = (args: string[], extra: NodeJS.ProcessEnv = {}) => runCommand(process.execPath, [berthCli, 'task', 'caches', ...args], { env: t.env(extra) });
  const listed = async (): Promise<CacheJson[]> => {
    const r = await caches(['ls', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as CacheJson[];
  };

  before(async () => {
    t = await setUpTask('caches');
  });
  after(async () => {
    await t?.close();
    files.remove();
  });

  it('a second run of the task finds what the first wrote, also when it fails; another task file starts empty', async () => {
    const first = await run(taskA, { LINE: 'one' });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, 'one\n', 'the cache starts empty');
    const failed = await run(taskA, { LINE: 'two', FAIL: 'yes' });
    assert.equal(failed.code, 1, failed.stderr);
    assert.equal(failed.stdout, 'one\ntwo\n');
    const other = await run(taskB, { LINE: 'b' });
    assert.equal(other.code, 0, other.stderr);
    assert.equal(other.stdout, 'b\n', 'a different task file has a cache of its own');
    assert.deepEqual(await t.leftovers(), [], 'the pods and Secrets go; the caches stay');
  });

  it('what a failed task wrote in its cache is there for the next run', async () => {
    const next = await run(taskA, { LINE: 'three' });
    assert.equal(next.code, 0, next.stderr);
    assert.equal(next.stdout, 'one\ntwo\nthree\n');
  });

  it('caches ls: task, path, claim, size and last use, as a table and as JSON', async () => {
    const entries = await listed();
    assert.deepEqual(entries.map((e) => [e.task, e.path, e.size, e.phase]), [
      [taskA, 'cache', '1Gi', 'Bound'],
      [taskB, 'cache', '1Gi', 'Bound'],
    ]);
    const a = entries[0];
    assert.match(a.claim, /^task-cache-task-[0-9a-f]{16}$/);
    assert.notEqual(a.claim, entries[1].claim);
    assert.equal(Date.parse(a.expiresAt) - Date.parse(a.lastUsed), 7 * 24 * 3600 * 1000, 'expires 7 days after its last use');
    const table = await caches(['ls']);
    assert.equal(table.code, 0, table.stderr);
    const [head, ...rows] = table.stdout.trimEnd().split('\n');
    assert.match(head, /^TASK +PATH +CLAIM +SIZE +LAST USED$/);
    assert.equal(rows.length, 2);
    assert.match(rows[0], new RegExp(`^${taskA} +cache +${a.claim} +1Gi +\\d+s ago$`));
    // The claim as kubectl sees it: berth's labels, ReadWriteOnce.
    const pvc = JSON.parse(await kubectlOk(['-n', t.namespace, 'get', 'pvc', a.claim, '-o', 'json'])) as { metadata: { labels: Record<string, string> }; spec: { accessModes: string[] } };
    assert.equal(pvc.metadata.labels['app.kubernetes.io/managed-by'], 'berth');
    assert.equal(pvc.metadata.labels['berth.dev/cache-path'], 'cache');
    assert.deepEqual(pvc.spec.accessModes, ['ReadWriteOnce']);
  });

  it('caches rm: nothing matching, or nothing named, is an error', async () => {
    const none = await caches(['rm', '--path', 'nope']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no cache of path nope on target/);
    const vague = await caches(['rm']);
    assert.equal(vague.code, 1);
    assert.match(vague.stderr, /--task FILE, --path PATH .* or --all/);
  });

  it("caches rm --task empties that task's cache only", async () => {
    const rm = await caches(['rm', '--task', join(files.dir, 'a/task.yml')]);
    assert.equal(rm.code, 0, rm.stderr);
    assert.match(rm.stdout, /^deleted cache cache of .*a\/task\.yml \(claim task-cache-task-[0-9a-f]{16}\)$/m);
    assert.deepEqual((await listed()).map((e) => e.task), [taskB], 'the other task keeps its cache');
    const fresh = await run(taskA, { LINE: 'again' });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(fresh.stdout, 'again\n', 'the next run starts with an empty cache');
  });

  it('caches rm refuses a cache in use by a running task and deletes nothing', async () => {
    const child = spawn(process.execPath, [berthCli, 'task', 'run', '-c', taskA, '--image', BUSYBOX], { env: t.env({ LINE: 'busy', SLEEP: '600' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await eventually('the task prints its cache', () => stdout.includes('busy\n'), { timeoutMs: 60_000 });
      const refused = await caches(['rm', '--all']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /the cache cache of .*a\/task\.yml \(claim .*\) is in use by pod task-[0-9a-f]{8}: nothing was deleted/);
      assert.equal((await listed()).length, 2);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 3);
  });

  it('berth gc deletes a cache whose expiry passed (BERTH_TASK_CACHE_TTL), not the others', async () => {
    const short = await run(taskB, { LINE: 'b3', BERTH_TASK_CACHE_TTL: '1s' });
    assert.equal(short.code, 0, short.stderr);
    const claimB = (await listed()).find((e) => e.task === taskB)!.claim;
    const gc = await eventually(
      'berth gc deletes the expired cache',
      async () => {
        const r = await runCommand(process.execPath, [berthCli, 'gc', '--kinds', 'persistentvolumeclaims', '--context', t.env().BERTH_CONTEXT!, '-n', t.namespace], { env: t.env() });
        return r.stdout.includes(claimB) ? r : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    assert.match(gc.stdout, new RegExp(`PersistentVolumeClaim/${claimB} \\(namespace ${t.namespace}\\) deleted`));
    assert.deepEqual((await listed()).map((e) => e.task), [taskA]);
  });
});
