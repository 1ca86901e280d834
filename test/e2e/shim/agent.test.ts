// The shim agent (BERTH_SHIM_AGENT=1): kustomize's docker processes become thin clients of one berth process.
// Same bytes as podman, and a client killed with SIGKILL still gets its pod cleaned up by the agent.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectlOk } from '../harness/cluster.js';
import { BERTH_LABEL, bothRuntimes, setUpShim, tempTree, transformAndValidate, type ShimEnv } from './shim-env.js';

const PIPELINE = transformAndValidate('agent');

let shim: ShimEnv;
const socketDir = mkdtempSync(join(tmpdir(), 'berth-agent-'));
// The pool off: these tests are about the agent itself (test/e2e/shim/pool.test.ts runs it with warm pods).
const agentEnv = { BERTH_SHIM_AGENT: '1', BERTH_SHIM_AGENT_SOCKET: join(socketDir, 'agent.sock'), BERTH_SHIM_POOL_SIZE: '0' };

before(async () => {
  shim = await setUpShim('shim-agent');
});
after(async () => {
  // the agent would exit by itself when idle; the test does not leave it running
  const pidFile = `${agentEnv.BERTH_SHIM_AGENT_SOCKET}.pid`;
  if (existsSync(pidFile)) {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGTERM');
    } catch {
      // already gone
    }
  }
  rmSync(socketDir, { recursive: true, force: true });
  await shim?.close();
});
afterEach(async () => {
  // The agent answers the client first and deletes the finished pod right after: wait for the
  // deletions (a watch, no fixed delay), then nothing may be left.
  await kubectlOk(['-n', shim.namespace, 'wait', '--for=delete', 'pods,configmaps,networkpolicies', '-l', BERTH_LABEL, '--timeout=30s']);
  assert.deepEqual(await shim.leftovers(), [], 'berth left objects behind');
});

test('kustomize through the agent prints what podman prints, byte for byte, and the agent was used', async () => {
  const tree = tempTree(PIPELINE);
  try {
    const [ref, berth] = await bothRuntimes(shim, 'kubectl', ['kustomize', '--enable-alpha-plugins', tree.dir], { extraEnv: agentEnv });
    assert.equal(ref.code, 0, ref.stderr);
    assert.equal(berth.code, 0, berth.stderr);
    assert.equal(berth.stdout, ref.stdout);
    assert.match(berth.stdout, /owner: agent/);
    assert.ok(existsSync(`${agentEnv.BERTH_SHIM_AGENT_SOCKET}.pid`), 'no agent was started');
  } finally {
    tree.remove();
  }
});

test('a client killed with SIGKILL: the agent deletes its pod at once', async () => {
  const child = spawn('docker', ['run', '--rm', '-i', 'localhost/berth/krm-sleep:1'], { env: shim.env('berth', agentEnv), stdio: ['pipe', 'ignore', 'pipe'] });
  child.stdin.end('apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n');
  // the function says on stderr that it runs: then the client is killed outright
  await new Promise<void>((resolve, reject) => {
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.includes('sleep: sleeping')) resolve();
    });
    child.on('exit', () => reject(new Error(`the shim ended before the function ran: ${stderr}`)));
  });
  assert.equal((await kubectlOk(['get', 'pods', '-n', shim.namespace, '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'name'])).trim().split('\n').length, 1);
  child.kill('SIGKILL');
  await kubectlOk(['wait', '--for=delete', 'pods', '-l', 'app.kubernetes.io/managed-by=berth', '-n', shim.namespace, '--timeout=30s']);
});
