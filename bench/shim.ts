// Benchmark of berth's docker shim on a fresh dev cluster, side by side in one run:
//   per function: the default path (a thin `docker` client of the shim agent, warm pod or cold), a berth
//   process per call (BERTH_SHIM_AGENT=0), berth's runtime in-process (no process start), the
//   kubectl-shelling approach of the old kustomize proposal (create, kubectl wait, kubectl attach, delete)
//   and a bare create→terminated pod cycle through the API, against `podman run`;
//   the start-up of a `docker` process of its own (`docker version`, a thin `docker run` client) against `node -e ''`;
//   a kustomize build with 10 container functions, berth vs a podman-backed docker.
// Goal rows go to the table of `npm run bench` (bench/goal-rows.ts).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { ClusterClient } from '../src/kube/client.js';
import { runWorkload } from '../src/runtime/run.js';
import { devClusterUp } from './bench-cluster.js';
import { kustomization } from './kustomize-fixture.js';
import { reportGoal } from './goal-rows.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(root, 'dist/src/cli/main.js');
const reference = join(root, 'test/e2e/shim/fixtures');
const IMAGE = 'localhost/berth/krm-echo:1';
/** berth's helper containers (the --network none gate) use the test busybox: the dev clusters pull from no registry */
const HELPER_IMAGE = 'localhost/berth/busybox:1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const STARTUP_ROUNDS = 21;
const NS = 'bench-shim';
const INPUT = 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n';
const DOCKER_ARGV = [
  'run',
  '--rm',
  '-i',
  '-a',
  'STDIN',
  '-a',
  'STDOUT',
  '-a',
  'STDERR',
  '--network',
  'none',
  '--user',
  'nobody',
  '--security-opt=no-new-privileges',
  IMAGE,
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${x.toFixed(0)} ms`;

function timedWithStderr(cmd: string, args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<{ ms: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(cmd, args, { env, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) =>
      code === 0 ? resolve({ ms: performance.now() - t, stderr: err }) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}`)),
    );
    child.stdin.end(input);
  });
}

const timed = async (cmd: string, args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<number> => (await timedWithStderr(cmd, args, env, input)).ms;

/**
 * A warm call through the agent with BERTH_TRACE=1: its wall time, and the part the client itself spent
 * (all of it but the wait between sending its request and receiving the exit code, which is the agent's).
 */
async function thinClientCall(env: NodeJS.ProcessEnv): Promise<{ wall: number; own: number }> {
  const { ms, stderr } = await timedWithStderr('docker', DOCKER_ARGV, { ...env, BERTH_TRACE: '1' }, INPUT);
  const at = (phase: string): number => {
    const m = new RegExp(`berth trace:\\s+([\\d.]+) ms .*${phase}`).exec(stderr);
    if (!m) throw new Error(`no "${phase}" trace line from the client:\n${stderr}`);
    return Number(m[1]);
  };
  return { wall: ms, own: ms - (at('client: exit code received') - at('client: connected to the agent')) };
}

/** Waits (30 s at most) until the agent's pool holds `pods` warm pods, as it does once its refills are done. */
async function poolSettled(agentSocket: string, pods: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const ls = spawnSync(process.execPath, [cli, 'shim', 'pool', 'ls', '--socket', agentSocket], { encoding: 'utf8' });
    if (ls.stdout.split('\n').filter((l) => l.startsWith('krm-')).length >= pods) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  process.stderr.write(`bench: the pool did not reach ${pods} warm pods within 30 s\n`);
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, input = ''): void {
  const r = spawnSync(cmd, args, { env, input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
}

/** The old proposal's way: four kubectl processes around one pod. */
async function kubectlPath(env: NodeJS.ProcessEnv, i: number): Promise<number> {
  const name = `kubectl-path-${i}`;
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'krm-pod' } },
    spec: { restartPolicy: 'Never', containers: [{ name: 'default', image: IMAGE, stdin: true, stdinOnce: true }] },
  };
  const t = performance.now();
  run('kubectl', ['-n', NS, 'create', '-f', '-'], env, JSON.stringify(pod));
  run('kubectl', ['-n', NS, 'wait', '--for=condition=Ready', `pod/${name}`, '--timeout=60s'], env);
  run('kubectl', ['-n', NS, 'attach', '-i', '-q', `pod/${name}`, '-c', 'default'], env, INPUT);
  run('kubectl', ['-n', NS, 'delete', 'pod', name, '--grace-period=0', '--wait=false'], env);
  return performance.now() - t;
}

