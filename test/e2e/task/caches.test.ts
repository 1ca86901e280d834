// Task caches through the real `berth` CLI, as the user bound to exactly deploy/rbac/task-role.yaml: a cache
// keeps what a task wrote for the next run of the same task file (also when the task failed, as in
// Concourse), another task file has its own, `caches ls` lists them, `caches rm` empties them.
// (caches-life.test.ts: plan steps, a cache in use, expiry and berth gc.)
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubectlOk } from '../harness/cluster.js';
import { setUpCaches, type CachesEnv } from './caches-env.js';

describe('berth task caches', () => {
  let c: CachesEnv;
  before(async () => {
    c = await setUpCaches('caches');
  });
  after(async () => {
    await c?.close();
  });

  it('a second run of the task finds what the first wrote, also when it fails; another task file starts empty', async () => {
    const first = await c.run(c.taskA, { LINE: 'one' });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, 'one\n', 'the cache starts empty');
    const failed = await c.run(c.taskA, { LINE: 'two', FAIL: 'yes' });
    assert.equal(failed.code, 1, failed.stderr);
    assert.equal(failed.stdout, 'one\ntwo\n');
    const other = await c.run(c.taskB, { LINE: 'b' });
    assert.equal(other.code, 0, other.stderr);
    assert.equal(other.stdout, 'b\n', 'a different task file has a cache of its own');
    assert.deepEqual(await c.t.leftovers(), [], 'the pods and Secrets go; the caches stay');
  });

  it('what a failed task wrote in its cache is there for the next run', async () => {
    const next = await c.run(c.taskA, { LINE: 'three' });
    assert.equal(next.code, 0, next.stderr);
    assert.equal(next.stdout, 'one\ntwo\nthree\n');
  });

  it('caches ls: task, path, claim, size and last use, as a table and as JSON', async () => {
    const entries = await c.listed();
    assert.deepEqual(
      entries.map((e) => [e.task, e.path, e.size, e.phase]),
      [
        [c.taskA, 'cache', '1Gi', 'Bound'],
        [c.taskB, 'cache', '1Gi', 'Bound'],
      ],
    );
    const a = entries[0];
    assert.match(a.claim, /^task-cache-task-[0-9a-f]{16}$/);
    assert.notEqual(a.claim, entries[1].claim);
    assert.equal(Date.parse(a.expiresAt) - Date.parse(a.lastUsed), 7 * 24 * 3600 * 1000, 'expires 7 days after its last use');
    const table = await c.caches(['ls']);
    assert.equal(table.code, 0, table.stderr);
    const [head, ...rows] = table.stdout.trimEnd().split('\n');
    assert.match(head, /^TASK +PATH +CLAIM +SIZE +LAST USED$/);
    assert.equal(rows.length, 2);
    assert.match(rows[0], new RegExp(`^${c.taskA} +cache +${a.claim} +1Gi +\\d+s ago$`));
    // The claim as kubectl sees it: berth's labels, ReadWriteOnce.
    const pvc = JSON.parse(await kubectlOk(['-n', c.t.namespace, 'get', 'pvc', a.claim, '-o', 'json'])) as {
      metadata: { labels: Record<string, string> };
      spec: { accessModes: string[] };
    };
    assert.equal(pvc.metadata.labels['app.kubernetes.io/managed-by'], 'berth');
    assert.equal(pvc.metadata.labels['berth.dev/cache-path'], 'cache');
    assert.deepEqual(pvc.spec.accessModes, ['ReadWriteOnce']);
  });

  it('caches rm: nothing matching, or nothing named, is an error', async () => {
    const none = await c.caches(['rm', '--path', 'nope']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no cache of path nope on target/);
    const vague = await c.caches(['rm']);
    assert.equal(vague.code, 1);
    assert.match(vague.stderr, /--task FILE, --path PATH .* or --all/);
  });

  it("caches rm --task empties that task's cache only", async () => {
    const rm = await c.caches(['rm', '--task', join(c.dir, 'a/task.yml')]);
    assert.equal(rm.code, 0, rm.stderr);
    assert.match(rm.stdout, /^deleted cache cache of .*a\/task\.yml \(claim task-cache-task-[0-9a-f]{16}\)$/m);
    assert.deepEqual(
      (await c.listed()).map((e) => e.task),
      [c.taskB],
      'the other task keeps its cache',
    );
    const fresh = await c.run(c.taskA, { LINE: 'again' });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(fresh.stdout, 'again\n', 'the next run starts with an empty cache');
  });
});
