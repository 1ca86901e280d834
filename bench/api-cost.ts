// What each operation of berth costs the API server: the requests it makes, by verb and resource, and the watches
// it holds, counted by the dev cluster's front proxy (the tally at /berth-dev/v1/requests: only the clients in front
// of it, so the cluster's own kubelet, controllers and scheduler are not in it). Operations: a warm function call
// (through the shim agent, a warm pod), a cold one (a berth process per call), a berth serve container from create to
// remove, the watches berth serve holds with 1 and with 10 containers and the requests it makes while they idle, a
// task step, and a plan of 3 steps. Goals (issue 29): a warm call at most 6 requests; berth serve one watch per
// namespace whatever the number of its containers; nothing polls.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tallyBetween, type TallySnapshot } from '../src/devcluster/faults/request-tally.js';
import { tallyOf } from './api-tally.js';
import { startBenchCluster, type BenchCluster } from './bench-cluster.js';
import { reportGoal } from './goal-rows.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(root, 'dist/src/cli/main.js');
const FN = 'localhost/berth/krm-echo:1';
const IMAGE = 'localhost/berth/busybox:1';
const INPUT = 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n';
const FN_ARGV = ['run', '--rm', '-i', '--network', 'none', FN];
const THREE_STEPS = `plan:\n${['one', 'two', 'three'].map((n) => `  - task: ${n}\n    config: { platform: linux, run: { path: "true" } }\n`).join('')}`;
const IDLE_MS = 10_000;

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, input = ''): void {
  const r = spawnSync(cmd, args, { env, input, encoding: 'utf8', timeout: 180_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
}

/** The requests made while `op` ran, as the tally counted them. */
async function cost(cluster: BenchCluster, op: () => void | Promise<void>): Promise<TallySnapshot> {
  const before = await tallyOf(cluster);
  await op();
  return tallyBetween(before, await tallyOf(cluster));
}

const line = (what: string, t: TallySnapshot): string =>
  `${what.padEnd(58)} ${String(t.total).padStart(4)} requests: ${Object.entries(t.requests)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')}`;

async function poolHolds(socket: string, pods: number): Promise<void> {
  for (let i = 0; i < 150; i++) {
    const ls = spawnSync(process.execPath, [cli, 'shim', 'pool', 'ls', '--socket', socket], { encoding: 'utf8' });
    if (ls.stdout.split('\n').slice(1).filter(Boolean).length >= pods) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the shim agent's pool did not reach ${pods} warm pods`);
}

/**
 * The warm call's requests apart from those of the refill that runs beside it: with a pool of one pod, the refill
 * creates one pod, watches it, and creates or renews its plan's NetworkPolicy; a warm call itself creates and watches
 * nothing (a call that fell back to a pod of its own would show a second pod created, and is refused here).
 */
function splitRefill(warm: TallySnapshot): { call: TallySnapshot; refill: TallySnapshot } {
  if ((warm.requests['create pods'] ?? 0) !== 1) throw new Error(`the warm call was not served warm: ${JSON.stringify(warm.requests)}`);
  const refillKeys = new Set(['create pods', 'watch pods', 'create networkpolicies', 'patch networkpolicies']);
  const part = (keep: (k: string) => boolean): TallySnapshot => {
    const requests = Object.fromEntries(Object.entries(warm.requests).filter(([k]) => keep(k)));
    return { requests, total: Object.values(requests).reduce((a, b) => a + b, 0), openWatches: {} };
  };
  return { call: part((k) => !refillKeys.has(k)), refill: part((k) => refillKeys.has(k)) };
}

async function functionCalls(cluster: BenchCluster, env: NodeJS.ProcessEnv, dir: string): Promise<void> {
  const socket = join(dir, 'agent.sock');
  const agent = {
    ...env,
    BERTH_SHIM_AGENT: '1',
    BERTH_SHIM_AGENT_SOCKET: socket,
    BERTH_SHIM_POOL_SIZE: '1',
    BERTH_SHIM_POOL_BURST: '1',
    BERTH_SHIM_POOL_IDLE: '300',
    PATH: `${join(dir, 'shim')}:${env.PATH ?? ''}`,
  };
  run(process.execPath, [cli, 'shim', 'install', join(dir, 'shim')], env);
  const cold = await cost(cluster, () => run('docker', FN_ARGV, { ...agent, BERTH_SHIM_AGENT: '0' }, INPUT));
  console.log(line('function call, cold (a berth process, BERTH_SHIM_AGENT=0)', cold));
  run('docker', FN_ARGV, agent, INPUT);
  await poolHolds(socket, 1);
  // the agent refills its pool while the call runs: the warm pod's replacement (a pod and its policy) is in the count
  const warm = await cost(cluster, async () => {
    run('docker', FN_ARGV, agent, INPUT);
    await poolHolds(socket, 1);
  });
  console.log(line('function call, warm (the agent, a warm pod; with its refill)', warm));
  const { call, refill } = splitRefill(warm);
  console.log(line('  the call itself', call));
  console.log(line("  the pool's refill (the next call's pod)", refill));
  reportGoal({
    area: 'api',
    measure: 'requests of a warm function call (the refill of the pool beside it)',
    value: `${call.total} requests (refill ${refill.total})`,
    ratio: call.total,
    reference: `cold call ${cold.total} requests`,
    goal: '≤ 6 requests',
  });
  const pid = Number(readFileSync(`${socket}.pid`, 'utf8'));
  process.kill(pid, 'SIGTERM');
}

async function serveContainers(cluster: BenchCluster, env: NodeJS.ProcessEnv, dir: string): Promise<void> {
  const socket = join(dir, 'berth.sock');
  const serve = spawn(
    process.execPath,
    [cli, 'serve', '--kubeconfig', cluster.kubeconfig, '-n', cluster.ns, '-H', `unix://${socket}`, '--instance', 'apicost'],
    { stdio: ['ignore', 'ignore', 'inherit'], env },
  );
  const docker = { ...env, DOCKER_HOST: `unix://${socket}` };
  try {
    for (let i = 0; i < 100 && spawnSync('docker', ['version'], { env: docker, stdio: 'ignore' }).status !== 0; i++)
      await new Promise((r) => setTimeout(r, 200));
    run('docker', ['pull', IMAGE], docker);
    const one = await cost(cluster, () => {
      run('docker', ['run', '-d', '--name', 'c0', IMAGE, 'sleep', '600'], docker);
      run('docker', ['rm', '-f', 'c0'], docker);
    });
    console.log(line('berth serve: a container from create to remove (run -d, rm -f)', one));
    const watches: number[] = [];
    for (const n of [1, 10]) {
      for (let i = 0; i < n; i++) run('docker', ['run', '-d', '--name', `w${n}-${i}`, IMAGE, 'sleep', '600'], docker);
      const idle = await cost(cluster, () => new Promise((r) => setTimeout(r, IDLE_MS)));
      const open = Object.values(idle.openWatches).reduce((a, b) => a + b, 0);
      watches.push(open);
      console.log(
        `berth serve with ${n} running container(s): ${open} open watches (${Object.entries(idle.openWatches)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}); ${idle.total} requests in ${IDLE_MS / 1000} s idle${
          idle.total
            ? `: ${Object.entries(idle.requests)
                .map(([k, v]) => `${k} ${v}`)
                .join(', ')}`
            : ''
        }`,
      );
      if (n === 10)
        reportGoal({
          area: 'api',
          measure: 'requests of berth serve in 10 s with 10 idle containers (nothing polls)',
          value: `${idle.total} requests`,
          ratio: idle.total,
          reference: `${one.total} for one container's life`,
          goal: '≤ 0 requests',
        });
      for (let i = 0; i < n; i++) run('docker', ['rm', '-f', `w${n}-${i}`], docker);
    }
    reportGoal({
      area: 'api',
      measure: 'watches berth serve holds in one namespace with 10 containers',
      value: `${watches[1]} watches`,
      ratio: watches[1]!,
      reference: `with 1 container: ${watches[0]}`,
      goal: '≤ 1 watches',
    });
  } finally {
    serve.kill('SIGTERM');
    await new Promise((r) => serve.once('exit', r));
  }
}

async function tasks(cluster: BenchCluster, env: NodeJS.ProcessEnv, dir: string): Promise<void> {
  writeFileSync(join(dir, 'true.yml'), 'platform: linux\nrun: { path: "true" }\n');
  writeFileSync(join(dir, 'three.yml'), THREE_STEPS);
  const step = await cost(cluster, () => run(process.execPath, [cli, 'task', 'run', '-c', join(dir, 'true.yml'), '--image', IMAGE], env));
  console.log(line('task step (berth task run of `true`)', step));
  const plan = await cost(cluster, () => run(process.execPath, [cli, 'task', 'plan', 'run', join(dir, 'three.yml'), '--image', IMAGE], env));
  console.log(line('plan of 3 steps (berth task plan run)', plan));
}

async function main(): Promise<void> {
  const cluster = await startBenchCluster('berth-bench-api-');
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-api-files-'));
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      KUBECONFIG: cluster.kubeconfig,
      BERTH_NAMESPACE: cluster.ns,
      BERTH_HELPER_IMAGE: IMAGE,
      BERTH_OWNER: 'bench',
    };
    for (const k of ['BERTH_CONFIG', 'BERTH_KUBECONFIG', 'BERTH_CONTEXT', 'BERTH_TASK_ARTIFACTS', 'BERTH_TRACE']) delete env[k];
    console.log("What each operation costs the API server (requests through the cluster's front proxy; the kubelet, controllers and scheduler not counted):");
    await functionCalls(cluster, env, dir);
    await serveContainers(cluster, env, dir);
    await tasks(cluster, env, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    cluster.down();
  }
}

await main();
