// The docker shim under the dev cluster's faults: a KRM function run with a 64 KB ResourceList on stdin, a
// command that writes at once without stdin, and `kpt fn eval` through the shim, each repeated under dropped
// streams, API 500s, watches that end early and slow pod starts. No run may exit 0 with output other than the
// fault-free run's, no failed run may change the package, none may hang, and nothing may be left behind.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { berthCli, kubeconfigPath, kubectlOk, runCommand, type Result } from '../harness/cluster.js';
import { BERTH_LABEL, setUpShim, tempTree, type ShimEnv } from '../shim/shim-env.js';
import { FAULT_CASES, judge, Tally, underFaults, type RunOutcome } from './fault-kit.js';

// 3 runs per scenario and fault keep the suite within CI's budget; BERTH_FAULT_RUNS=N for a longer sweep.
const RUNS = Number(process.env.BERTH_FAULT_RUNS ?? 3);
const RUN_LIMIT_MS = 90_000;
const FN_IMAGE = 'localhost/berth/krm-set-annotations:1';

/** 64 KB of ConfigMaps in a ResourceList whose functionConfig the function reads. */
function resourceList(): string {
  const items: string[] = [];
  for (let i = 0; items.join('').length < 64 * 1024; i++) {
    items.push(`- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-${i}\n  data:\n    value: "${'x'.repeat(100)}-${i}"\n`);
  }
  return `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn-config\n  data:\n    owner: faults\nitems:\n${items.join('')}`;
}

const PACKAGE = {
  Kptfile: 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n',
  'service.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: cart\nspec:\n  ports: [{port: 80}]\n',
  'deploy.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cart\nspec:\n  replicas: 1\n',
};

/** Every file of a tree, path and bytes, as one digest. */
function treeDigest(dir: string): string {
  const hash = createHash('sha256');
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else
        hash
          .update(`${relative(dir, p)}\0`)
          .update(readFileSync(p))
          .update('\0');
    }
  };
  walk(dir);
  return hash.digest('hex');
}

let shim: ShimEnv;
const tally = new Tally('docker shim');
// The shim agent with warm pods: a call may be served by a pod started for it under the same faults.
const agentDir = mkdtempSync(join(tmpdir(), 'berth-faults-agent-'));
const agentSocket = join(agentDir, 'agent.sock');
const pooled = { BERTH_SHIM_AGENT: '1', BERTH_SHIM_AGENT_SOCKET: agentSocket, BERTH_SHIM_POOL_SIZE: '1' };

before(async () => {
  shim = await setUpShim('faults-shim');
});
after(async () => {
  stopAgent();
  rmSync(agentDir, { recursive: true, force: true });
  await shim?.close();
});

/** SIGTERM: the agent deletes its warm pods before it exits. */
function stopAgent(): void {
  if (!existsSync(`${agentSocket}.pid`)) return;
  try {
    process.kill(Number(readFileSync(`${agentSocket}.pid`, 'utf8')), 'SIGTERM');
  } catch {
    // already gone
  }
}

function limited(r: Promise<Result>): Promise<RunOutcome & { stderr: string }> {
  return r.then(
    (x) => ({ code: x.code, stdout: x.stdout, stderr: x.stderr }),
    (err: Error) => ({ code: null, stdout: '', stderr: err.message, timedOut: true }),
  );
}

interface Scenario {
  name: string;
  /** Berth's own failure exit codes for this client: a run ending with one said it failed. */
  failureCodes: number[];
  run(): Promise<RunOutcome & { stderr: string }>;
}

const input = resourceList();
const scenarios: Scenario[] = [
  {
    name: 'docker run -i (64 KB ResourceList)',
    failureCodes: [125, 126, 127],
    run: () => limited(shim.run('berth', 'docker', ['run', '--rm', '-i', '--network', 'none', FN_IMAGE], { input, timeoutMs: RUN_LIMIT_MS })),
  },
  {
    name: 'docker run -i through the agent, warm pods',
    failureCodes: [125, 126, 127],
    run: () => limited(shim.run('berth', 'docker', ['run', '--rm', '-i', '--network', 'none', FN_IMAGE], { input, timeoutMs: RUN_LIMIT_MS, extraEnv: pooled })),
  },
  {
    name: 'docker run, no stdin, writes at once',
    failureCodes: [125, 126, 127],
    run: () =>
      limited(
        shim.run(
          'berth',
          'docker',
          ['run', '--rm', 'localhost/berth/busybox:1', 'sh', '-c', 'i=0; while [ $i -lt 300 ]; do echo "line $i"; i=$((i+1)); done; echo done >&2; exit 3'],
          {
            timeoutMs: RUN_LIMIT_MS,
          },
        ),
      ),
  },
  {
    name: 'kpt fn eval through the shim',
    failureCodes: [1],
    async run() {
      const tree = tempTree(Object.fromEntries(Object.entries(PACKAGE).map(([k, v]) => [`pkg/${k}`, v])));
      try {
        const dir = join(tree.dir, 'pkg');
        const before = treeDigest(dir);
        const r = await limited(shim.run('berth', 'kpt', ['fn', 'eval', dir, '--image', FN_IMAGE, '--', 'owner=faults'], { timeoutMs: RUN_LIMIT_MS }));
        const after = treeDigest(dir);
        // A failed run must leave the package as it was: reported as a changed "output" if it did not.
        if (r.code !== 0 && after !== before) return { ...r, stdout: `a failed run changed the package (${after})` };
        return { ...r, stdout: after };
      } finally {
        tree.remove();
      }
    },
  },
];

test('the shim under faults: every run exact or a reported failure, no hang, nothing left', { timeout: 30 * 60_000 }, async () => {
  for (const s of scenarios) {
    const reference = await s.run();
    assert.ok(reference.code === 0 || reference.code === 3, `fault-free run of ${s.name} failed: ${reference.stderr}`);
    for (const fault of FAULT_CASES) {
      await underFaults(fault.faults, async () => {
        for (let i = 0; i < RUNS; i++) {
          const got = await s.run();
          tally.add(s.name, fault.name, judge(reference, got, s.failureCodes), `exit ${got.code}: ${got.stderr.slice(-600)}`);
        }
      });
    }
  }
  tally.print();
  assert.deepEqual(tally.bad(), []);
  // the agent's warm pods go when it stops; then the namespace is checked like after any run
  stopAgent();
  await kubectlOk(['-n', shim.namespace, 'wait', '--for=delete', 'pods', '-l', BERTH_LABEL, '--timeout=60s']);
  const gc = await runCommand(process.execPath, [berthCli, 'gc', '--kubeconfig', kubeconfigPath(), '--namespace', shim.namespace]);
  assert.equal(gc.code, 0, gc.stderr);
  assert.deepEqual(await shim.leftovers(), [], 'berth left objects behind');
});
