// berth under load (issue 29), on a dev cluster of two nodes, every result checked:
//   - ten kustomize builds of ten container functions at once (100 function calls, as a busy Argo CD repo-server
//     renders), through the shim agent: each build's output against one built alone; build times p50/p99; the
//     agent's peak memory; the API requests per second;
//   - berth serve with 100 live containers: create times p50/p99, all 100 running, berth's memory, its watches;
//   - 20 task plans of 3 steps at once: times p50/p99, each step's output;
//   - API Priority and Fairness answering 429: a FlowSchema puts the calling user on a priority level of one share
//     that rejects what it cannot seat, and 20 function calls at once must each be exact or fail saying so, never
//     wrong; the rejections kube-apiserver counted say that throttling happened.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tallyBetween } from '../src/devcluster/faults/request-tally.js';
import { metricSum, tallyOf } from './api-tally.js';
import { startBenchCluster, type BenchCluster } from './bench-cluster.js';
import { reportGoal } from './goal-rows.js';
import { kustomization } from './kustomize-fixture.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(root, 'dist/src/cli/main.js');
const IMAGE = 'localhost/berth/busybox:1';
const FN = 'localhost/berth/krm-echo:1';
const USERS = join(root, 'test/e2e/fixtures/users.yaml');
const SERVE_CONTAINERS = Number(process.env.BENCH_LOAD_CONTAINERS ?? 100);
const PLANS = Number(process.env.BENCH_LOAD_PLANS ?? 20);
const BUILDS = Number(process.env.BENCH_LOAD_BUILDS ?? 10);

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function timedRun(cmd: string, args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<Ended> {
  return new Promise((resolve) => {
    const t = performance.now();
    const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - t });
    });
    child.stdin.end(input);
  });
}

/** `jobs` run with at most `limit` at once, in order of start */
async function bounded<T>(jobs: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, jobs.length) }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const times = (xs: number[]): string => `p50 ${s(pct(xs, 50))}, p99 ${s(pct(xs, 99))}`;

/** peak and current resident memory of a process, MB */
function memoryOf(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024 };
}

async function requestRate(cluster: BenchCluster, op: () => Promise<void>): Promise<string> {
  const before = await tallyOf(cluster);
  const t = performance.now();
  await op();
  const d = tallyBetween(before, await tallyOf(cluster));
  return `${d.total} requests, ${(d.total / ((performance.now() - t) / 1000)).toFixed(0)}/s`;
}

async function functionLoad(cluster: BenchCluster, env: NodeJS.ProcessEnv, dir: string): Promise<void> {
  const socket = join(dir, 'agent.sock');
  spawnSync(process.execPath, [cli, 'shim', 'install', join(dir, 'shim')]);
  const agent = { ...env, PATH: `${join(dir, 'shim')}:${env.PATH ?? ''}`, BERTH_SHIM_AGENT: '1', BERTH_SHIM_AGENT_SOCKET: socket };
  const k = join(dir, 'kustomize10');
  kustomization(k, 10);
  const build = () => timedRun('kubectl', ['kustomize', '--enable-alpha-plugins', k], agent);
  const alone = await build();
  if (alone.code !== 0) throw new Error(`the reference build failed: ${alone.stderr}`);
  let builds: Ended[] = [];
  const rate = await requestRate(cluster, async () => {
    builds = await Promise.all(Array.from({ length: BUILDS }, build));
  });
  const exact = builds.filter((b) => b.code === 0 && b.stdout === alone.stdout).length;
  const wrong = builds.filter((b) => b.code === 0 && b.stdout !== alone.stdout).length;
  const mem = memoryOf(Number(readFileSync(`${socket}.pid`, 'utf8')));
  console.log(
    `${BUILDS} kustomize builds of 10 functions at once (${BUILDS * 10} calls): ${exact} exact, ${BUILDS - exact - wrong} failed, ${wrong} wrong; builds ${times(builds.map((b) => b.ms))} (one alone ${s(alone.ms)}); the agent's memory peak ${mem.peak.toFixed(0)} MB; ${rate}`,
  );
  for (const b of builds.filter((x) => x.code !== 0)) console.log(`  failed: ${b.stderr.trim().split('\n').slice(-2).join(' | ')}`);
  reportGoal({
    area: 'load',
    measure: `${BUILDS * 10} function calls at once (${BUILDS} kustomize builds): wrong results`,
    value: `${wrong} wrong, ${exact} exact`,
    ratio: wrong,
    reference: `a build alone ${s(alone.ms)}`,
    goal: '≤ 0 wrong',
  });
  spawnSync(process.execPath, [cli, 'shim', 'pool', 'drain', '--socket', socket]);
  process.kill(Number(readFileSync(`${socket}.pid`, 'utf8')), 'SIGTERM');
}