/** create → terminated → delete through the API, no stdin, no attach: the floor any runner pays. */
async function bareCycle(kc: k8s.KubeConfig, i: number): Promise<number> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const name = `bare-${i}`;
  const t = performance.now();
  const list = await core.listNamespacedPod({ namespace: NS });
  let req: { abort(): void } | undefined;
  const done = new Promise<void>((resolve, reject) => {
    new k8s.Watch(kc)
      .watch(
        `/api/v1/namespaces/${NS}/pods`,
        { resourceVersion: list.metadata!.resourceVersion, fieldSelector: `metadata.name=${name}` },
        (_t, p: k8s.V1Pod) => {
          if (p.status?.containerStatuses?.[0]?.state?.terminated) resolve();
        },
        (err) => err && reject(err),
      )
      .then((r) => (req = r), reject);
  });
  await core.createNamespacedPod({
    namespace: NS,
    body: { metadata: { name }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: IMAGE }] } },
  });
  await done;
  req?.abort();
  await core.deleteNamespacedPod({ namespace: NS, name, gracePeriodSeconds: 0 });
  return performance.now() - t;
}

async function inProcess(kubeconfig: string): Promise<number> {
  // a KubeConfig of its own: berth's client shares kept-alive connections through it, which the bench's own
  // client-node calls (not retried as berth's are) should not meet
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const stdin = new PassThrough();
  stdin.end(INPUT);
  const sink = () => new Writable({ write: (_c, _e, cb) => cb() });
  const t = performance.now();
  const { exitCode } = await runWorkload(
    { image: IMAGE, stdin: true, network: 'none', user: { uid: 65534 }, noNewPrivileges: true },
    { stdin, stdout: sink(), stderr: sink() },
    { kube: new ClusterClient(kc, NS), owner: 'bench', helperImage: HELPER_IMAGE },
  );
  if (exitCode !== 0) throw new Error(`in-process run exited ${exitCode}`);
  return performance.now() - t;
}

