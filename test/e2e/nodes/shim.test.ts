// The shim's warm pods on another node than berth: function calls placed on the worker by a pod template, the second
// served by a warm pod the agent started there, with the same output as the first.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectlOk } from '../harness/cluster.js';
import { setUpShim, tempTree, type ShimEnv } from '../shim/shim-env.js';

const ECHO = 'localhost/berth/krm-echo:1';
const LIST = 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n';
const WORKER = 'berth-worker';

let shim: ShimEnv;
const files = tempTree({ 'on-worker.yaml': JSON.stringify({ spec: { nodeSelector: { 'kubernetes.io/hostname': WORKER } } }) });
// the agent's socket in a folder private to this user (mkdtemp's 0700), as the agent requires
const socketDir = mkdtempSync(join(tmpdir(), 'berth-nodes-agent-'));
const socket = join(socketDir, 'agent.sock');
const agentEnv = {
  BERTH_SHIM_AGENT: '1',
  BERTH_SHIM_AGENT_SOCKET: socket,
  BERTH_TRACE: '1',
  BERTH_SHIM_POOL_IDLE: '120',
  BERTH_SHIM_POOL_SIZE: '1',
  BERTH_SHIM_POOL_BURST: '1',
  BERTH_POD_TEMPLATE: join(files.dir, 'on-worker.yaml'),
};

before(async () => {
  shim = await setUpShim('nodes-shim');
});
after(async () => {
  if (existsSync(`${socket}.pid`)) {
    try {
      process.kill(Number(readFileSync(`${socket}.pid`, 'utf8')), 'SIGTERM');
    } catch {
      // already gone
    }
  }
  files.remove();
  rmSync(socketDir, { recursive: true, force: true });
  await shim?.close();
});

/** the node the scheduler put a pod on, from its event (the pod itself is deleted after its call) */
const scheduledTo = async (pod: string) =>
  / to (\S+)$/.exec(
    await kubectlOk([
      'get',
      'events',
      '-n',
      shim.namespace,
      '--field-selector',
      `involvedObject.name=${pod},reason=Scheduled`,
      '-o',
      'jsonpath={.items[*].message}',
    ]),
  )?.[1];

test('calls placed on the worker: the first makes a pod there, the second is served warm by a pod there, same output', async () => {
  const argv = ['run', '--rm', '-i', '--network', 'none', ECHO];
  const cold = await shim.run('berth', 'docker', argv, { input: LIST, extraEnv: agentEnv });
  assert.equal(cold.code, 0, cold.stderr);
  const created = /pod (\S+) created/.exec(cold.stderr)?.[1];
  assert.ok(created, cold.stderr);
  assert.equal(await scheduledTo(created), WORKER);
  // the warm pod starts in the background after the first call: wait until the agent reports it taken
  let warm = await shim.run('berth', 'docker', argv, { input: LIST, extraEnv: agentEnv });
  for (let i = 0; i < 20 && !/warm pod (\S+) taken/.test(warm.stderr); i++) warm = await shim.run('berth', 'docker', argv, { input: LIST, extraEnv: agentEnv });
  const taken = /warm pod (\S+) taken/.exec(warm.stderr)?.[1];
  assert.ok(taken, `a later call is served warm: ${warm.stderr}`);
  assert.equal(warm.code, 0, warm.stderr);
  assert.equal(warm.stdout, cold.stdout);
  assert.equal(await scheduledTo(taken), WORKER, `warm pod ${taken} ran on the worker`);
});
