// What the berth task tests share: a namespace bound to exactly deploy/rbac/task-role.yaml for user
// `shim`, `berth task run` through the real CLI as that user, and the check that nothing was left behind.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  berthCli,
  BUSYBOX,
  contextFor,
  deleteNamespace,
  freshNamespace,
  kubeconfigPath,
  kubectlOk,
  repoRoot,
  runCommand,
  servesSplitLogs,
  type Result,
} from '../harness/cluster.js';

export const FIXTURES = join(repoRoot, 'test/e2e/task/fixtures');
export const TASK_USER = 'shim';

export interface TaskEnv {
  namespace: string;
  env(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** `berth task run ARGS` as the user bound to the shipped Role, with the local busybox image. */
  run(args: string[], opts?: { extraEnv?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; taskImage?: boolean }): Promise<Result>;
  /** Everything of berth's in the namespace: pods, Secrets, ConfigMaps (as kind/name). */
  leftovers(): Promise<string[]>;
  close(): Promise<void>;
}

export async function setUpTask(prefix: string): Promise<TaskEnv> {
  const namespace = await freshNamespace(prefix);
  try {
    await kubectlOk(['-n', namespace, 'apply', '-f', '-'], { input: readFileSync(join(repoRoot, 'deploy/rbac/task-role.yaml'), 'utf8') });
    await kubectlOk(['-n', namespace, 'create', 'rolebinding', 'berth-task', '--role', 'berth-task', '--user', TASK_USER]);
  } catch (err) {
    await deleteNamespace(namespace);
    throw err;
  }
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
    const base: NodeJS.ProcessEnv = {
      ...process.env,
      KUBECONFIG: kubeconfigPath(),
      BERTH_CONTEXT: contextFor(TASK_USER),
      BERTH_NAMESPACE: namespace,
      BERTH_HELPER_IMAGE: BUSYBOX,
      BERTH_OWNER: `e2e-${process.pid}`,
    };
    delete base.BERTH_CONFIG;
    return { ...base, ...extra };
  };
  return {
    namespace,
    env,
    // taskImage: run with the task's own image_resource instead of --image localhost/berth/busybox:1.
    run: (args, o = {}) =>
      runIn(o.cwd ?? FIXTURES, [berthCli, 'task', 'run', ...(o.taskImage ? args : withImage(args))], env(o.extraEnv), o.timeoutMs ?? 120_000),
    async leftovers() {
      const out = await kubectlOk(['-n', namespace, 'get', 'pods,secrets,configmaps', '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'name']);
      return out.split('\n').filter(Boolean);
    },
    close: () => deleteNamespace(namespace),
  };
}

/** `--image` goes before a `--` (the rest are the task's args). */
function withImage(args: string[]): string[] {
  const dash = args.indexOf('--');
  const head = dash < 0 ? args : args.slice(0, dash);
  const tail = dash < 0 ? [] : args.slice(dash);
  return [...head, ...(head.includes('--image') ? [] : ['--image', BUSYBOX]), ...tail];
}

function runIn(cwd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`berth ${args.slice(1).join(' ')} did not end within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * A task's stdout in a form two runs can be compared in. Where the cluster merges the log (a stock one), the task's
 * stderr lines are in it too, and their order against its stdout lines is the container runtime's, which reads the
 * two pipes apart: each line still comes once, so the lines are compared sorted.
 */
export function comparableOutput(stdout: string): string {
  return servesSplitLogs() ? stdout : stdout.split('\n').sort().join('\n');
}

/** A temp folder with `files` (relative path → content, or [content, mode]). */
export function tempTree(files: Record<string, string | [string, number]>): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'berth-task-'));
  chmodSync(dir, 0o755);
  for (const [rel, spec] of Object.entries(files)) {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    const [content, mode] = typeof spec === 'string' ? [spec, 0o644] : spec;
    writeFileSync(path, content, { mode });
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export { runCommand };
