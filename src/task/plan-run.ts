/**
 * `berth task plan run`: the steps of a plan in order (in_parallel ones together), each task a pod of
 * its own (run-task.ts). Artifacts pass from step to step through berth: a task's outputs are read
 * from its pod as tar streams, held in memory, and streamed into the next pods' inputs; nothing is
 * written to disk but the -o folders at the end. A failed step stops the plan with its code; its
 * on_failure hook runs, and every ensure hook runs whatever happened (except after an interrupt).
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { planStepIdentity } from './caches.js';
import { artifactTar, type Artifact, type ArtifactMode } from './artifacts.js';
import { parseTaskConfig } from './config.js';
import { tarEntries } from './inputs.js';
import { TaskUsageError, type Mapping } from './layout.js';
import { unpackTar } from './outputs.js';
import { parsePlanFile, type Plan, type Step } from './plan-config.js';
import { runResourceStep } from './resource-step.js';
import { EXIT_ABORTED, EXIT_ERRORED, runTaskStep } from './run-task.js';
import type { TaskTarget } from './targets.js';

export interface PlanRunOptions {
  planFile: string;
  inputs: Mapping[];
  outputs: Mapping[];
  image?: string;
  /** Where every step runs besides the cluster (targets.ts). */
  target?: TaskTarget;
  /** How outputs pass to later steps (artifacts.ts). */
  artifacts: ArtifactMode;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: Writable;
  stderr: Writable;
  signal: AbortSignal;
}

export async function runPlan(o: PlanRunOptions): Promise<number> {
  const say = (line: string): void => void o.stderr.write(`${line}\n`);
  let plan: Plan;
  try {
    plan = parsePlanFile(await readFile(o.planFile, 'utf8'), o.planFile);
  } catch (err) {
    say(`berth task: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? `cannot read the plan ${o.planFile}: no such file` : (err as Error).message}`);
    return EXIT_ERRORED;
  }
  const artifacts = new Map<string, Artifact>(o.inputs.map((m) => [m.name, { dir: resolve(o.cwd, m.dir) }]));
  for (const w of plan.warnings) say(`berth task: warning: ${w}`);
  const runner = new PlanRunner(o, artifacts, say);
  let code: number;
  try {
    code = await runner.all(plan.steps);
    if (code !== EXIT_ABORTED) code = await downloadArtifacts(o, artifacts, code, say);
  } finally {
    await runner.releaseAll();
  }
  say(code === 0 ? 'succeeded' : code === EXIT_ABORTED ? 'interrupted' : code === EXIT_ERRORED ? 'errored' : 'failed');
  return code;
}

/** -o folders at the end of the plan, from the plan's artifacts. */
async function downloadArtifacts(o: PlanRunOptions, artifacts: Map<string, Artifact>, code: number, say: (line: string) => void): Promise<number> {
  for (const m of o.outputs) {
    const a = artifacts.get(m.name);
    if (!a) {
      say(`berth task: no artifact \`${m.name}\` to download (-o ${m.name}=...): the plan's artifacts are ${[...artifacts.keys()].map((k) => `\`${k}\``).join(', ') || '(none)'}`);
      return code === 0 ? EXIT_ERRORED : code;
    }
    if ('dir' in a) continue;
    try {
      await unpackTar(await artifactTar(a), resolve(o.cwd, m.dir));
    } catch (err) {
      say(`berth task: could not download artifact \`${m.name}\` to ${m.dir}: ${(err as Error).message}`);
      return code === 0 ? EXIT_ERRORED : code;
    }
  }
  return code;
}

class PlanRunner {
  /** Pods kept to serve their outputs to later steps (direct artifacts): deleted when the plan ends. */
  private readonly kept: Array<() => Promise<void>> = [];

  constructor(
    private readonly o: PlanRunOptions,
    private readonly artifacts: Map<string, Artifact>,
    private readonly say: (line: string) => void,
  ) {}

  async releaseAll(): Promise<void> {
    await Promise.all(this.kept.splice(0).map((release) => release()));
  }

  /** Steps in order; the first that fails ends the sequence with its code. */
  async all(steps: Step[]): Promise<number> {
    for (const s of steps) {
      const code = await this.step(s);
      if (code !== 0) return code;
    }
    return 0;
  }