async function main(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'berth-bench-shim-'));
  const up = devClusterUp(stateDir);
  if (up.status !== 0) throw new Error('the dev cluster did not start');
  try {
    const kubeconfig = join(stateDir, 'kubeconfig');
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const shimDir = join(stateDir, 'shim-bin');
    chmodSync(cli, 0o755);
    execFileSync(process.execPath, [cli, 'shim', 'install', shimDir], { stdio: 'ignore' });
    const base: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig, BERTH_NAMESPACE: NS, BERTH_HELPER_IMAGE: HELPER_IMAGE };
    delete base.BERTH_SHIM_AGENT;
    delete base.BERTH_TRACE;
    // the default path (the agent), with a socket of this run's own
    const agentSocket = join(stateDir, 'agent', 'agent.sock');
    const agentEnv = { ...base, PATH: `${shimDir}:${process.env.PATH}`, BERTH_SHIM_AGENT_SOCKET: agentSocket };
    // a berth process per call, as before the agent was the default
    const berthEnv = { ...agentEnv, BERTH_SHIM_AGENT: '0' };
    const podmanEnv = { ...base, PATH: `${reference}:${process.env.PATH}` };
    // The same agent, each call neither taking nor leaving warm pods: a cold call without process start-up.
    const coldAgentEnv = { ...agentEnv, BERTH_SHIM_POOL: '0' };
    run('kubectl', ['create', 'namespace', NS], base);

    // One warm-up of each, so image and page caches do not favour whichever runs second.
    await timed('docker', DOCKER_ARGV, berthEnv, INPUT);
    await timed('docker', DOCKER_ARGV, podmanEnv, INPUT);
    await timed('docker', DOCKER_ARGV, agentEnv, INPUT); // also starts the agent, and warms the plan
    await bareCycle(kc, 0);
    const r = {
      shim: [] as number[],
      agent: [] as number[],
      warm: [] as number[],
      warmClientOwn: [] as number[],
      inProcess: [] as number[],
      kubectl: [] as number[],
      bare: [] as number[],
      podman: [] as number[],
      node: [] as number[],
      version: [] as number[],
    };
    for (let i = 1; i <= ROUNDS; i++) {
      process.stderr.write(`bench: shim round ${i}/${ROUNDS}\n`);
      r.shim.push(await timed('docker', DOCKER_ARGV, berthEnv, INPUT));
      r.agent.push(await timed('docker', DOCKER_ARGV, coldAgentEnv, INPUT));
      // the pool refills in the background: each warm call finds the pod the previous one started
      const warm = await thinClientCall(agentEnv);
      r.warm.push(warm.wall);
      r.warmClientOwn.push(warm.own);

      r.inProcess.push(await inProcess(kubeconfig));
      r.kubectl.push(await kubectlPath(base, i));
      r.bare.push(await bareCycle(kc, i));
      r.podman.push(await timed('docker', DOCKER_ARGV, podmanEnv, INPUT));
    }
    // start-up figures are small beside the machine's noise: more samples, each pair side by side
    for (let i = 0; i < STARTUP_ROUNDS; i++) {
      r.node.push(await timed(process.execPath, ['-e', ''], base));
      r.version.push(await timed('docker', ['version', '--format', '{{.Client.Version}}'], agentEnv));
    }
    const m = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, median(v)])) as Record<keyof typeof r, number>;
    console.log(`\nper function (median of ${ROUNDS}):`);
    console.log(`  berth process per call, cold     ${ms(m.shim)}`);
    console.log(`  default path (agent), cold       ${ms(m.agent)}`);
    console.log(`  default path (agent), warm pod   ${ms(m.warm)}`);
    console.log(`  berth runtime (in-process, cold) ${ms(m.inProcess)}`);
    console.log(`  kubectl create/wait/attach/rm    ${ms(m.kubectl)}`);
    console.log(`  bare create→terminated (API)     ${ms(m.bare)}`);
    console.log(`  podman run (reference)           ${ms(m.podman)}`);
    console.log(`  warm / kubectl path              ${(m.warm / m.kubectl).toFixed(2)}x   (goal ≤ 0.33x)`);
    console.log(`  warm / podman run                ${(m.warm / m.podman).toFixed(2)}x   (goal ≤ 0.50x)`);
    console.log(`  cold shim / kubectl path         ${(m.shim / m.kubectl).toFixed(2)}x   (goal ≤ 1.0x)`);
    console.log(`  cold agent / kubectl path        ${(m.agent / m.kubectl).toFixed(2)}x`);
    console.log(`  berth in-process - bare cycle    ${ms(m.inProcess - m.bare)}`);
    const versionOwn = m.version - m.node;
    const clientOwn = m.warmClientOwn - m.node;
    console.log(`  node -e '' (baseline)            ${ms(m.node)}`);
    console.log(`  docker version, own time         ${ms(versionOwn)}   (goal ≤ 60 ms)`);
    console.log(`  thin docker run client, own time ${ms(clientOwn)}   (goal ≤ 60 ms)`);
    const vs = (what: string, x: number) => `${what} ${ms(x)}`;
    reportGoal({
      area: 'shim',
      measure: 'one function call, default settings, repeated (warm pod through the agent)',
      value: ms(m.warm),
      ratio: m.warm / m.kubectl,
      reference: vs('kubectl create/wait/attach/delete', m.kubectl),
      goal: '≤ 0.33×',
    });
    reportGoal({
      area: 'shim',
      measure: 'one function call, default settings, repeated (warm pod through the agent)',
      value: ms(m.warm),
      ratio: m.warm / m.podman,
      reference: vs('podman run', m.podman),
      goal: '≤ 0.5×',
    });
    reportGoal({
      area: 'shim',
      measure: 'first call of a function (cold, through the agent)',
      value: ms(m.agent),
      ratio: m.agent / m.kubectl,
      reference: vs('kubectl flow', m.kubectl),
      goal: '≤ 1.0×',
    });
    reportGoal({
      area: 'shim',
      measure: 'first call of a function (cold, a berth process: BERTH_SHIM_AGENT=0)',
      value: ms(m.shim),
      ratio: m.shim / m.kubectl,
      reference: vs('kubectl flow', m.kubectl),
      goal: '≤ 1.0×',
    });
    reportGoal({
      area: 'shim',
      measure: '`docker version`, its own time (beyond starting node)',
      value: ms(m.version),
      ratio: versionOwn,
      reference: vs("node -e ''", m.node),
      goal: '≤ 60 ms',
    });
    reportGoal({
      area: 'shim',
      measure: 'thin `docker run` client, its own time (beyond starting node; the agent does the run)',
      value: `${ms(m.warmClientOwn)} of ${ms(m.warm)}`,
      ratio: clientOwn,
      reference: vs("node -e ''", m.node),
      goal: '≤ 60 ms',
    });

    const dir = join(stateDir, 'kustomize10');
    kustomization(dir, 10);
    const args = ['kustomize', '--enable-alpha-plugins', dir];
    const kBerth = await timed('kubectl', args, berthEnv);
    const kAgentCold = await timed('kubectl', args, coldAgentEnv);
    // a plan the pool has not seen: the first build pays cold starts, later ones find warm pods
    spawnSync(process.execPath, [cli, 'shim', 'pool', 'drain', '--socket', agentSocket], { stdio: 'ignore' });
    const kFirst = await timed('kubectl', args, agentEnv);
    const kSecond = await timed('kubectl', args, agentEnv);
    // A GitOps controller renders again minutes later, by when the pool has refilled: builds on a settled pool
    // (the burst of 10 calls of one plan keeps 8 pods), median of 3.
    const settled: number[] = [];
    for (let i = 0; i < 3; i++) {
      await poolSettled(agentSocket, 8);
      settled.push(await timed('kubectl', args, agentEnv));
    }
    const kSettled = median(settled);
    const kPodman = await timed('kubectl', args, podmanEnv);
    console.log(`\nkustomize build, 10 container functions:`);
    console.log(
      `  berth (process per function) ${ms(kBerth)}   agent, pool off ${ms(kAgentCold)}   agent+pool first build ${ms(kFirst)}   second build right after ${ms(kSecond)}   on a settled pool ${ms(kSettled)}   podman ${ms(kPodman)}`,
    );
    console.log(
      `  second build / podman ${(kSecond / kPodman).toFixed(2)}x (goal ≤ 1.0x)   first build / podman ${(kFirst / kPodman).toFixed(2)}x (goal ≤ 2.0x)   process per function / podman ${(kBerth / kPodman).toFixed(2)}x`,
    );
    reportGoal({
      area: 'shim',
      measure: 'kubectl kustomize, 10 container functions, a later build, the pool settled (default path)',
      value: ms(kSettled),
      ratio: kSettled / kPodman,
      reference: vs('podman-backed docker', kPodman),
      goal: '≤ 1.0×',
    });
    reportGoal({
      area: 'shim',
      measure: 'kubectl kustomize, 10 container functions, second build right after the first (refills under way)',
      value: ms(kSecond),
      ratio: kSecond / kPodman,
      reference: vs('podman-backed docker', kPodman),
      goal: '≤ 1.0×',
    });
    reportGoal({
      area: 'shim',
      measure: 'kubectl kustomize, 10 container functions, first build (default path)',
      value: ms(kFirst),
      ratio: kFirst / kPodman,
      reference: vs('podman-backed docker', kPodman),
      goal: '≤ 2.0×',
    });
  } finally {
    try {
      process.kill(Number(readFileSync(`${join(stateDir, 'agent', 'agent.sock')}.pid`, 'utf8')), 'SIGTERM');
    } catch {
      // no agent was started
    }
    spawnSync(process.execPath, [cli, 'dev-cluster', 'down', '--state-dir', stateDir], { stdio: 'inherit' });
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
