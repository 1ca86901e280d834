// Benchmark of `berth task` on the dev cluster, every figure beside a reference measured in the same run:
//   - a 200 MiB artifact from one plan step to the next, in both artifact modes (direct, pod to pod;
//     through berth), against the same bytes through a tar pipe of two `podman run`s;
//   - the per-step overhead of `berth task run` (a task running `true`) against the bare pod
//     create -> terminated cycle through the API and against `podman run` of the same image;
//   - a 3-step plan against the sum of its three steps run singly.
// The goals are ours (the issue sets none); docs/benchmarks.md gives the reason for each.
// Run: npm run build && node dist/bench/task.js   (BENCH_ROUNDS, BENCH_ARTIFACT_ROUNDS, BENCH_ARTIFACT_MIB)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchCluster } from './bench-cluster.js';
import { reportGoal } from './goal-rows.js';
import { podPhase } from './pod-phase.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(root, 'dist/src/cli/main.js');
const IMAGE = 'localhost/berth/busybox:1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ARTIFACT_ROUNDS = Number(process.env.BENCH_ARTIFACT_ROUNDS ?? 3);
const MIB = Number(process.env.BENCH_ARTIFACT_MIB ?? 200);
const MODES = ['direct', 'through-berth'] as const;

const progress = (what: string): boolean => process.stderr.write(`bench: ${what}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number): string => `${x.toFixed(0)} ms`;

function timed(cmd: string, args: string[], env?: NodeJS.ProcessEnv): number {
  return timedWithStderr(cmd, args, env).ms;
}

function timedWithStderr(cmd: string, args: string[], env?: NodeJS.ProcessEnv): { ms: number; stderr: string } {
  const t = performance.now();
  const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr?.toString().slice(-2000)}`);
  return { ms: performance.now() - t, stderr: r.stderr.toString() };
}

/**
 * The artifact's hand-off in a plan run with BERTH_TRACE=1: from the producing task's end to its outputs
 * read (through berth: the exec out; direct: nothing to read), plus the consuming pod's `inputs` container
 * from its start to the inputs in place (through berth: the attach in; direct: the fetch from the producing
 * pod). The container starts around it, whose noise would drown a transfer of a few seconds, are left out.
 */
function handoff(stderr: string): number {
  const phase = (step: string, name: string): number => {
    const section = stderr.split(/^task /m).find((x) => x.startsWith(`${step}\n`)) ?? '';
    const m = new RegExp(`\\(\\+\\s*([\\d.]+)\\)\\s+${name}$`, 'm').exec(section);
    if (!m) throw new Error(`no "${name}" in the trace of step ${step}:\n${stderr}`);
    return Number(m[1]);
  };
  return phase('make', 'outputs read') + phase('use', 'inputs in place');
}

/** A plan whose first step writes `bytes` into an output that the second step takes as its input. */
function artifactPlan(bytes: number): string {
  return `plan:
  - task: make
    config:
      platform: linux
      outputs: [{ name: blob }]
      run: { path: sh, args: [-c, 'head -c ${bytes} /dev/zero > blob/data'] }
  - task: use
    config:
      platform: linux
      inputs: [{ name: blob }]
      run: { path: "true" }
`;
}

const TRUE_TASK = 'platform: linux\nrun: { path: "true" }\n';
const THREE_STEPS = `plan:\n${['one', 'two', 'three'].map((n) => `  - task: ${n}\n    config: { platform: linux, run: { path: "true" } }\n`).join('')}`;

/** The same bytes through two containers: tar out of one `podman run`, into another, over a pipe. */
function podmanPipe(bytes: number): number {
  const produce = `podman run --rm ${IMAGE} sh -c 'mkdir /w && head -c ${bytes} /dev/zero > /w/data && tar -c -f - -C /w .'`;
  const consume = `podman run --rm -i ${IMAGE} sh -c 'mkdir /w && tar -x -f - -C /w'`;
  return timed('bash', ['-c', `set -o pipefail; ${produce} | ${consume}`]);
}