  private async step(s: Step): Promise<number> {
    if (this.o.signal.aborted) return EXIT_ABORTED;
    let code: number;
    if (s.kind === 'task') code = await this.task(s);
    else if (s.kind === 'get' || s.kind === 'put') code = await runResourceStep(s, { ...this.o, artifacts: this.artifacts, say: this.say });
    else if (s.kind === 'do') code = await this.all(s.steps);
    else {
      const codes = await Promise.all(s.steps.map((x) => this.step(x)));
      code = codes.find((c) => c !== 0) ?? 0;
    }
    if (code === EXIT_ABORTED) return code;
    if (code === 0 && s.onSuccess) code = await this.step(s.onSuccess);
    else if (code !== 0 && code !== EXIT_ERRORED && s.onFailure) await this.step(s.onFailure);
    if (s.ensure) {
      const ensured = await this.step(s.ensure);
      if (code === 0) code = ensured;
    }
    return code;
  }

  private async task(s: Extract<Step, { kind: 'task' }>): Promise<number> {
    this.say(`task ${s.name}`);
    let configText: string;
    let configFile: string;
    try {
      ({ configText, configFile } = await this.configOf(s));
    } catch (err) {
      this.say(`berth task: task ${s.name}${s.where}: ${(err as Error).message}`);
      return EXIT_ERRORED;
    }
    // The task's own inputs, each from the artifact input_mapping names (or the artifact of its name).
    let inputNames: string[];
    let outputNames: string[];
    try {
      const config = parseTaskConfig(configText, configFile);
      inputNames = config.inputs.map((i) => i.name);
      outputNames = config.outputs.map((x) => x.name);
    } catch (err) {
      this.say(`berth task: ${(err as Error).message}`);
      return EXIT_ERRORED;
    }
    const inputs: Mapping[] = [];
    for (const name of inputNames) {
      const from = s.inputMapping[name] ?? name;
      const a = this.artifacts.get(from);
      if (!a) continue;
      if ('dir' in a) inputs.push({ name, dir: a.dir });
      else inputs.push({ name, dir: `(artifact ${from})`, ...('tar' in a ? { tar: a.tar } : { from: a.pod }) });
    }
    const result = await runTaskStep({
      configFile,
      configText,
      inputs,
      outputs: [],
      capture: outputNames,
      serveOutputs: this.o.artifacts === 'direct',
      paramOverrides: s.params,
      paramsFromEnv: false,
      inPlan: true,
      // Caches belong to the step, as in a Concourse job (the plan file's absolute path).
      cacheIdentity: planStepIdentity(resolve(this.o.cwd, this.o.planFile), s.name),
      includeIgnored: false,
      privileged: false,
      image: this.o.image,
      target: this.o.target,
      step: s.name,
      args: [],
      env: this.o.env,
      cwd: this.o.cwd,
      stdout: this.o.stdout,
      stderr: this.o.stderr,
      signal: this.o.signal,
    });
    if (result.release) this.kept.push(result.release);
    for (const [name, a] of result.artifacts) this.artifacts.set(s.outputMapping[name] ?? name, a);
    return result.code;
  }

  /**
   * `config:` inline, or `file:` as Concourse reads it: `ARTIFACT/path/in/it.yml` from an artifact (a
   * local folder or an earlier step's output); a path no artifact starts is relative to the plan file.
   */
  private async configOf(s: Extract<Step, { kind: 'task' }>): Promise<{ configText: string; configFile: string }> {
    if (s.configText !== undefined) return { configText: s.configText, configFile: `${this.o.planFile} (task ${s.name})` };
    const file = s.file as string;
    const slash = file.indexOf('/');
    const a = slash > 0 ? this.artifacts.get(file.slice(0, slash)) : undefined;
    const rest = file.slice(slash + 1);
    if (a && 'dir' in a) return { configText: await readFile(join(a.dir, rest), 'utf8'), configFile: file };
    if (a) {
      const entry = (await tarEntries(await artifactTar(a))).find((e) => e.header.name.replace(/^\.\//, '') === rest);
      if (!entry) throw new TaskUsageError(`file ${file}: the artifact \`${file.slice(0, slash)}\` has no ${rest}`);
      return { configText: entry.data.toString('utf8'), configFile: file };
    }
    const path = resolve(dirname(resolve(this.o.cwd, this.o.planFile)), file);
    const configText = await readFile(path, 'utf8').catch(() => {
      throw new TaskUsageError(`file ${file}: neither an artifact's file nor a file next to the plan (${path})`);
    });
    return { configText, configFile: file };
  }
}