async function serveLoad(cluster: BenchCluster, env: NodeJS.ProcessEnv, dir: string): Promise<void> {
  const socket = join(dir, 'serve.sock');
  const serve = spawn(process.execPath, [cli, 'serve', '-n', cluster.ns, '-H', `unix://${socket}`, '--instance', 'load'], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const docker = { ...env, DOCKER_HOST: `unix://${socket}` };
  try {
    for (let i = 0; i < 100 && spawnSync('docker', ['version'], { env: docker, stdio: 'ignore' }).status !== 0; i++)
      await new Promise((r) => setTimeout(r, 200));
    await timedRun('docker', ['pull', IMAGE], docker);
    let created: Ended[] = [];
    const rate = await requestRate(cluster, async () => {
      created = await bounded(
        Array.from({ length: SERVE_CONTAINERS }, (_, i) => () => timedRun('docker', ['run', '-d', '--name', `load-${i}`, IMAGE, 'sleep', '3600'], docker)),
        20,
      );
    });
    const running = (await timedRun('docker', ['ps', '-q', '--filter', 'status=running'], docker)).stdout.split('\n').filter(Boolean).length;
    const mem = memoryOf(serve.pid!);
    const watches = Object.values((await tallyOf(cluster)).openWatches).reduce((a, b) => a + b, 0);
    const failed = created.filter((c) => c.code !== 0);
    console.log(
      `berth serve, ${SERVE_CONTAINERS} containers created 20 at a time: ${running} running, ${failed.length} creates failed; create ${times(created.map((c) => c.ms))}; berth serve's memory ${mem.now.toFixed(0)} MB (peak ${mem.peak.toFixed(0)} MB); ${watches} open watches; ${rate}`,
    );
    for (const f of failed.slice(0, 3)) console.log(`  failed: ${f.stderr.trim()}`);
    reportGoal({
      area: 'load',
      measure: `berth serve with ${SERVE_CONTAINERS} live containers: memory`,
      value: `${mem.now.toFixed(0)} MB`,
      ratio: mem.now,
      reference: `create ${times(created.map((c) => c.ms))}`,
      goal: '≤ 300 MB',
    });
    reportGoal({
      area: 'load',
      measure: `berth serve with ${SERVE_CONTAINERS} live containers: running`,
      value: `${running} of ${SERVE_CONTAINERS}`,
      ratio: running,
      reference: `${failed.length} creates failed`,
      goal: `≥ ${SERVE_CONTAINERS} running`,
    });
    await bounded(
      Array.from({ length: SERVE_CONTAINERS }, (_, i) => () => timedRun('docker', ['rm', '-f', `load-${i}`], docker)),
      20,
    );
  } finally {
    serve.kill('SIGTERM');
    await new Promise((r) => serve.once('exit', r));
  }
}

async function planLoad(cluster: BenchCluster, env: NodeJS.ProcessEnv, dir: string): Promise<void> {
  const plan = join(dir, 'plan.yml');
  writeFileSync(
    plan,
    `plan:\n${['one', 'two', 'three'].map((n) => `  - task: ${n}\n    config: { platform: linux, run: { path: echo, args: [step-${n}] } }\n`).join('')}`,
  );
  let runs: Ended[] = [];
  const rate = await requestRate(cluster, async () => {
    runs = await Promise.all(Array.from({ length: PLANS }, () => timedRun(process.execPath, [cli, 'task', 'plan', 'run', plan, '--image', IMAGE], env)));
  });
  const exact = runs.filter((r) => r.code === 0 && ['one', 'two', 'three'].every((n) => r.stdout.includes(`step-${n}\n`))).length;
  const wrong = runs.filter((r) => r.code === 0 && !['one', 'two', 'three'].every((n) => r.stdout.includes(`step-${n}\n`))).length;
  console.log(`${PLANS} plans of 3 steps at once: ${exact} exact, ${PLANS - exact - wrong} failed, ${wrong} wrong; ${times(runs.map((r) => r.ms))}; ${rate}`);
  for (const r of runs.filter((x) => x.code !== 0).slice(0, 3)) console.log(`  failed (${r.code}): ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`);
  reportGoal({
    area: 'load',
    measure: `${PLANS} task plans of 3 steps at once: wrong results`,
    value: `${wrong} wrong, ${exact} exact`,
    ratio: wrong,
    reference: times(runs.map((r) => r.ms)),
    goal: '≤ 0 wrong',
  });
}

/**
 * A priority level of one seat that rejects what it cannot seat, for user `shim`. Seats are shared out by shares
 * (600 in all by default): a ballast level of 2000 shares that nobody uses brings the tight level's one share down to
 * one seat, and it may not borrow seats from the others (an unset borrowing limit lets it, and the first run of this
 * bench saw no rejection at all).
 */
const THROTTLE = [
  {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name: 'berth-bench-ballast' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 2000, lendablePercent: 100, limitResponse: { type: 'Reject' } } },
  },
  {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name: 'berth-bench-tight' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } } },
  },
  {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: 'berth-bench-tight' },
    spec: {
      priorityLevelConfiguration: { name: 'berth-bench-tight' },
      matchingPrecedence: 100,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: 'shim' } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        },
      ],
    },
  },
];

