// What the cache tests share: a task that appends to a file in its cache, a plan of two such steps, and
// `berth task caches` through the real CLI as the user bound to deploy/rbac/task-role.yaml.
import assert from 'node:assert/strict';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { berthCli } from '../harness/cluster.js';
import { runCommand, setUpTask, tempTree, type TaskEnv } from './task-env.js';
import type { Result } from '../harness/cluster.js';

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

/** A plan whose two steps run the same inline task: each step has its own cache. */
const STEP = `
    config:
      platform: linux
      caches: [{ path: cache }]
      run: { path: sh, args: [-ec, 'echo run >> cache/log; wc -l < cache/log'] }`;
const PLAN = `plan:
  - task: first${STEP}
  - task: second${STEP}
`;

export interface CacheJson {
  task: string;
  path: string;
  claim: string;
  size: string;
  phase: string;
  lastUsed: string;
  expiresAt: string;
  target: string;
}

export interface CachesEnv {
  t: TaskEnv;
  /** A folder with a/task.yml and b/task.yml (the same text: two tasks) and plan.yml. */
  dir: string;
  /** The real paths of a/task.yml and b/task.yml: their caches' task identity. */
  taskA: string;
  taskB: string;
  run(task: string, env: NodeJS.ProcessEnv): Promise<Result>;
  caches(args: string[]): Promise<Result>;
  listed(): Promise<CacheJson[]>;
  close(): Promise<void>;
}

export async function setUpCaches(prefix: string): Promise<CachesEnv> {
  const files = tempTree({ 'a/task.yml': APPEND, 'b/task.yml': APPEND, 'plan.yml': PLAN });
  const t = await setUpTask(prefix);
  const caches = (args: string[]) => runCommand(process.execPath, [berthCli, 'task', 'caches', ...args], { env: t.env() });
  return {
    t,
    dir: files.dir,
    taskA: realpathSync(join(files.dir, 'a/task.yml')),
    taskB: realpathSync(join(files.dir, 'b/task.yml')),
    run: (task, env) => t.run(['-c', task], { extraEnv: env }),
    caches,
    async listed() {
      const r = await caches(['ls', '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as CacheJson[];
    },
    async close() {
      await t.close();
      files.remove();
    },
  };
}
