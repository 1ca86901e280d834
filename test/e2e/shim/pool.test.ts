// Warm pods in the shim agent: the second call of a plan is served by a pod started for it; a pod goes to one
// call only, only for its exact plan (one env value or one byte of a mounted file makes another plan), never
// when its process died; `pool drain` deletes them at once, and after a SIGKILLed agent their deadline and
// `berth gc` do. kustomize through the pool prints what podman prints, the second build served warm.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { berthCli, kubectlOk, runCommand } from '../harness/cluster.js';
import { BERTH_LABEL, killAgentLeavesNothing, setUpShim, tempTree, transformAndValidate, type ShimEnv } from './shim-env.js';

const ECHO = 'localhost/berth/krm-echo:1';
const LIST = 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n';
const PIPELINE = transformAndValidate('pool');

let shim: ShimEnv;
const socketDir = mkdtempSync(join(tmpdir(), 'berth-pool-'));
const socket = join(socketDir, 'agent.sock');
// One warm pod per plan, and no more for a plan called in a burst, keeps the counts of the tests exact (the default keeps two, up to eight).
const agentEnv = {
  BERTH_SHIM_AGENT: '1',
  BERTH_SHIM_AGENT_SOCKET: socket,
  BERTH_TRACE: '1',
  BERTH_SHIM_POOL_IDLE: '120',
  BERTH_SHIM_POOL_SIZE: '1',
  BERTH_SHIM_POOL_BURST: '1',
};

function stopAgent(signal: NodeJS.Signals): void {
  const pidFile = `${socket}.pid`;
  if (!existsSync(pidFile)) return;
  try {
    process.kill(Number(readFileSync(pidFile, 'utf8')), signal);
  } catch {
    // already gone
  }
}

before(async () => {
  shim = await setUpShim('shim-pool');
});
after(async () => {
  stopAgent('SIGTERM');
  rmSync(socketDir, { recursive: true, force: true });
  await shim?.close();
});

const docker = (args: string[], input: string, extra: NodeJS.ProcessEnv = {}) =>
  shim.run('berth', 'docker', args, { input, extraEnv: { ...agentEnv, ...extra } });
