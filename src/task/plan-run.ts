/**
 * `berth task plan run`: the steps of a plan (their order, in_parallel and hooks: plan-flow.ts), each
 * task a pod of its own (run-task.ts), each get and put too (resource-step.ts). Artifacts pass from step
 * to step pod to pod, or through berth (artifacts.ts); nothing is written to disk but the -o folders at
 * the end. A step that does not succeed stops the plan; berth exits with its code.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { planStepIdentity } from './caches.js';
import { artifactTar, type Artifact, type ArtifactMode } from './artifacts.js';
import { parseTaskConfig } from './config.js';
import { copyInputFolder, tarEntries } from './inputs.js';
import { TaskUsageError, type Mapping } from './layout.js';
import { checkOutputDirs } from './outputs.js';
import { unpackTar } from './unpack.js';
import { parsePlanFile, type Hooks, type Plan, type Step } from './plan-config.js';
import { runFlow } from './plan-flow.js';
import { runResourceStep } from './resource-step.js';
import { runTaskStep } from './run-task.js';
import type { Ledger } from './ledger.js';
import { ABORTED, ERRORED, exitCodeOf, outcomeWord, type StepOutcome } from './outcome.js';
import type { TaskTarget } from './targets.js';
import type { ConnectTask } from './task-cluster.js';
import { taskErrorText } from './error-text.js';
import { IMAGE_REGISTRY_ENV, pushStepImage, withStepImage, type ImageRegistry } from './step-image.js';
import { IMAGE_SERVER_ENV, serveStepImage } from './step-image-pod.js';
import { certificateIssuer, type ImageCa } from '../registry/image-ca.js';
import type { OwnImage } from '../registry/push-target.js';
import { helperImageOf } from '../runtime/plan.js';
import { loadPodTemplate } from '../runtime/pod-template.js';
import { loadRunSettings, type RunSettings } from '../runtime/settings.js';

/** How long the ensure hooks may run after an interrupt, in all (plan-flow.ts). */
export const ENSURE_AFTER_INTERRUPT_MS = 120_000;

export interface PlanRunOptions {
  planFile: string;
  /** The cluster, reached by each step as it starts (run-task.ts). */
  connect: ConnectTask;
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
  /** The first interrupt: running steps are aborted, then the ensure hooks run. */
  signal: AbortSignal;
  /** Told of every object the plan's steps create and delete (named at a second interrupt). */
  ledger?: Ledger;
  /** The bound of the ensure hooks after an interrupt; default ENSURE_AFTER_INTERRUPT_MS. */
  ensureTimeoutMs?: number;
  /** Where the images of steps with `image: ARTIFACT` are pushed (step-image.ts). */
  imageRegistry?: ImageRegistry;
  /** Or the berth image whose pods serve them (step-image-pod.ts). */
  imageServer?: string;
  /** The image CA whose certificates those pods present (--image-server-ca). */
  imageServerCa?: ImageCa;
}

