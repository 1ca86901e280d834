// `berth fn render` under the dev cluster's faults: a Kptfile pipeline of container functions (pods),
// rendered RUNS times per fault case into a fresh copy of the package. Never allowed: a run that exits 0
// with a package other than the fault-free run's, a failed run that changed the package, a run that does
// not end within its time limit, and berth objects left in the namespace once `berth gc` has run.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { berthCli, runCommand } from '../harness/cluster.js';
import { setUpShim, tempTree, type ShimEnv } from '../shim/shim-env.js';
import { hashTree } from '../../unit/krm/package-tree.js';
import { FAULT_CASES, judge, Tally, underFaults, type RunOutcome } from './fault-kit.js';

// 3 renders per fault keep the suite within CI's budget; BERTH_FAULT_RUNS=N for a longer sweep.
const RUNS = Number(process.env.BERTH_FAULT_RUNS ?? 3);
// a render of two functions, each a pod (and on upstream Kubernetes an isolation gate) started in a second or more,
// with every stream retried under the fault: past this it counts as hung
const RUN_LIMIT_MS = 60_000;
/** What `berth fn` exits with when it reports a failure (a function's own non-zero code aside). */
const BERTH_FAILURE_CODES = [1];

const SCENARIO = 'fn render (2 container functions)';
const PACKAGE = {
  Kptfile: `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: shop
pipeline:
  mutators:
  - image: localhost/berth/krm-set-annotations:1
    configMap: {owner: fn-faults}
  validators:
  - image: localhost/berth/krm-require-label:1
    configMap: {label: team, kinds: Service}
`,
  'service.yaml': '# the cart service\napiVersion: v1\nkind: Service\nmetadata:\n  name: cart\n  labels: {team: shop}\nspec:\n  ports:\n  - port: 80 # http\n',
  'apps/deploy.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cart\nspec:\n  replicas: 2\n',
};

let shim: ShimEnv;
let source: { dir: string; remove(): void };
let work: string;
let cacheDir: string;
let original: string;
let expected: RunOutcome | undefined;
const tally = new Tally('fn-faults');
/** Why failed runs failed (berth's last `berth:` line, ids and numbers blanked), for the printed counts. */
const reasons = new Map<string, number>();

function reasonOf(stderr: string): string {
  const line =
    stderr
      .split('\n')
      .filter((l) => l.startsWith('berth: '))
      .pop() ??
    stderr.trim().split('\n').pop() ??
    '';
  return line.replace(/\b[0-9a-f]{5,}\b|\d+(\.\d+)?/g, 'N').slice(0, 160);
}

before(async () => {
  shim = await setUpShim('fn-faults');
  source = tempTree(PACKAGE);
  original = JSON.stringify(hashTree(source.dir));
  work = mkdtempSync(path.join(tmpdir(), 'berth-fn-faults-'));
  cacheDir = mkdtempSync(path.join(tmpdir(), 'berth-cache-'));
});
after(async () => {
  source?.remove();
  rmSync(work, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
  await shim?.close();
});

let runNo = 0;
/** One render into a fresh copy; `stdout` is the fingerprint of the package afterwards. */
async function render(): Promise<RunOutcome & { stderr: string; changedOnFailure: boolean }> {
  const dir = path.join(work, `run-${++runNo}`);
  cpSync(source.dir, dir, { recursive: true });
  try {
    const r = await runCommand(process.execPath, [berthCli, 'fn', 'render', dir], {
      env: shim.env('berth', { BERTH_CACHE_DIR: cacheDir, BERTH_TRACE: '1' }),
      timeoutMs: RUN_LIMIT_MS,
    });
    const after = JSON.stringify(hashTree(dir));
    return { code: r.code, stdout: after, stderr: r.stderr, changedOnFailure: r.code !== 0 && after !== original };
  } catch (err) {
    return { code: null, stdout: '', stderr: (err as Error).message, timedOut: true, changedOnFailure: false };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('fault-free: the pipeline renders, the package changes', { timeout: 2 * RUN_LIMIT_MS }, async () => {
  const r = await render();
  assert.equal(r.code, 0, r.stderr);
  assert.notEqual(r.stdout, original, 'the mutator should have changed the package');
  expected = { code: r.code, stdout: r.stdout };
  assert.deepEqual(await shim.leftovers(), []);
});

for (const fault of FAULT_CASES) {
  test(
    `${RUNS} renders under ${fault.name}: ${fault.retriable ? 'exact (retried)' : 'exact or a reported failure that left the package as it was'}`,
    { timeout: RUNS * RUN_LIMIT_MS + 20_000 },
    async () => {
      assert.ok(expected, 'the fault-free run must pass first');
      await underFaults(fault.faults, async () => {
        for (let i = 0; i < RUNS; i++) {
          const got = await render();
          let verdict = judge(expected!, got, BERTH_FAILURE_CODES);
          let detail = `exit ${got.code}: ${got.stderr.slice(-600)}`;
          if (got.changedOnFailure) {
            verdict = 'wrong';
            detail = `failed run changed the package; ${detail}`;
          }
          tally.add(SCENARIO, fault.name, verdict, detail);
          if (verdict === 'failed') {
            const key = `${fault.name}: ${reasonOf(got.stderr)}`;
            reasons.set(key, (reasons.get(key) ?? 0) + 1);
          }
        }
      });
    },
  );
}

test('nothing of berth is left in the namespace after berth gc; the tally has no wrong run and no hang', { timeout: 60_000 }, async () => {
  const beforeGc = await shim.leftovers();
  const gc = await runCommand(process.execPath, [berthCli, 'gc', '--kinds', 'pods,configmaps,networkpolicies'], { env: shim.env('berth') });
  assert.equal(gc.code, 0, gc.stderr);
  tally.print();
  console.log(['fn-faults: why runs failed', ...[...reasons].map(([k, n]) => `  ${n} x ${k}`)].join('\n'));
  console.log(`fn-faults: berth objects before gc: ${beforeGc.length ? beforeGc.join(', ') : 'none'}`);
  // a hang leaves its pod until the deadline: its detail (the run's last words, with BERTH_TRACE) says more than the pod
  assert.deepEqual(tally.bad(), []);
  assert.deepEqual(await shim.leftovers(), [], `left after berth gc (before gc: ${beforeGc.join(', ')})`);
});
