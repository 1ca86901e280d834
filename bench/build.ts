// Benchmark of `docker build` through berth serve (issue 31): a small Dockerfile (a base, a RUN, a COPY of a file of
// the round's own) built with the docker CLI's classic builder against berth serve and against podman's service,
// measured in the same run. berth's figure is the whole build as the CLI waits for it: the builder pod's start, the
// base pulled from the dev cluster's registry, buildah, the image read out and pushed; podman builds on this
// machine from its own store. Both build with --no-cache, so no round reuses an earlier one's layers.
// Run: npm run build && node dist/bench/build.js   (BENCH_ROUNDS)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REGISTRY_ADDRESS } from '../src/devcluster/registry.js';
import { startBenchCluster } from './bench-cluster.js';
import { reportGoal } from './goal-rows.js';

const cli = join(fileURLToPath(new URL('../../', import.meta.url)), 'dist/src/cli/main.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BUILDER = 'localhost/berth/builder:1';
const BUSYBOX = 'localhost/berth/busybox:1';

const progress = (what: string): boolean => process.stderr.write(`bench: ${what}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function mustRun(cmd: string, args: string[], env?: NodeJS.ProcessEnv): void {
  const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr?.toString().slice(-2000)}`);
}

/** `docker build` against the engine on `socket`, timed. */
function timedBuild(socket: string, context: string, tag: string, base: string): number {
  const t = performance.now();
  mustRun('docker', ['build', '-q', '--no-cache', '--build-arg', `BASE=${base}`, '-t', tag, context], {
    ...process.env,
    DOCKER_HOST: `unix://${socket}`,
    DOCKER_BUILDKIT: '0',
  });
  return performance.now() - t;
}

function contextFor(dir: string, round: number): string {
  const context = join(dir, `context-${round}`);
  mkdirSync(context);
  writeFileSync(join(context, 'Dockerfile'), 'ARG BASE\nFROM ${BASE}\nRUN echo built > /built\nCOPY round /round\nCMD ["cat", "/round"]\n');
  writeFileSync(join(context, 'round'), `${round} ${process.pid}\n`);
  return context;
}

function waitForSocket(socket: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const until = Date.now() + 30_000;
    const check = (): void => {
      if (existsSync(socket) && spawnSync('docker', ['version'], { env: { ...process.env, DOCKER_HOST: `unix://${socket}` }, stdio: 'ignore' }).status === 0)
        return resolve();
      if (Date.now() > until) return reject(new Error(`no engine answered on ${socket}`));
      setTimeout(check, 200);
    };
    check();
  });
}

async function main(): Promise<void> {
  const cluster = await startBenchCluster('berth-bench-build-');
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-build-'));
  const children: ChildProcess[] = [];
  try {
    mustRun(process.execPath, [cli, 'dev-cluster', 'load', '--state-dir', cluster.stateDir, BUILDER]);
    const base = `${REGISTRY_ADDRESS}/bench/busybox:1`;
    mustRun('podman', ['push', '--tls-verify=false', BUSYBOX, base]);
    const berthSocket = join(dir, 'berth.sock');
    const podmanSocket = join(dir, 'podman.sock');
    children.push(
      spawn(
        process.execPath,
        [
          cli,
          'serve',
          '--kubeconfig',
          cluster.kubeconfig,
          '-n',
          cluster.ns,
          '-H',
          `unix://${berthSocket}`,
          '--builder-image',
          BUILDER,
          '--image-registry',
          `http://${REGISTRY_ADDRESS}/bench-build`,
        ],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      ),
      spawn('podman', ['system', 'service', '--time=0', `unix://${podmanSocket}`], { stdio: 'ignore' }),
    );
    await Promise.all([waitForSocket(berthSocket), waitForSocket(podmanSocket)]);
    const berth: number[] = [];
    const podman: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const context = contextFor(dir, round);
      const tag = `localhost/berth-bench/build-${process.pid}:${round}`;
      berth.push(timedBuild(berthSocket, context, tag, base));
      podman.push(timedBuild(podmanSocket, context, tag, BUSYBOX));
      mustRun('podman', ['rmi', tag]);
      progress(`round ${round + 1}: berth ${berth.at(-1)!.toFixed(0)} ms, podman ${podman.at(-1)!.toFixed(0)} ms`);
    }
    const b = median(berth);
    const p = median(podman);
    console.log(`docker build of a small Dockerfile: berth serve ${b.toFixed(0)} ms; podman ${p.toFixed(0)} ms (${(b / p).toFixed(2)}x)`);
    reportGoal({
      area: 'serve',
      measure: 'docker build of a small Dockerfile (builder pod, base pulled, image pushed) vs podman build',
      value: `${b.toFixed(0)} ms`,
      ratio: b / p,
      reference: `podman ${p.toFixed(0)} ms`,
      goal: '≤ 5×',
    });
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : c.once('exit', () => resolve())))));
    rmSync(dir, { recursive: true, force: true });
    cluster.down();
  }
}

await main();