export async function runPlan(o: PlanRunOptions): Promise<number> {
  const say = (line: string): void => void o.stderr.write(`${line}\n`);
  let plan: Plan;
  try {
    plan = parsePlanFile(await readFile(o.planFile, 'utf8'), o.planFile);
    await checkOutputDirs(o.outputs, o.cwd);
    const imaged = stepsWithImage(plan.steps);
    if (imaged.length && o.imageRegistry && o.imageServer)
      throw new TaskUsageError(
        `--image-registry (or $${IMAGE_REGISTRY_ENV}) and --image-server (or $${IMAGE_SERVER_ENV}) are two ways to hand a step its image: give one`,
      );
    if (imaged.length && !o.imageRegistry && !o.imageServer)
      throw new TaskUsageError(
        `${imaged.map((x) => `task ${x.name}${x.where}`).join(', ')}: image: names an artifact, which berth runs by pushing it to a registry the cluster's nodes pull from (--image-registry REGISTRY/PREFIX, or $${IMAGE_REGISTRY_ENV}) or by serving it from a pod of the berth image (--image-server IMAGE, or $${IMAGE_SERVER_ENV}): give one`,
      );
  } catch (err) {
    say(`berth task: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? `cannot read the plan ${o.planFile}: no such file` : taskErrorText(err)}`);
    return exitCodeOf(ERRORED);
  }
  const artifacts = new Map<string, Artifact>(o.inputs.map((m) => [m.name, { dir: resolve(o.cwd, m.dir) }]));
  for (const w of plan.warnings) say(`berth task: warning: ${w}`);
  const runner = new PlanRunner(o, artifacts, say);
  let outcome: StepOutcome;
  try {
    outcome = await runFlow(plan.steps, {
      interrupt: o.signal,
      ensureTimeoutMs: o.ensureTimeoutMs ?? ENSURE_AFTER_INTERRUPT_MS,
      runLeaf: (s, signal) => (s.kind === 'task' ? runner.task(s, signal) : runResourceStep(s, { ...o, signal, artifacts, say })),
    });
    // -o of an interrupted plan is not read: berth is on its way out (an interrupt while they are read stops the read).
    if (outcome.kind !== 'aborted' && !o.signal.aborted) outcome = await downloadArtifacts(o, artifacts, outcome, say);
    if (o.signal.aborted) outcome = ABORTED;
  } finally {
    await runner.releaseAll();
  }
  say(outcomeWord(outcome));
  return exitCodeOf(outcome);
}

/** -o folders at the end of the plan, from the plan's artifacts. */
async function downloadArtifacts(o: PlanRunOptions, artifacts: Map<string, Artifact>, outcome: StepOutcome, say: (line: string) => void): Promise<StepOutcome> {
  for (const m of o.outputs) {
    const a = artifacts.get(m.name);
    if (!a) {
      say(
        `berth task: no artifact \`${m.name}\` to download (-o ${m.name}=...): the plan's artifacts are ${[...artifacts.keys()].map((k) => `\`${k}\``).join(', ') || '(none)'}`,
      );
      return outcome.kind === 'succeeded' ? ERRORED : outcome;
    }
    try {
      if ('dir' in a) await copyInputFolder(a.dir, resolve(o.cwd, m.dir));
      else {
        const tar = await artifactTar(a, o.signal);
        if (o.signal.aborted) return ABORTED;
        await unpackTar(tar, resolve(o.cwd, m.dir));
      }
    } catch (err) {
      if (o.signal.aborted) return ABORTED;
      say(`berth task: could not download artifact \`${m.name}\` to ${m.dir}: ${(err as Error).message}`);
      return outcome.kind === 'succeeded' ? ERRORED : outcome;
    }
  }
  return outcome;
}

type TaskStep = Extract<Step, { kind: 'task' }>;

