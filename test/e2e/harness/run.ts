// Runs the end-to-end suite: starts one dev cluster (through berth's CLI, as a user would), runs every e2e test
// file against it, stops it, and fails if anything of the cluster is left in podman or as a process.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { berthCli, repoRoot } from './cluster.js';

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === 'harness' ? [] : testFiles(path);
    return path.endsWith('.test.js') ? [path] : [];
  });
}

/** small enough that a test can push an old resourceVersion out of the history (410 Expired) */
const WATCH_HISTORY = 500;
const stateDir = mkdtempSync(join(tmpdir(), 'berth-e2e-'));
const usersFile = join(repoRoot, 'test/e2e/fixtures/users.yaml');
const env = { ...process.env, BERTH_E2E_STATE_DIR: stateDir, BERTH_E2E_WATCH_HISTORY: String(WATCH_HISTORY) };
const only = process.argv.slice(2);
const files = only.length ? only : testFiles(join(repoRoot, 'dist/test/e2e'));

const up = spawnSync(process.execPath, [berthCli, 'dev-cluster', 'up', '--state-dir', stateDir, '--users', usersFile, '--watch-history', String(WATCH_HISTORY)], { stdio: 'inherit', env });
if (up.status !== 0) {
  console.error('e2e: the dev cluster did not start');
  process.exit(1);
}
const { clusterId, pid } = JSON.parse(execFileSync('cat', [join(stateDir, 'state.json')], { encoding: 'utf8' }));
let status: number;
try {
  // --test-timeout bounds each test and also each file as a whole (node runs a file as one test): a file of
  // several multi-pod tests can pass 2 minutes on a loaded machine, so the bound is 10 minutes, which only a hang
  // reaches; tests that need a tighter bound set their own.
  const runner = spawn(process.execPath, ['--test', '--test-concurrency=1', '--test-timeout=600000', '--test-reporter=spec', ...files], { stdio: 'inherit', env });
  // interrupted (Ctrl-C, a CI timeout): the tests stop, and the cluster is still taken down below
  const interrupt = (signal: NodeJS.Signals) => () => {
    console.error(`e2e: ${signal}, stopping the tests and the dev cluster`);
    runner.kill(signal);
  };
  process.on('SIGINT', interrupt('SIGINT'));
  process.on('SIGTERM', interrupt('SIGTERM'));
  status = await new Promise<number>((resolve) => runner.on('close', (code) => resolve(code ?? 1)));
} finally {
  spawnSync(process.execPath, [berthCli, 'dev-cluster', 'down', '--state-dir', stateDir], { stdio: 'inherit', env });
}
const left = execFileSync('podman', ['ps', '-a', '-q', '--filter', `label=io.berth.dev-cluster=${clusterId}`], { encoding: 'utf8' }).trim();
const pods = execFileSync('podman', ['pod', 'ps', '-q', '--filter', `label=io.berth.dev-cluster=${clusterId}`], { encoding: 'utf8' }).trim();
let alive = true;
try {
  process.kill(pid, 0);
} catch {
  alive = false;
}
if (left || pods || alive) {
  console.error(`e2e: the dev cluster left things behind: containers [${left}] pods [${pods}] server process alive: ${alive}`);
  status = 1;
} else {
  console.log('e2e: after `berth dev-cluster down` no container, pod or server process of the cluster remains');
}
rmSync(stateDir, { recursive: true, force: true });
process.exit(status);
