// Runs the end-to-end suite: for each cluster kind, starts one dev cluster (through berth's CLI, as a user would),
// runs the test files that belong to it (suites.ts), stops it, and fails if anything of the cluster is left. Files that
// start a cluster of their own run last, with the same check of what they leave.
//   node dist/test/e2e/harness/run.js [--cluster upstream|upstream-split|upstream-nodes|own] [test files...]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { berthCli, repoRoot } from './cluster.js';
import { clustersOf, RUNS_ALONE, type ClusterKind } from './suites.js';
import { leftoversOnceSettled, machineSnapshot } from './machine-snapshot.js';

const e2eRoot = join(repoRoot, 'dist/test/e2e');

function testFiles(dir: string): string[] {
  // sorted: a folder's files run in name order (upstream/restart runs after upstream/cluster)
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return entry === 'harness' ? [] : testFiles(path);
      return path.endsWith('.test.js') ? [path] : [];
    });
}

const folderOf = (file: string) => relative(e2eRoot, file).split('/')[0]!;
const runsOn = (file: string, kind: ClusterKind) => clustersOf(relative(e2eRoot, file)).includes(kind);

const usersFile = join(repoRoot, 'test/e2e/fixtures/users.yaml');
const IMAGES = [
  'localhost/berth/busybox:1',
  'localhost/berth/node:24',
  'localhost/berth/test-resource:1',
  'localhost/berth/berth:dev',
  'localhost/berth/berth-tools:dev',
  'localhost/berth/builder:1',
  ...['set-annotations', 'generate-configmap', 'require-label', 'exit42', 'chatty', 'echo', 'probe', 'sleep'].map((f) => `localhost/berth/krm-${f}:1`),
];

function upArgs(kind: ClusterKind, stateDir: string): string[] {
  const present = IMAGES.filter((i) => spawnSync('podman', ['image', 'exists', i]).status === 0);
  return [
    'dev-cluster',
    'up',
    '--state-dir',
    stateDir,
    '--users',
    usersFile,
    ...(kind === 'upstream-split' ? ['--split-log-streams'] : []),
    ...(kind === 'upstream-nodes' ? ['--nodes', '2'] : []),
    '--load',
    ...present,
  ];
}

/** the cluster's kubectl first on PATH: kubectl of the server's version, as a user of that cluster has */
function pathWithKubectl(stateDir: string): string {
  const bin = join(stateDir, 'bin');
  mkdirSync(bin, { recursive: true });
  const kubectl = spawnSync(
    process.execPath,
    ['-e', "import('" + join(repoRoot, 'dist/src/devcluster/layout.js') + "').then(m => console.log(new m.Layout('/').bin('kubernetes', 'kubectl')))"],
    { encoding: 'utf8' },
  ).stdout.trim();
  symlinkSync(kubectl, join(bin, 'kubectl'));
  return `${bin}:${process.env.PATH ?? ''}`;
}

/** Runs files that start their own cluster (the demo), checking that the machine is left as it was. */
async function runOwnClusterPhase(files: string[]): Promise<number> {
  const before = machineSnapshot();
  console.log(`e2e: files that start a cluster of their own: ${files.length} (${[...new Set(files.map(folderOf))].join(', ')})`);
  let status = await runTests(files, { BERTH_HELPER_IMAGE: 'localhost/berth/busybox:1', ...process.env, BERTH_E2E_CLUSTER: 'own' }, 1);
  const left = await leftoversOnceSettled(before);
  if (left.length) {
    console.error(`e2e: these files left things of their clusters behind:\n  ${left.join('\n  ')}`);
    status = 1;
  }
  return status;
}