const pool = (what: 'ls' | 'drain') => runCommand(process.execPath, [berthCli, 'shim', 'pool', what, '--socket', socket]);
const warmPods = async () => (await pool('ls')).stdout.split('\n').slice(1).filter(Boolean);
/** Waits (bounded) until the agent holds `n` warm pods: they start in the background after a call. */
async function poolHolds(n: number): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const pods = await warmPods();
    if (pods.length === n) return pods;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the pool did not reach ${n} warm pods: ${(await warmPods()).join(' | ')}`);
}
const taken = (stderr: string) => /warm pod (\S+) taken/.exec(stderr)?.[1];
const createdPod = (stderr: string) => /pod (\S+) created/.exec(stderr)?.[1];

test('the second call of a plan is served warm, with the same output; two calls at once get two pods', async () => {
  const argv = ['run', '--rm', '-i', '--network', 'none', ECHO];
  const cold = await docker(argv, LIST);
  assert.equal(cold.code, 0, cold.stderr);
  assert.equal(taken(cold.stderr), undefined);
  const [warmLine] = await poolHolds(1);
  const warm = await docker(argv, LIST);
  assert.equal(warm.code, 0, warm.stderr);
  assert.equal(warm.stdout, cold.stdout);
  assert.ok(taken(warm.stderr) && warmLine.startsWith(taken(warm.stderr)!), `not served by the warm pod ${warmLine}: ${warm.stderr}`);

  const [nextWarm] = await poolHolds(1);
  const both = await Promise.all([docker(argv, LIST), docker(argv, LIST)]);
  for (const r of both) assert.equal(r.stdout, cold.stdout, r.stderr);
  const pods = both.map((r) => taken(r.stderr) ?? createdPod(r.stderr));
  assert.ok(pods[0] && pods[1], both.map((r) => r.stderr).join('\n'));
  assert.notEqual(pods[0], pods[1], 'two calls got the same pod');
  assert.ok(pods.includes(nextWarm.split(/\s+/)[0]), 'neither call took the warm pod');
});

test("one env value or one byte of a mounted file makes another plan: never served by the other plan's pod", async () => {
  await pool('drain');
  const dir = tempTree({ 'f.txt': 'A' });
  try {
    const argv = (x: string) => ['run', '--rm', '-i', '-e', `X=${x}`, '--mount', `type=bind,source=${join(dir.dir, 'f.txt')},target=/in/f.txt,readonly`, ECHO];
    assert.equal((await docker(argv('1'), LIST)).code, 0);
    await poolHolds(1);
    const otherEnv = await docker(argv('2'), LIST);
    assert.equal(otherEnv.code, 0, otherEnv.stderr);
    assert.equal(taken(otherEnv.stderr), undefined, 'an env value differed, yet the warm pod was used');
    writeFileSync(join(dir.dir, 'f.txt'), 'B');
    await pool('drain');
    await docker(argv('1'), LIST);
    writeFileSync(join(dir.dir, 'f.txt'), 'A');
    await poolHolds(1);
    const otherFile = await docker(argv('1'), LIST);
    assert.equal(otherFile.code, 0, otherFile.stderr);
    assert.equal(taken(otherFile.stderr), undefined, 'a mounted byte differed, yet the warm pod was used');
  } finally {
    dir.remove();
  }
});

test('a warm pod whose process died is never used, and the call still succeeds', async () => {
  await pool('drain');
  const argv = ['run', '--rm', '-i', ECHO];
  const first = await docker(argv, LIST);
  const [line] = await poolHolds(1);
  const warmName = line.split(/\s+/)[0];
  await kubectlOk(['-n', shim.namespace, 'delete', 'pod', warmName, '--grace-period=0', '--wait=true']);
  const after = await docker(argv, LIST);
  assert.equal(after.code, 0, after.stderr);
  assert.equal(after.stdout, first.stdout);
  assert.equal(taken(after.stderr), undefined);
});

test('kustomize through the pool: byte-identical to podman twice, the second build served by warm pods', async () => {
  await pool('drain');
  const tree = tempTree(PIPELINE);
  try {
    const reference = await shim.run('podman', 'kubectl', ['kustomize', '--enable-alpha-plugins', tree.dir]);
    const first = await shim.run('berth', 'kubectl', ['kustomize', '--enable-alpha-plugins', tree.dir], { extraEnv: agentEnv });
    assert.equal(first.stdout, reference.stdout, first.stderr);
    await poolHolds(2);
    const second = await shim.run('berth', 'kubectl', ['kustomize', '--enable-alpha-plugins', tree.dir], { extraEnv: agentEnv });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, reference.stdout);
    assert.equal((second.stderr.match(/warm pod \S+ taken/g) ?? []).length, 2, second.stderr);
  } finally {
    tree.remove();
  }
});

test('pool drain leaves nothing at once; after a SIGKILLed agent, the deadline and berth gc do', async () => {
  await pool('drain');
  await kubectlOk(['-n', shim.namespace, 'wait', '--for=delete', 'pods', '-l', BERTH_LABEL, '--timeout=30s']);
  await docker(['run', '--rm', '-i', ECHO], LIST);
  await poolHolds(1);
  const drained = await pool('drain');
  assert.match(drained.stdout, /1 warm pod deleted/);
  assert.deepEqual(await shim.leftovers(), []);

  // a short-lived agent: warm pods that expire quickly
  stopAgent('SIGTERM');
  await kubectlOk(['-n', shim.namespace, 'wait', '--for=delete', 'pods', '-l', BERTH_LABEL, '--timeout=30s']);
  // idle longer than the time to the SIGKILL, so the pool does not delete the pod itself first
  const short = { BERTH_TTL: '3s', BERTH_SHIM_POOL_IDLE: '20' };
  await docker(['run', '--rm', '-i', ECHO], LIST, short);
  const [line] = await poolHolds(1);
  const warmName = line.split(/\s+/)[0];
  await killAgentLeavesNothing(shim, socket, warmName, 60_000);
});
