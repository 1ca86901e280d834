// What the shim tests share: a namespace bound to exactly the shipped Role for user `shim`, the two
// `docker`s (berth's link and the podman reference) and the check that berth left nothing behind.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  berthCli,
  contextFor,
  deleteNamespace,
  freshNamespace,
  kubeConfig,
  kubeconfigPath,
  kubectlOk,
  repoRoot,
  runCommand,
  waitForPod,
  type Result,
} from '../harness/cluster.js';

export const REFERENCE_DIR = join(repoRoot, 'test/e2e/shim/fixtures');
export const SHIM_USER = 'shim';
export const BERTH_LABEL = 'app.kubernetes.io/managed-by=berth';

export type Runtime = 'berth' | 'podman';

export interface ShimEnv {
  namespace: string;
  /** Folder holding the `docker` link to berth. */
  shimDir: string;
  /** Environment for a tool run with `runtime`'s docker first on PATH. */
  env(runtime: Runtime, extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** Runs a command with `runtime`'s docker first on PATH. */
  run(runtime: Runtime, cmd: string, args: string[], opts?: { input?: string | Buffer; extraEnv?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Result>;
  /** berth's pods, ConfigMaps and NetworkPolicies in the namespace (as `kind/name`). */
  leftovers(): Promise<string[]>;
  close(): Promise<void>;
}

/** Applies deploy/rbac/shim-role.yaml (optionally edited) with kubectl and binds it to user `shim`. */
export async function bindShimRole(namespace: string, edit: (yaml: string) => string = (y) => y): Promise<void> {
  const role = edit(readFileSync(join(repoRoot, 'deploy/rbac/shim-role.yaml'), 'utf8'));
  await kubectlOk(['-n', namespace, 'apply', '-f', '-'], { input: role });
  await kubectlOk(['-n', namespace, 'create', 'rolebinding', 'berth-shim', '--role', 'berth-shim', '--user', SHIM_USER]);
}

export async function setUpShim(prefix: string, opts: { edit?: (yaml: string) => string } = {}): Promise<ShimEnv> {
  const namespace = await freshNamespace(prefix);
  const shimDir = mkdtempSync(join(tmpdir(), 'berth-shim-'));
  try {
    await bindShimRole(namespace, opts.edit);
    const install = await runCommand(process.execPath, [berthCli, 'shim', 'install', shimDir]);
    if (install.code !== 0) throw new Error(`berth shim install failed: ${install.stderr}`);
  } catch (err) {
    await deleteNamespace(namespace);
    rmSync(shimDir, { recursive: true, force: true });
    throw err;
  }
  const env = (runtime: Runtime, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
    const base: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${runtime === 'berth' ? shimDir : REFERENCE_DIR}:${process.env.PATH}`,
      KUBECONFIG: kubeconfigPath(),
      BERTH_CONTEXT: contextFor(SHIM_USER),
      BERTH_NAMESPACE: namespace,
      BERTH_HELPER_IMAGE: 'localhost/berth/busybox:1',
      BERTH_OWNER: `e2e-${process.pid}`,
      KRM_FN_RUNTIME: 'docker',
      KPT_FN_RUNTIME: 'docker',
      // A berth process per call unless a test asks for the agent (the default path: agent-default.test.ts):
      // a shared agent's warm pods would be another test's leftovers.
      BERTH_SHIM_AGENT: '0',
    };
    delete base.BERTH_CONFIG;
    delete base.BERTH_VERBOSE;
    return { ...base, ...extra };
  };
  return {
    namespace,
    shimDir,
    env,
    run: (runtime, cmd, args, o = {}) => runCommand(cmd, args, { input: o.input, env: env(runtime, o.extraEnv), timeoutMs: o.timeoutMs ?? 120_000 }),
    leftovers: () => berthObjects(namespace),
    async close() {
      rmSync(shimDir, { recursive: true, force: true });
      await deleteNamespace(namespace);
    },
  };
}

export async function berthObjects(namespace: string): Promise<string[]> {
  const out = await kubectlOk(['-n', namespace, 'get', 'pods,configmaps,networkpolicies', '-l', BERTH_LABEL, '-o', 'name']);
  return out.split('\n').filter(Boolean);
}

/** A temp folder with `files` (relative path → content); removed by the returned function. */
export function tempTree(files: Record<string, string>): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'berth-krm-'));
  // mkdtemp makes it 0700: a function running as nobody must be able to read what is mounted from it.
  chmodSync(dir, 0o755);
  for (const [rel, content] of Object.entries(files)) {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Both runtimes, same command: returns [podman result, berth result]. */
export async function bothRuntimes(
  shim: ShimEnv,
  cmd: string,
  args: string[],
  opts: { input?: string | Buffer; extraEnv?: NodeJS.ProcessEnv } = {},
): Promise<[Result, Result]> {
  const reference = await shim.run('podman', cmd, args, opts);
  const berth = await shim.run('berth', cmd, args, opts);
  return [reference, berth];
}

/** A function's `config.kubernetes.io/function` annotation naming one of the local test images. */
export const functionAnnotation = (image: string) => `config.kubernetes.io/function: |\n      container:\n        image: localhost/berth/krm-${image}:1`;

/** A kustomization with a transformer and a validator of the local function images; `owner` is what the transformer sets. */
export function transformAndValidate(owner: string): Record<string, string> {
  return {
    'service.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: cart\n  labels: {team: shop}\nspec:\n  ports: [{port: 80}]\n',
    'annotate.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: annotate\n  annotations:\n    ${functionAnnotation('set-annotations')}\ndata: {owner: ${owner}}\n`,
    'validate.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: validate\n  annotations:\n    ${functionAnnotation('require-label')}\ndata: {label: team, kinds: Service}\n`,
    'kustomization.yaml': 'resources: [service.yaml]\ntransformers: [annotate.yaml]\nvalidators: [validate.yaml]\n',
  };
}

/**
 * SIGKILLs the shim agent serving `socket` and shows what it leaves: its warm pod `warmPod` ends at its own
 * deadline, `berth gc` removes the rest, and nothing of berth's is left; then the dead agent's socket files go.
 */
export async function killAgentLeavesNothing(shim: ShimEnv, socket: string, warmPod: string, deadlineMs: number): Promise<void> {
  process.kill(Number(readFileSync(`${socket}.pid`, 'utf8')), 'SIGKILL');
  const ended = await waitForPod(kubeConfig(), shim.namespace, warmPod, (p) => p.status?.phase === 'Failed', deadlineMs);
  assert.equal(ended.status?.reason, 'DeadlineExceeded');
  const gc = spawnSync(process.execPath, [berthCli, 'gc', '--kinds', 'pods,configmaps,networkpolicies'], { env: shim.env('berth'), encoding: 'utf8' });
  assert.equal(gc.status, 0, gc.stderr);
  assert.deepEqual(await shim.leftovers(), []);
  rmSync(socket, { force: true });
  rmSync(`${socket}.pid`, { force: true });
}
