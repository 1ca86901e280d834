// The first command the README gives a new user, `bash scripts/demo.sh`, run as that user would run it: it must
// show each of berth's main jobs working on the dev cluster (upstream Kubernetes) and leave nothing behind: its
// cluster, its shim agent, berth serve.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot, runCommand } from '../harness/cluster.js';
import { freshUserEnv } from '../readme/readme-shell.js';

test('scripts/demo.sh shows pods, a KRM function and the docker CLI working, then leaves nothing running', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'berth-demo-home-'));
  const agentsBefore = await shimAgents();
  try {
    const r = await runCommand('bash', [path.join(repoRoot, 'scripts/demo.sh')], { env: freshUserEnv(home), timeoutMs: 480_000 });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /hello from stdin\n/, 'kubectl run -i passed stdin');
    assert.equal(r.stdout.match(/^exit code: 3$/gm)?.length, 2, "kubectl run and docker run both gave the container's exit code");
    assert.match(r.stdout, /served from a pod/, 'port-forward reached the server');
    assert.match(r.stdout, /owner: team-shop/, 'the KRM function ran through the shim');
    assert.match(r.stdout, /hello from \w+, a pod/, 'docker run through berth serve');
    assert.match(r.stdout, /dev cluster \(Kubernetes v1\.36\.\d+\) running at https:\/\/127\.0\.0\.1:\d+/, 'the upstream cluster started');
    assert.doesNotMatch(r.stdout, /this first run builds it/, 'a machine that built the cluster is not told it will build');
    const state = /kubeconfig: (\S+)\/kubeconfig/.exec(r.stdout)?.[1];
    assert.ok(state, r.stdout);
    assert.equal(existsSync(state), false, 'the state folder is removed');
    // the cluster's processes, mounts, links and chains: the harness compares the machine before and after this file
    // the demo's own shim agent (its socket is in the state folder) and berth serve are gone too
    const left = await runCommand('pgrep', ['-af', state]);
    assert.equal(left.stdout.trim(), '', 'no process of the demo is left');
    assert.deepEqual(
      (await shimAgents()).filter((a) => !agentsBefore.includes(a)),
      [],
      'no shim agent started by the demo is left',
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

/** `pid command` of every shim agent process of this machine */
async function shimAgents(): Promise<string[]> {
  const r = await runCommand('pgrep', ['-af', 'cli/main.js shim agent']);
  return r.stdout.split('\n').filter(Boolean);
}