/** The task steps (hooks and groups included) that run in an artifact's image. */
function stepsWithImage(steps: Step[]): TaskStep[] {
  const hooks = (s: Hooks): Step[] => [s.ensure, s.onSuccess, s.onFailure].filter((h): h is Step => h !== undefined);
  return steps.flatMap((s): TaskStep[] => [
    ...(s.kind === 'task' && s.image ? [s] : []),
    ...(s.kind === 'in_parallel' || s.kind === 'do' ? stepsWithImage(s.steps) : []),
    ...stepsWithImage(hooks(s)),
  ]);
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

  /** A task step: its config, its inputs from the plan's artifacts, its outputs as new artifacts. */
  async task(s: TaskStep, signal: AbortSignal): Promise<StepOutcome> {
    this.say(`task ${s.name}`);
    let configText: string;
    let configFile: string;
    try {
      ({ configText, configFile } = await this.configOf(s));
    } catch (err) {
      this.say(`berth task: task ${s.name}${s.where}: ${taskErrorText(err)}`);
      return ERRORED;
    }
    // The task's own inputs, each from the artifact input_mapping names (or the artifact of its name).
    let inputNames: string[];
    let outputNames: string[];
    try {
      const config = parseTaskConfig(configText, configFile);
      inputNames = config.inputs.map((i) => i.name);
      outputNames = config.outputs.map((x) => x.name);
    } catch (err) {
      this.say(`berth task: ${taskErrorText(err)}`);
      return ERRORED;
    }
    const inputs: Mapping[] = [];
    for (const name of inputNames) {
      const from = s.inputMapping[name] ?? name;
      const a = this.artifacts.get(from);
      if (!a) continue;
      if ('dir' in a) inputs.push({ name, dir: a.dir });
      else inputs.push({ name, dir: `(artifact ${from})`, ...('tar' in a ? { tar: a.tar } : { from: a.pod }) });
    }
    let image = this.o.image;
    if (s.image) {
      const pushed = await this.imageOf(s, signal);
      if (!pushed) return ERRORED;
      image = pushed;
    }
    const result = await runTaskStep({
      connect: this.o.connect,
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
      image,
      target: this.o.target,
      step: s.name,
      ...(s.tags ? { tags: s.tags } : {}),
      args: [],
      env: this.o.env,
      cwd: this.o.cwd,
      stdout: this.o.stdout,
      stderr: this.o.stderr,
      signal,
      ledger: this.o.ledger,
    });
    if (result.release) this.kept.push(result.release);
    for (const [name, a] of result.artifacts) this.artifacts.set(s.outputMapping[name] ?? name, a);
    return result.outcome;
  }

  /** The image of a step's `image: ARTIFACT`, pushed or served for the step (deleted when the plan ends); undefined when it cannot be. */
  private async imageOf(s: TaskStep, signal: AbortSignal): Promise<string | undefined> {
    const name = s.image as string;
    const artifact = this.artifacts.get(name);
    const fail = (why: string): undefined => void this.say(`berth task: task ${s.name}${s.where}: image \`${name}\`: ${why}`);
    if (!artifact) return fail(`no such artifact in the plan (its artifacts: ${[...this.artifacts.keys()].map((k) => `\`${k}\``).join(', ') || 'none'})`);
    try {
      const settings = loadRunSettings(this.o.env);
      const made = this.o.imageServer
        ? await this.serveImage(s, artifact, this.o.imageServer, settings, signal)
        : await pushStepImage(artifact, name, this.o.imageRegistry!, { ttlSeconds: settings.ttlSeconds }, signal);
      this.kept.push(made.release);
      this.say(`image ${name}: ${made.reference}`);
      return made.reference;
    } catch (err) {
      return fail((err as Error).message);
    }
  }

  /** The artifact's image served from a pod of `serverImage` in the step's namespace, until the plan ends. */
  private async serveImage(s: TaskStep, artifact: Artifact, serverImage: string, settings: RunSettings, signal: AbortSignal): Promise<OwnImage> {
    const { cluster, context } = await this.o.connect();
    const target = this.o.target;
    const template = target?.podTemplate
      ? await loadPodTemplate(target.podTemplate, (n) => cluster.readPodTemplate(n), `target ${target.name ?? ''}`)
      : undefined;
    return withStepImage(artifact, signal, (image) =>
      serveStepImage({
        cluster,
        image,
        pod: {
          namespace: cluster.namespace,
          owner: settings.owner,
          runId: randomBytes(4).toString('hex'),
          now: new Date(),
          ttlSeconds: settings.ttlSeconds,
          serverImage,
          helperImage: helperImageOf(settings.helperImage),
        },
        step: s.name,
        artifact: s.image as string,
        target: target?.name ?? context,
        startTimeoutSeconds: settings.startTimeoutSeconds,
        ...(template ? { template } : {}),
        ...(this.o.imageServerCa ? { certificate: certificateIssuer(this.o.imageServerCa, settings.ttlSeconds) } : {}),
        ...(this.o.ledger ? { ledger: this.o.ledger } : {}),
        signal,
      }),
    );
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
