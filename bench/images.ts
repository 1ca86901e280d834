// Benchmark of an image handed from one plan step to the next (issue 31): a 50 MiB image tarball (image.tar, a docker
// save archive as registry-image writes it) given to `berth task plan run` as the artifact a step's `image:` names,
// against `podman load` of the same tarball, measured in the same run.
// berth's figure is the plan's time less the same plan run with --image (no artifact image): what the artifact image
// adds, which is berth reading and pushing it to the dev cluster's registry (--image-registry), or streaming it into a
// pod of the berth image that serves it (--image-server), and the node pulling and unpacking it.
// Each round's image differs (a file of the round's own), so the node pulls every round and caches nothing.
// Run: npm run build && node dist/bench/images.js   (BENCH_ROUNDS, BENCH_IMAGE_MIB)
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REGISTRY_ADDRESS } from '../src/devcluster/registry.js';
import { startBenchCluster } from './bench-cluster.js';
import { reportGoal } from './goal-rows.js';

const cli = join(fileURLToPath(new URL('../../', import.meta.url)), 'dist/src/cli/main.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MIB = Number(process.env.BENCH_IMAGE_MIB ?? 50);
const REGISTRY = REGISTRY_ADDRESS;
const BERTH_IMAGE = 'localhost/berth/berth:dev';
/** How the step's image reaches its node: a registry, or a pod that serves it. */
const SOURCES = { registry: ['--image-registry', `http://${REGISTRY}/bench`], pod: ['--image-server', BERTH_IMAGE] };

const progress = (what: string): boolean => process.stderr.write(`bench: ${what}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function run(cmd: string, args: string[], env?: NodeJS.ProcessEnv): number {
  const t = performance.now();
  const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr?.toString().slice(-2000)}`);
  return performance.now() - t;
}

/** A tarball of busybox, MIB of random bytes (no compression helps either side) and a file of the round's own. */
const tagOf = (round: number): string => `localhost/berth-bench/image-${process.pid}:${round}`;

function imageTarball(dir: string, round: number): string {
  const context = join(dir, `context-${round}`);
  mkdirSync(join(context, 'rootfs', 'bin'), { recursive: true });
  copyFileSync('/bin/busybox', join(context, 'rootfs', 'bin', 'busybox'));
  run('ln', ['-s', 'busybox', join(context, 'rootfs', 'bin', 'true')]);
  run('sh', ['-c', `head -c ${MIB * 1024 * 1024} /dev/urandom > "$1"`, 'sh', join(context, 'rootfs', 'data')]);
  writeFileSync(join(context, 'rootfs', 'round'), `${round} ${process.pid}\n`);
  writeFileSync(join(context, 'Containerfile'), 'FROM scratch\nCOPY rootfs/ /\n');
  const tag = tagOf(round);
  run('podman', ['build', '-q', '-t', tag, context]);
  const artifact = join(dir, `artifact-${round}`);
  mkdirSync(artifact);
  run('podman', ['save', '--format', 'docker-archive', '-o', join(artifact, 'image.tar'), tag]);
  run('podman', ['rmi', tag]);
  rmSync(context, { recursive: true, force: true });
  return artifact;
}

const PLAN = (image: boolean): string => `plan:\n  - task: use\n${image ? '    image: img\n' : ''}    config: { platform: linux, run: { path: /bin/true } }\n`;

async function main(): Promise<void> {
  const cluster = await startBenchCluster('berth-bench-images-');
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-images-'));
  try {
    run(process.execPath, [cli, 'dev-cluster', 'load', '--state-dir', cluster.stateDir, BERTH_IMAGE]);
    const env = { ...process.env, KUBECONFIG: cluster.kubeconfig, BERTH_HELPER_IMAGE: 'localhost/berth/busybox:1' };
    const withImage = join(dir, 'with-image.yml');
    const without = join(dir, 'without.yml');
    writeFileSync(withImage, PLAN(true));
    writeFileSync(without, PLAN(false));
    const planRun = (file: string, artifact: string, source: string[] = SOURCES.registry): number =>
      run(
        process.execPath,
        [cli, 'task', 'plan', 'run', file, '-n', cluster.ns, '-i', `img=${artifact}`, '--image', 'localhost/berth/busybox:1', ...source],
        env,
      );
    const berth: number[] = [];
    const served: number[] = [];
    const podman: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const artifact = imageTarball(dir, round);
      const tarball = join(artifact, 'image.tar');
      const base = planRun(without, artifact);
      berth.push(planRun(withImage, artifact) - base);
      served.push(planRun(withImage, artifact, SOURCES.pod) - base);
      podman.push(run('podman', ['load', '-q', '-i', tarball]));
      run('podman', ['rmi', '-f', tagOf(round)]);
      rmSync(artifact, { recursive: true, force: true });
      progress(
        `round ${round + 1}: berth +${berth.at(-1)!.toFixed(0)} ms (registry), +${served.at(-1)!.toFixed(0)} ms (served from a pod), podman load ${podman.at(-1)!.toFixed(0)} ms`,
      );
    }
    const b = median(berth);
    const sp = median(served);
    const p = median(podman);
    console.log(
      `${MIB} MiB image tarball as a step's image: berth adds ${b.toFixed(0)} ms through the registry, ${sp.toFixed(0)} ms served from a pod; podman load ${p.toFixed(0)} ms (${(b / p).toFixed(2)}x, ${(sp / p).toFixed(2)}x)`,
    );
    reportGoal({
      area: 'task',
      measure: `${MIB} MiB image tarball as the next step's image served from a pod (--image-server: feed, node pull) vs podman load`,
      value: `${sp.toFixed(0)} ms`,
      ratio: sp / p,
      reference: `podman load ${p.toFixed(0)} ms`,
      goal: '≤ 4×',
    });
    reportGoal({
      area: 'task',
      measure: `${MIB} MiB image tarball as the next step's image (push, node pull) vs podman load`,
      value: `${b.toFixed(0)} ms`,
      ratio: b / p,
      reference: `podman load ${p.toFixed(0)} ms`,
      goal: '≤ 4×',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    cluster.down();
  }
}

await main();