async function runPhase(kind: ClusterKind, files: string[]): Promise<number> {
  if (kind === 'own') return runOwnClusterPhase(files);
  const started = Date.now();
  const stateDir = mkdtempSync(join(tmpdir(), `berth-e2e-${kind}-`));
  // the clusters pull from no registry: berth's helper containers (file copies, the --network none gate) use the
  // test busybox, as the README tells a dev-cluster user to set it
  const env = {
    BERTH_HELPER_IMAGE: 'localhost/berth/busybox:1',
    ...process.env,
    BERTH_E2E_STATE_DIR: stateDir,
    BERTH_E2E_CLUSTER: kind,
    PATH: pathWithKubectl(stateDir),
  };
  const before = machineSnapshot();
  console.log(`e2e: ${kind} cluster: ${files.length} test files (${[...new Set(files.map(folderOf))].join(', ')})`);
  const up = spawnSync(process.execPath, [berthCli, ...upArgs(kind, stateDir)], { stdio: 'inherit', env });
  if (up.status !== 0) {
    console.error(`e2e: the ${kind} dev cluster did not start`);
    spawnSync(process.execPath, [berthCli, 'dev-cluster', 'down', '--state-dir', stateDir], { stdio: 'inherit', env });
    return 1;
  }
  console.log(`e2e: ${kind} cluster up in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  let status: number;
  const leftBehind: string[] = [];
  try {
    // the files that change the cluster for everyone run alone, after the others; the others run two at a time, as
    // most of a test's time is spent waiting for pods (BERTH_E2E_CONCURRENCY sets it). One by one, the split phase
    // took 31 minutes instead of 13. (Its files ran one by one for a while: two at once once showed a long line's log
    // hang and once come back empty, which was the kubelet's unstamped line that log-cut.ts now places.)
    const alone = files.filter((f) => RUNS_ALONE.includes(relative(e2eRoot, f)));
    const shared = files.filter((f) => !alone.includes(f));
    const concurrency = Number(process.env.BERTH_E2E_CONCURRENCY ?? 2);
    status = shared.length ? await runTests(shared, env, concurrency) : 0;
    if (alone.length && !interrupted) status = (await runTests(alone, env, 1)) || status;
  } finally {
    spawnSync(process.execPath, [berthCli, 'dev-cluster', 'down', '--state-dir', stateDir], { stdio: 'inherit', env });
    leftBehind.push(...(await leftoversOnceSettled(before)));
  }
  if (leftBehind.length) {
    console.error(`e2e: the ${kind} dev cluster left things behind:\n  ${leftBehind.join('\n  ')}`);
    status = 1;
  } else {
    console.log(
      `e2e: after \`berth dev-cluster down\` nothing of the ${kind} cluster remains (processes, mounts, links, network namespaces, iptables chains, cgroups, folders)`,
    );
  }
  console.log(`e2e: ${kind} phase took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  rmSync(stateDir, { recursive: true, force: true });
  return status;
}

function runTests(files: string[], env: NodeJS.ProcessEnv, concurrency: number): Promise<number> {
  // --test-timeout bounds each test and also each file as a whole (node runs a file as one test): a file of
  // several multi-pod tests can pass 2 minutes on a loaded machine, so the bound is 10 minutes, which only a hang
  // reaches; tests that need a tighter bound set their own.
  const failuresFile = join(failuresDir, String(failuresFiles.length));
  failuresFiles.push(failuresFile);
  const reporters = [
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${failuresReporter}`,
    `--test-reporter-destination=${failuresFile}`,
  ];
  const runner = spawn(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=600000', ...reporters, ...files], {
    stdio: 'inherit',
    env,
  });
  // interrupted (Ctrl-C, a CI timeout): the tests stop, the cluster is still taken down, and no later phase starts
  const interrupt = (signal: NodeJS.Signals) => () => {
    console.error(`e2e: ${signal}, stopping the tests and the dev cluster`);
    interrupted = true;
    runner.kill(signal);
  };
  const onInt = interrupt('SIGINT');
  const onTerm = interrupt('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return new Promise<number>((resolve) =>
    runner.on('close', (code) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(code ?? 1);
    }),
  );
}

let interrupted = false;
// every run of the tests appends its failed tests here; the last lines of the harness repeat them
const failuresReporter = join(repoRoot, 'dist/test/e2e/harness/failures-reporter.js');
const failuresDir = mkdtempSync(join(tmpdir(), 'berth-e2e-failures-'));
let failuresFiles: string[] = [];

function failedTests(): string[] {
  return failuresFiles.flatMap((file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []));
}

const args = process.argv.slice(2);
const clusterFlag = args.indexOf('--cluster');
const onlyKind = clusterFlag >= 0 ? (args.splice(clusterFlag, 2)[1] as ClusterKind) : undefined;
const files = args.length ? args.map((f) => resolve(f)) : testFiles(e2eRoot);
let status = 0;
// the last lines of a long run say which phase failed, so a reader of its tail need not search the log
const verdicts: string[] = [];
for (const kind of ['upstream', 'upstream-split', 'upstream-nodes', 'own'] as const) {
  if (onlyKind && onlyKind !== kind) continue;
  if (interrupted) break;
  // --cluster with files named runs those files there; without files, the files of that cluster
  const mine = onlyKind && args.length ? files : files.filter((f) => runsOn(f, kind));
  if (!mine.length) continue;
  const started = Date.now();
  failuresFiles = [];
  const phaseStatus = await runPhase(kind, mine);
  verdicts.push(`e2e: ${kind} phase ${phaseStatus === 0 ? 'passed' : 'FAILED'} (${mine.length} files, ${((Date.now() - started) / 1000).toFixed(0)} s)`);
  verdicts.push(...failedTests().map((line) => `  failed: ${line}`));
  if (phaseStatus !== 0 && !failedTests().length)
    verdicts.push('  no test failed: the phase failed on its cluster (start, or what `down` left), as printed above');
  status = phaseStatus || status;
}
for (const verdict of verdicts) console.log(verdict);
rmSync(failuresDir, { recursive: true, force: true });
process.exit(status);