async function throttledCalls(cluster: BenchCluster, env: NodeJS.ProcessEnv, dir: string): Promise<void> {
  const kubectl = (args: string[], input?: string) => spawnSync('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { input, encoding: 'utf8' });
  kubectl(['-n', cluster.ns, 'apply', '-f', join(root, 'deploy/rbac/shim-role.yaml')]);
  kubectl(['-n', cluster.ns, 'create', 'rolebinding', 'berth-shim', '--role', 'berth-shim', '--user', 'shim']);
  const shimEnv = { ...env, PATH: `${join(dir, 'shim')}:${env.PATH ?? ''}`, BERTH_CONTEXT: 'berth-dev-shim', BERTH_SHIM_AGENT: '0' };
  const input = 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n';
  const call = () => timedRun('docker', ['run', '--rm', '-i', '--network', 'none', FN], shimEnv, input);
  const reference = await call();
  if (reference.code !== 0) throw new Error(`the unthrottled call failed: ${reference.stderr}`);
  const applied = kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: THROTTLE }));
  if (applied.status !== 0) throw new Error(`the FlowSchema: ${applied.stderr}`);
  try {
    const rejectedBefore = await metricSum(cluster, 'apiserver_flowcontrol_rejected_requests_total', { priority_level: 'berth-bench-tight' });
    const calls = await Promise.all(Array.from({ length: 20 }, call));
    const rejected = (await metricSum(cluster, 'apiserver_flowcontrol_rejected_requests_total', { priority_level: 'berth-bench-tight' })) - rejectedBefore;
    const exact = calls.filter((c) => c.code === 0 && c.stdout === reference.stdout).length;
    const wrong = calls.filter((c) => c.code === 0 && c.stdout !== reference.stdout).length;
    const failed = calls.filter((c) => c.code !== 0);
    console.log(
      `20 function calls at once on a priority level of one seat (Reject): ${rejected} requests rejected with 429 by kube-apiserver; ${exact} exact, ${failed.length} failed, ${wrong} wrong; ${times(calls.map((c) => c.ms))} (one unthrottled ${s(reference.ms)})`,
    );
    for (const f of failed.slice(0, 3)) console.log(`  failed: ${f.stderr.trim().split('\n').slice(-1).join('')}`);
    reportGoal({
      area: 'load',
      measure: '20 calls throttled by API Priority and Fairness (429): wrong or failed',
      value: `${wrong} wrong, ${failed.length} failed (${rejected} rejections)`,
      ratio: wrong + failed.length,
      reference: `${exact} exact`,
      goal: '≤ 0 calls',
    });
  } finally {
    kubectl(['delete', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: THROTTLE }));
  }
}

async function main(): Promise<void> {
  const cluster = await startBenchCluster('berth-bench-load-', ['--nodes', '2', '--users', USERS]);
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-load-files-'));
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      KUBECONFIG: cluster.kubeconfig,
      BERTH_NAMESPACE: cluster.ns,
      BERTH_HELPER_IMAGE: IMAGE,
      BERTH_OWNER: 'bench',
    };
    for (const k of ['BERTH_CONFIG', 'BERTH_KUBECONFIG', 'BERTH_CONTEXT', 'BERTH_TASK_ARTIFACTS', 'BERTH_TRACE']) delete env[k];
    const parts = (process.env.BENCH_LOAD_PARTS ?? 'functions,serve,plans,throttle').split(',');
    if (parts.includes('functions')) await functionLoad(cluster, env, dir);
    if (parts.includes('serve')) await serveLoad(cluster, env, dir);
    if (parts.includes('plans')) await planLoad(cluster, env, dir);
    if (parts.includes('throttle')) {
      if (!parts.includes('functions')) spawnSync(process.execPath, [cli, 'shim', 'install', join(dir, 'shim')]);
      await throttledCalls(cluster, env, dir);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    cluster.down();
  }
}

await main();