async function main(): Promise<void> {
  const cluster = await startBenchCluster();
  const files = mkdtempSync(join(tmpdir(), 'berth-bench-task-'));
  try {
    const { kubeconfig, kc, core, ns } = cluster;
    const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig, BERTH_NAMESPACE: ns, BERTH_HELPER_IMAGE: IMAGE, BERTH_OWNER: 'bench' };
    for (const k of ['BERTH_CONFIG', 'BERTH_KUBECONFIG', 'BERTH_CONTEXT', 'BERTH_TASK_ARTIFACTS']) delete env[k];
    const file = (name: string, text: string): string => {
      writeFileSync(join(files, name), text);
      return join(files, name);
    };
    const trueTask = file('true.yml', TRUE_TASK);
    const threeSteps = file('three.yml', THREE_STEPS);
    const bigPlan = file('big.yml', artifactPlan(MIB * 1024 * 1024));
    const emptyPlan = file('empty.yml', artifactPlan(0));
    const taskRun = (): number => timed(process.execPath, [cli, 'task', 'run', '-c', trueTask, '--image', IMAGE], env);
    const planRun = (plan: string, mode?: string): number =>
      timed(process.execPath, [cli, 'task', 'plan', 'run', plan, '--image', IMAGE, ...(mode ? ['--artifacts', mode] : [])], env);
    const handoffOf = (plan: string, mode: string): number =>
      handoff(
        timedWithStderr(process.execPath, [cli, 'task', 'plan', 'run', plan, '--image', IMAGE, '--artifacts', mode], { ...env, BERTH_TRACE: '1' }).stderr,
      );

    progress('warming up');
    timed('podman', ['run', '--rm', IMAGE, 'true']);
    await podPhase(kc, core, ns, IMAGE, 'warm', ['true'], (p) => p.status?.phase === 'Succeeded');
    taskRun();

    const podman: number[] = [];
    const pod: number[] = [];
    const task: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      progress(`per-step round ${i + 1}/${ROUNDS}`);
      podman.push(timed('podman', ['run', '--rm', IMAGE, 'true']));
      pod.push(await podPhase(kc, core, ns, IMAGE, `cycle-${i}`, ['true'], (p) => p.status?.phase === 'Succeeded'));
      task.push(taskRun());
    }
    const plan3: number[] = [];
    for (let i = 0; i < Math.max(1, Math.ceil(ROUNDS / 2)); i++) {
      progress(`3-step plan round ${i + 1}`);
      plan3.push(planRun(threeSteps));
    }

    const artifact: Record<string, { big: number[]; empty: number[] }> = {
      podman: { big: [], empty: [] },
      direct: { big: [], empty: [] },
      'through-berth': { big: [], empty: [] },
    };
    for (let i = 0; i < ARTIFACT_ROUNDS; i++) {
      progress(`${MIB} MiB artifact round ${i + 1}/${ARTIFACT_ROUNDS}`);
      artifact.podman.big.push(podmanPipe(MIB * 1024 * 1024));
      artifact.podman.empty.push(podmanPipe(0));
      for (const mode of MODES) {
        artifact[mode].big.push(handoffOf(bigPlan, mode));
        artifact[mode].empty.push(handoffOf(emptyPlan, mode));
      }
    }
    // Throughput: the artifact's size over what it adds to the same run with an empty artifact (berth: to
    // the hand-off phases of the plan; podman: to the whole pipe, whose two containers start side by side).
    const rate = (k: string): { mibs: number; added: number } => {
      const added = Math.max(1, median(artifact[k].big) - median(artifact[k].empty));
      return { mibs: MIB / (added / 1000), added };
    };

    const ref = rate('podman');
    console.log(`\nberth task, medians (per step: ${ROUNDS} rounds; artifacts: ${ARTIFACT_ROUNDS} rounds); image ${IMAGE}`);
    console.log(`${MIB} MiB artifact, step to step (time added over an empty artifact -> throughput):`);
    console.log(
      `  podman run | podman run (tar pipe)   ${ms(ref.added).padStart(9)}   ${ref.mibs.toFixed(0)} MiB/s   (runs ${ms(median(artifact.podman.big))}, empty ${ms(median(artifact.podman.empty))})`,
    );
    for (const mode of MODES) {
      const r = rate(mode);
      console.log(
        `  berth plan, --artifacts ${mode.padEnd(13)} ${ms(r.added).padStart(9)}   ${r.mibs.toFixed(0)} MiB/s   (hand-off ${ms(median(artifact[mode].big))}, empty ${ms(median(artifact[mode].empty))})   ${(r.mibs / ref.mibs).toFixed(2)}x the pipe`,
      );
      reportGoal({
        area: 'task',
        measure: `${MIB} MiB artifact step to step, ${mode}${mode === 'direct' ? ' (default)' : ''}`,
        value: `${r.mibs.toFixed(0)} MiB/s`,
        ratio: r.mibs / ref.mibs,
        reference: `podman run tar pipe ${ref.mibs.toFixed(0)} MiB/s`,
        goal: mode === 'direct' ? '≥ 0.5×' : '≥ 0.25×',
      });
    }
    const single = median(task);
    console.log('per step (a task running `true`):');
    console.log(
      `  berth task run ${ms(single)}; bare pod create -> Succeeded ${ms(median(pod))} (${(single / median(pod)).toFixed(2)}x); podman run ${ms(median(podman))} (${(single / median(podman)).toFixed(2)}x)`,
    );
    console.log(`  3-step plan ${ms(median(plan3))}; its steps run singly ${ms(3 * single)} (${(median(plan3) / (3 * single)).toFixed(2)}x)`);
    reportGoal({
      area: 'task',
      measure: 'berth task run `true` vs bare pod create -> Succeeded',
      value: ms(single),
      ratio: single / median(pod),
      reference: `pod cycle ${ms(median(pod))}`,
      goal: '≤ 2×',
    });
    reportGoal({
      area: 'task',
      measure: 'berth task run `true` vs podman run',
      value: ms(single),
      ratio: single / median(podman),
      reference: `podman run ${ms(median(podman))}`,
      goal: '≤ 3×',
    });
    reportGoal({
      area: 'task',
      measure: '3-step plan vs its steps run singly',
      value: ms(median(plan3)),
      ratio: median(plan3) / (3 * single),
      reference: `3 × task run ${ms(3 * single)}`,
      goal: '≤ 1×',
    });
  } finally {
    cluster.down();
    rmSync(files, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
