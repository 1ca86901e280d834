// `up` after every process of the upstream cluster was killed (a machine's crash, a CI job's timeout): it starts
// afresh on the same state dir, with the same kubeconfig. Runs last in its folder: it restarts the harness's cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { berthCli, BUSYBOX, kubectl, kubectlOk, repoRoot, runCommand, stateDir } from '../harness/cluster.js';
import { alive } from '../../../src/devcluster/processes.js';

function partPids(): number[] {
  const dir = join(stateDir(), 'pids');
  return readdirSync(dir)
    .map((f) => Number(readFileSync(join(dir, f), 'utf8')))
    .filter((p) => Number.isInteger(p) && p > 0);
}

test('up after every process of the cluster was killed: the cluster comes back and runs pods', async () => {
  const kubeconfigBefore = readFileSync(join(stateDir(), 'kubeconfig'), 'utf8');
  const pids = partPids();
  assert.ok(pids.length >= 10, `expected the cluster's parts and its proxy, got ${pids.length} pids`);
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  for (const pid of pids) while (alive(pid)) await new Promise((r) => setTimeout(r, 20));
  const down = await kubectl(['get', 'nodes'], { timeoutMs: 20_000 });
  assert.notEqual(down.code, 0, 'the cluster still answered with every process killed');

  // a fault switch given to `up` is on from the start (switched off again below, for the files after this one)
  const up = await runCommand(
    process.execPath,
    [
      berthCli,
      'dev-cluster',
      'up',
      '--state-dir',
      stateDir(),
      '--users',
      join(repoRoot, 'test/e2e/fixtures/users.yaml'),
      '--load',
      BUSYBOX,
      '--fault-delay-pod-start',
      '1500',
    ],
    { timeoutMs: 300_000 },
  );
  assert.equal(up.code, 0, up.stderr);
  assert.match(up.stdout, /running at https:\/\/127\.0\.0\.1:\d+/);
  assert.equal(JSON.parse(await kubectlOk(['get', '--raw', '/berth-dev/v1/faults'])).delayPodStartMs, 1500);
  assert.equal(JSON.parse(await kubectlOk(['replace', '--raw', '/berth-dev/v1/faults', '-f', '-'], { input: '{"delayPodStartMs":0}' })).delayPodStartMs, 0);
  // the admin token and CA are kept: a kubeconfig copied before still works, only the proxy's port may change
  const adminToken = /token: (\S+)/.exec(kubeconfigBefore)?.[1];
  assert.ok(adminToken && readFileSync(join(stateDir(), 'kubeconfig'), 'utf8').includes(adminToken));
  assert.match(await kubectlOk(['get', 'nodes', '--no-headers']), /\sReady\s/);
  const r = await kubectl(
    ['run', 'after-restart', `--image=${BUSYBOX}`, '--restart=Never', '-i', '--rm', '--quiet', '--command', '--', 'sh', '-c', 'read x; echo "back $x"'],
    { input: 'up\n', timeoutMs: 120_000 },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'back up\n');
});
