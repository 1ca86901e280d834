/**
 * `berth task run`: one Concourse task as one pod, as `fly execute` runs it.
 *
 * Everything that can be checked locally is checked before anything exists in the cluster (config,
 * inputs, flags, rights). Then: pod, params Secret owned by the pod, the inputs streamed into the
 * pod's `inputs` container (a cut copy means the task never ran: the pod is replaced and the copy
 * tried again), the task's stdout and stderr followed from its log, its exit code read from its
 * container's terminated state, outputs read back through exec, and the pod and Secret deleted, also
 * on Ctrl-C/SIGTERM. Exit codes: the task's own; 1 when it failed without one; 2 when berth or the
 * cluster failed; 3 when interrupted.
 */
import { randomBytes } from 'node:crypto';
import { readFile, realpath } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { V1Pod } from '@kubernetes/client-node';
import { createMayHaveLanded, isUnreachable } from '../kube/errors.js';
import { followLog } from '../runtime/log-follower.js';
import { lastLogLines } from '../runtime/log-tail.js';
import { FEED_END_GRACE_MS, sendFeed, type FeedResult } from '../runtime/file-feed.js';
import { viewContainer, type ContainerView } from '../runtime/pod-status.js';
import { isTerminal, PodTracker, settledOrRunning } from '../runtime/pod-tracker.js';
import { RunError } from '../runtime/run-error.js';
import { loadRunSettings } from '../runtime/settings.js';
import { helperImageOf } from '../runtime/plan.js';
import { layPodTemplate, loadPodTemplate } from '../runtime/pod-template.js';
import { noTrace, traceEnabled, traceTo, type Trace } from '../runtime/trace.js';
import type { PodTemplateSource } from '../runtime/workload.js';
import { imageOf, parseTaskConfig, type TaskConfig } from './config.js';
import { EXIT_FAILED } from './exit-codes.js';
import type { Ledger } from './ledger.js';
import { ABORTED, ERRORED, exitCodeOf, outcomeOfCode, type StepOutcome } from './outcome.js';
import { useCaches, type CacheMount } from './cache-claims.js';
import { cachePath, cacheSettings, checkCachePaths, type CacheSettings } from './caches.js';
import { checkInputDirs, inputsContent } from './inputs.js';
import { layOut, newWorkDir, TaskUsageError, type Layout, type Mapping } from './layout.js';
import type { PodArtifact } from './artifacts.js';
import { ARTIFACT_PORT } from './artifact-stream.js';
import { checkOutputDirs, checkOutputFolder, downloadOutputs, readOutputTar } from './outputs.js';
import { overrideFromEnv } from './params.js';
import type { TaskTarget } from './targets.js';
import {
  INPUTS_CONTAINER,
  INPUTS_LAYOUT_FAILED,
  inputsFeed,
  needsInputsContainer,
  paramsSecretName,
  planParamsSecret,
  planTaskPod,
  TASK_CONTAINER,
  taskPodName,
  type TaskPodContext,
} from './pod-plan.js';
import { TASK_HINTS, taskErrorText } from './error-text.js';
import { stoppedFromOutside } from './task-end.js';
import type { ConnectTask, TaskCluster } from './task-cluster.js';

/** Pods tried when the copy of the inputs breaks (the task has not run yet, so trying again is safe). */
const INPUT_ATTEMPTS = 4;

export interface TaskRunOptions {
  /** The cluster, reached once the local checks passed (the CLI's connection: cli/task-connect.ts). */
  connect: ConnectTask;
  /** Where the config came from (error messages); read from there unless configText is given. */
  configFile: string;
  /** A config given inline (a plan step's `config:`). */
  configText?: string;
  /** A plan step's `params`, over the config's. */
  paramOverrides?: Record<string, string>;
  /** fly execute: a variable of the caller's shell overrides a param the task lists (not in plans). */
  paramsFromEnv?: boolean;
  /** Outputs kept in memory as artifacts for the next steps of a plan. */
  capture?: string[];
  /**
   * Direct artifacts (plans): the captured outputs stay in the pod, which serves them to the pods of
   * later steps; the pod is kept until the step's `release` is called.
   */
  serveOutputs?: boolean;
  /** A step of a plan: its inputs are artifacts only (no implicit current folder). */
  inPlan?: boolean;
  /** A fixed working directory instead of a fresh /tmp/build/<8 hex> (resource containers: resource-step.ts). */
  workDir?: string;
  /** Leaves berth's progress lines (initializing, running, succeeded/failed) to the caller. */
  quiet?: boolean;
  /** Whose caches the task uses (caches.ts); default: the config file's real path. */
  cacheIdentity?: string;
  inputs: Mapping[];
  outputs: Mapping[];
  includeIgnored: boolean;
  privileged: boolean;
  image?: string;
  /** Where the step runs besides the cluster (its pod template, whether it may be privileged); default: the current context, locked down. */
  target?: TaskTarget;
  /** The step's identity on its objects (a plan's step name); default: the task file's name. */
  step?: string;
  /** A plan step's worker tags: its pod goes to a node labeled with each (pod-plan.ts). */
  tags?: string[];
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: Writable;
  stderr: Writable;
  signal: AbortSignal;
  /** Told of every object the run creates and deletes (named at a second interrupt: ledger.ts). */
  ledger?: Ledger;
}

/** A failure of berth or the cluster, said in a sentence: exit 2. */
export class TaskError extends Error {}

class Interrupted extends Error {}

export async function runTask(o: TaskRunOptions): Promise<number> {
  return exitCodeOf((await runTaskStep(o)).outcome);
}

/** A captured output: read into memory, or served by its kept pod (serveOutputs). */
export type StepArtifact = { tar: Buffer } | { pod: PodArtifact };

export interface StepResult {
  /** How the task ended; its exit code is `exitCodeOf(outcome)` (a task's own 2 or 3 is a failure, not berth's code). */
  outcome: StepOutcome;
  artifacts: Map<string, StepArtifact>;
  /** Deletes the pod kept to serve the artifacts (serveOutputs); absent when no pod was kept. */
  release?: () => Promise<void>;
}

/** One task; with the outputs named in `capture` once it ended (whatever its code). */
export async function runTaskStep(o: TaskRunOptions): Promise<StepResult> {
  const say = (line: string): void => void o.stderr.write(`${line}\n`);
  let prepared: Prepared;
  try {
    prepared = await prepare(o);
  } catch (err) {
    say(`berth task: ${taskErrorText(err)}`);
    return { outcome: ERRORED, artifacts: new Map() };
  }
  return new TaskRun(o, prepared, say).run();
}

interface Prepared {
  config: TaskConfig;
  layout: Layout;
  params: Record<string, string>;
  image: string;
  caches?: { identity: string; settings: CacheSettings };
}

/** Everything checked before the cluster is touched. */
async function prepare(o: TaskRunOptions): Promise<Prepared> {
  if (o.privileged && !o.target?.allowPrivileged) throw new TaskUsageError(privilegedRefusal(o.target));
  const text =
    o.configText ??
    (await readFile(o.configFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new TaskUsageError(`cannot read the task config ${o.configFile}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
    }));
  const config = parseTaskConfig(text, o.configFile);
  if (config.platform !== 'linux') throw new TaskUsageError(`platform "${config.platform}" is not supported: berth runs tasks as Linux pods (platform: linux)`);
  const image = imageOf(config, o.image, o.configFile);
  const layout = layOut(config, {
    inputs: o.inputs,
    outputs: o.outputs,
    args: o.args,
    workDir: o.workDir ?? newWorkDir(),
    cwd: o.cwd,
    capture: o.capture,
    inPlan: o.inPlan,
  });
  await checkInputDirs(layout);
  await checkOutputDirs(o.outputs, o.cwd);
  checkCachePaths(config);
  const caches = config.caches.length
    ? { identity: o.cacheIdentity ?? (o.configText !== undefined ? o.configFile : await realpath(o.configFile)), settings: cacheSettings(o.env) }
    : undefined;
  const params = { ...config.params, ...(o.paramOverrides ?? {}) };
  return { config, layout, image, caches, params: o.paramsFromEnv === false ? params : overrideFromEnv(params, o.env) };
}

class TaskRun {
  private readonly stop = new AbortController();
  private kube: TaskCluster | undefined;
  private created: Array<['pod' | 'secret', string]> = [];
  /** the caches the pod mounts (known once they are claimed): they need the `inputs` container too */
  private cacheCount = 0;
  private artifacts = new Map<string, StepArtifact>();
  private release: (() => Promise<void>) | undefined;
  /** Creations under way: cleanup waits for them, or one landing after the deletes would leak. */
  private readonly inFlight: Array<Promise<unknown>> = [];
  /** BERTH_TRACE=1: where a run's time goes, one stderr line per phase (counted from the process start). */
  private readonly trace: Trace;

  constructor(
    private readonly o: TaskRunOptions,
    private readonly p: Prepared,
    private readonly say: (line: string) => void,
  ) {
    this.trace = traceEnabled(o.env) ? traceTo(o.stderr, 0) : noTrace;
  }

  async run(): Promise<StepResult> {
    const onAbort = (): void => this.stop.abort();
    this.o.signal.addEventListener('abort', onAbort);
    if (this.o.signal.aborted) this.stop.abort();
    try {
      const code = await this.execute();
      // a Ctrl-C that came while the outputs were read ends the run as every interrupt does
      if (this.o.signal.aborted) throw new Interrupted();
      this.progress(code === 0 ? 'succeeded' : 'failed');
      return { outcome: outcomeOfCode(code), artifacts: this.artifacts, ...(this.release ? { release: this.release } : {}) };
    } catch (err) {
      if (this.o.signal.aborted || err instanceof Interrupted) {
        // a pod kept to serve the outputs serves nobody now
        await this.release?.();
        this.progress('interrupted');
        return { outcome: ABORTED, artifacts: new Map() };
      }
      this.say(`berth task: ${taskErrorText(err)}`);
      this.say('errored');
      return { outcome: ERRORED, artifacts: new Map() };
    } finally {
      this.o.signal.removeEventListener('abort', onAbort);
      this.stop.abort();
      await this.cleanup();
      this.trace('cleaned up');
    }
  }

  private async execute(): Promise<number> {
    const settings = loadRunSettings(this.o.env);
    const { cluster: kube, context } = await this.o.connect();
    this.kube = kube;
    this.trace('task run begins');
    // Whether the cluster serves stdout and stderr apart is asked once per process: asked now, it is known by the time the task runs.
    void kube.servesSplitLogs().catch(() => undefined);
    const template = this.o.target?.podTemplate
      ? await this.until(loadPodTemplate(this.o.target.podTemplate, (n) => kube.readPodTemplate(n), `target ${this.o.target.name ?? ''}`))
      : undefined;
    await this.checkRights(kube);
    this.trace('rights checked');
    const caches = await this.useCaches(kube, this.o.target?.name ?? context, settings.owner);
    this.cacheCount = caches.length;
    const serving = this.o.serveOutputs === true && this.p.layout.outputs.some((x) => x.capture);
    const token = randomBytes(16).toString('hex');
    const ctx = (runId: string): TaskPodContext => ({
      step: this.o.step ?? stepOfFile(this.o.configFile),
      ...(this.o.tags ? { tags: this.o.tags } : {}),
      target: this.o.target?.name ?? context,
      privileged: this.o.privileged,
      ...(serving ? { artifactToken: token } : {}),
      namespace: kube.namespace,
      owner: settings.owner,
      runId,
      now: new Date(),
      ttlSeconds: settings.ttlSeconds,
      image: this.p.image,
      helperImage: helperImageOf(settings.helperImage),
      ...(caches.length ? { caches } : {}),
    });
    const startDeadline = (): number => Date.now() + settings.startTimeoutSeconds * 1000;

    this.progress('initializing');
    let pod: { name: string; tracker: PodTracker } | undefined;
    for (let attempt = 1; !pod; attempt++) {
      const c = ctx(randomBytes(4).toString('hex'));
      const started = await this.startPod(kube, c, startDeadline(), template);
      const fed = await this.feedInputs(kube, started, startDeadline());
      if (this.needsInputs()) this.trace(fed === true ? 'inputs in place' : 'inputs broke');
      if (fed === true) pod = started;
      else {
        await this.deleteCreated(kube);
        if (attempt >= INPUT_ATTEMPTS) throw new TaskError(`the inputs could not be copied into the pod in ${INPUT_ATTEMPTS} tries (last: ${fed})`);
        this.say(`berth: copying the inputs broke (${fed}); starting a new pod`);
      }
    }
    const { name, tracker } = pod;
    const runningOrNot = await this.until(
      tracker.until(
        (q) => settledOrRunning(viewContainer(q, TASK_CONTAINER), () => undefined),
        startDeadline(),
        `the task's container (${this.p.image}) did not start`,
      ),
    );
    const startView = viewContainer(runningOrNot, TASK_CONTAINER);
    if (startView.state === 'failed') throw new TaskError(startView.message);
    this.progress(`running ${this.p.layout.command.join(' ')}`);
    this.trace('task running');

    const ended = tracker.until((q) => isTerminal(viewContainer(q, TASK_CONTAINER)), Infinity, 'the task did not finish');
    ended.catch(() => undefined);
    // a node that stops reporting ends no log stream: its loss ends the wait for the output
    const lost = ended
      .then((q) => stoppedFromOutside(q, TASK_CONTAINER))
      .then((outside) => (outside?.kind === 'lost' ? Promise.reject(new TaskError(outside.message)) : new Promise<never>(() => undefined)));
    lost.catch(() => undefined);
    await Promise.race([this.followOutput(kube, name, ended), lost]).catch(async (err: unknown) => {
      if (err instanceof TaskError) throw err;
      // a pod deleted under the task loses its log with it (a kubelet may even serve its own error text as the log):
      // the deletion is the cause to report, not the output it took away
      const last = await ended.catch((failure: unknown) => failure);
      // the pod's watch ended it: deleted at once (grace 0), as the pod garbage collector does with a deleted node's pods
      if (last instanceof RunError) throw new TaskError(last.message);
      const outside = stoppedFromOutside(last as V1Pod, TASK_CONTAINER);
      if (outside?.kind === 'deleted') throw new TaskError(`${outside.message}: its end is not its own, whatever its exit code`);
      throw err;
    });
    const endedPod = await this.until(ended);
    this.trace('task ended, output complete');
    const { code, unreadable } = this.exitCodeOf(endedPod);
    if (this.p.layout.outputs.some((x) => x.dirs.length || x.capture)) {
      if (unreadable !== undefined) throw new TaskError(`the outputs of pod ${name} cannot be read: the pod ended (${unreadable})`);
      const ip = endedPod.status?.podIP;
      if (serving && ip) {
        const rest = { ...this.p.layout, outputs: this.p.layout.outputs.map((x) => ({ ...x, capture: false })) };
        await downloadOutputs(kube, name, rest, this.say, this.stop.signal);
        // served pod to pod, an output is checked as a read through berth would check it: a link in its folder's place goes nowhere
        for (const x of this.p.layout.outputs.filter((y) => y.capture))
          await this.until(checkOutputFolder(kube, name, this.p.layout.workDir, x, this.stop.signal));
        this.artifacts = this.keepServing(kube, name, ip, token);
      } else {
        for (const [k, tar] of await downloadOutputs(kube, name, this.p.layout, this.say, this.stop.signal)) this.artifacts.set(k, { tar });
      }
      this.trace('outputs read');
    }
    return code;
  }

  /**
   * The task's exit code from its ended pod, and whether its outputs can still be read. A task stopped from
   * outside ran to no end of its own: past its deadline or evicted it failed without a code (1), its pod
   * deleted under it is berth's failure (2): a 0 it then exits with (trapping SIGTERM) is no success.
   */
  private exitCodeOf(pod: V1Pod): { code: number; unreadable?: string } {
    const name = pod.metadata?.name ?? '';
    const outside = stoppedFromOutside(pod, TASK_CONTAINER);
    if (outside?.kind === 'deleted') throw new TaskError(`${outside.message}: its end is not its own, whatever its exit code`);
    if (outside?.kind === 'lost') throw new TaskError(outside.message);
    if (outside) {
      this.say(`berth: ${outside.message}`);
      return { code: EXIT_FAILED, unreadable: outside.kind };
    }
    const view = viewContainer(pod, TASK_CONTAINER);
    if (view.state === 'terminated') return { code: view.exitCode };
    if (view.state === 'failed') {
      this.say(`berth: the task ended without an exit code: ${view.message}`);
      return { code: EXIT_FAILED, unreadable: view.message };
    }
    throw new TaskError(`pod ${name} ended without an exit code for the task`);
  }

  /**
   * The captured outputs as artifacts the pod serves: the pod leaves the list of what the run deletes
   * and is deleted by `release` (the plan's end), or by its deadline and `berth gc`.
   */
  private keepServing(kube: TaskCluster, pod: string, ip: string, token: string): Map<string, StepArtifact> {
    this.created = this.created.filter(([k, n]) => !(k === 'pod' && n === pod));
    this.release = () => {
      this.o.ledger?.deleting(kube.namespace, 'pod', pod);
      return kube.deletePod(pod).then(
        () => this.o.ledger?.remove(kube.namespace, 'pod', pod),
        (err: Error) =>
          this.say(
            `berth: could not delete pod ${pod} in namespace ${kube.namespace}: ${taskErrorText(err)}; it expires by its deadline and \`berth gc\` removes it`,
          ),
      );
    };
    const served = new Map<string, StepArtifact>();
    for (const x of this.p.layout.outputs.filter((y) => y.capture)) {
      const read = (signal = new AbortController().signal): Promise<Buffer> => readOutputTar(kube, pod, this.p.layout.workDir, x, signal);
      served.set(x.name, { pod: { pod, ip, port: ARTIFACT_PORT, token, output: x.name, path: x.path, read } });
    }
    return served;
  }

  private progress(line: string): void {
    if (!this.o.quiet) this.say(line);
  }

  /** The rights a run needs beyond creating its pod, asked before anything exists. */
  private async checkRights(kube: TaskCluster): Promise<void> {
    const needs: Array<[string, string, string | undefined]> = [
      ['delete', 'pods', undefined],
      ['create', 'pods', 'attach'],
      ['get', 'pods', 'log'],
    ];
    if (Object.keys(this.p.params).length) needs.push(['create', 'secrets', undefined], ['delete', 'secrets', undefined]);
    if (this.p.layout.outputs.some((x) => x.dirs.length || x.capture)) needs.push(['create', 'pods', 'exec']);
    if (this.p.caches)
      needs.push(['get', 'persistentvolumeclaims', undefined], ['create', 'persistentvolumeclaims', undefined], ['patch', 'persistentvolumeclaims', undefined]);
    // A server that cannot answer leaves the real calls to tell why, except one that cannot be reached at all: nothing is tried then.
    const ask = (verb: string, resource: string, sub: string | undefined): Promise<boolean | undefined> =>
      kube.reviewAccess(verb, resource, sub).catch((err: unknown) => {
        if (isUnreachable(err)) throw err;
        return undefined;
      });
    const answers = await Promise.all(needs.map(([verb, resource, sub]) => ask(verb, resource, sub)));
    const missing = needs.filter((_, i) => answers[i] === false).map(([verb, resource, sub]) => `${verb} ${resource}${sub ? `/${sub}` : ''}`);
    if (missing.length)
      throw new TaskError(`forbidden: cannot ${missing.join(', ')} in namespace ${kube.namespace} (grant it in the Role: ${TASK_HINTS.roleFile})`);
  }

  /** The task's caches on this target, made on first use and marked used (they outlive the run). */
  private async useCaches(kube: TaskCluster, target: string, owner: string): Promise<CacheMount[]> {
    if (!this.p.caches) return [];
    const { identity, settings } = this.p.caches;
    const keys = this.p.config.caches.map((c) => ({ task: identity, path: cachePath(c.path), target }));
    return this.until(this.creating(useCaches(kube, keys, { owner, now: new Date(), settings })));
  }

  private async startPod(
    kube: TaskCluster,
    c: TaskPodContext,
    deadline: number,
    template: PodTemplateSource | undefined,
  ): Promise<{ name: string; tracker: PodTracker }> {
    const own = planTaskPod(this.p.config, this.p.layout, this.p.params, c);
    // The target's template fills what berth left open, as under every berth pod; the task container is the first.
    const planned = layPodTemplate(own, template);
    const name = taskPodName(c.runId);
    const tracker = new PodTracker(kube, name, this.stop.signal, noTrace);
    const pod: V1Pod = await this.until(this.creatingObject('pod', name, kube, kube.createPod(planned)));
    this.trace(`pod ${name} created`);
    if (Object.keys(this.p.params).length) {
      const secret = planParamsSecret(this.p.params, { name, uid: pod.metadata?.uid ?? '' }, c);
      await this.until(this.creatingObject('secret', paramsSecretName(c.runId), kube, kube.createSecret(secret)));
    }
    if (!this.needsInputs()) return { name, tracker };
    const init = await this.until(
      tracker.until(
        (q) => settledOrRunning(viewContainer(q, INPUTS_CONTAINER, true), () => undefined),
        deadline,
        `the inputs container (${c.helperImage}) did not start`,
      ),
    );
    const v = viewContainer(init, INPUTS_CONTAINER, true);
    this.trace('inputs container started');
    if (v.state === 'failed')
      throw new TaskError(
        `${v.message} (the helper image ${c.helperImage} copies the inputs into the pod: set BERTH_HELPER_IMAGE to an image with sh and tar that the cluster can pull)`,
      );
    return { name, tracker };
  }

  /** whether this run's pod has an `inputs` container that berth must feed (pod-plan.ts decides the same) */
  private needsInputs(): boolean {
    return needsInputsContainer(this.p.layout, this.p.params, this.cacheCount);
  }

  /** true once the inputs are in place; otherwise why the copy broke (the pod is then replaced). */
  private async feedInputs(kube: TaskCluster, pod: { name: string; tracker: PodTracker }, deadline: number): Promise<true | string> {
    if (!this.needsInputs()) return true;
    const ended = async (): Promise<ContainerView> =>
      viewContainer(
        await pod.tracker.until(
          (q) => isTerminal(viewContainer(q, INPUTS_CONTAINER, true)),
          deadline + FEED_END_GRACE_MS,
          'the copy of the inputs did not finish',
        ),
        INPUTS_CONTAINER,
        true,
      );
    const early = viewContainer(pod.tracker.current() as V1Pod, INPUTS_CONTAINER, true);
    // A receiver that is no longer running (its pod ended meanwhile) is read as it ended.
    const result: FeedResult =
      early.state !== 'running'
        ? resultOf(await this.until(ended()))
        : await this.until(
            sendFeed({
              cluster: kube,
              pod: pod.name,
              plan: inputsFeed,
              // A local file that cannot be read fails the run at once (InputReadError): another pod would not read it either.
              content: inputsContent(this.p.layout, this.o.includeIgnored),
              ended,
              logTail: () => lastLogLines(kube, pod.name, INPUTS_CONTAINER),
              signal: this.stop.signal,
            }),
          );
    if (result.delivered) return true;
    if (result.exitCode === INPUTS_LAYOUT_FAILED) {
      throw new TaskError(
        `the inputs arrived but the working directory could not be laid out${said(result.why)} (check the paths of the task's inputs, outputs, caches and run.dir)`,
      );
    }
    if (result.exitCode !== undefined) return `the inputs container exited ${result.exitCode}${said(result.why)}`;
    return result.why;
  }

  /** stdout and stderr from the task's log, each exactly once; merged into stdout where the cluster cannot serve them apart. */
  private async followOutput(kube: TaskCluster, pod: string, ended: Promise<unknown>): Promise<void> {
    const split = await this.until(kube.servesSplitLogs());
    const cluster = split ? kube : mergedLogs(kube);
    const follow = (stream: 'Stdout' | 'Stderr', out: Writable) =>
      followLog({ kube: cluster, pod, container: TASK_CONTAINER, stream, out, ended, signal: this.stop.signal, trace: noTrace });
    await this.until(Promise.all(split ? [follow('Stdout', this.o.stdout), follow('Stderr', this.o.stderr)] : [follow('Stdout', this.o.stdout)]));
  }

  /** Resolves as `p` does, or rejects with Interrupted as soon as the run is interrupted. */
  private until<T>(p: Promise<T>): Promise<T> {
    const signal = this.o.signal;
    if (signal.aborted) return Promise.reject(new Interrupted());
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(new Interrupted());
      signal.addEventListener('abort', onAbort, { once: true });
      p.then(
        (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
  }

  private async deleteCreated(kube: TaskCluster): Promise<void> {
    const items = this.created;
    this.created = [];
    // The pod first (it may still run); the Secret it owns would follow it anyway, deleted here so nothing waits on the garbage collector.
    for (const kind of ['pod', 'secret'] as const) {
      await Promise.all(
        items
          .filter(([k]) => k === kind)
          .map(([k, name]) => {
            this.o.ledger?.deleting(kube.namespace, k, name);
            return (k === 'pod' ? kube.deletePod(name) : kube.deleteSecret(name)).then(
              () => this.o.ledger?.remove(kube.namespace, k, name),
              (err: Error) =>
                this.say(
                  `berth: could not delete ${k} ${name} in namespace ${kube.namespace}: ${taskErrorText(err)}; it expires by its deadline and \`berth gc\` removes it`,
                ),
            );
          }),
      );
    }
  }

  /** A create under way: cleanup waits for it, or an object landing after the deletes would leak. */
  private creating<T>(p: Promise<T>): Promise<T> {
    this.inFlight.push(p.catch(() => undefined));
    return p;
  }

  /**
   * The create of an object the run deletes at its end: listed from the moment it is asked for, and taken
   * off when the create is known to have made nothing (refused, or the cluster never reached), so that
   * berth names only objects that exist or may exist.
   */
  private creatingObject<T>(kind: 'pod' | 'secret', name: string, kube: TaskCluster, asked: Promise<T>): Promise<T> {
    this.created.push([kind, name]);
    this.o.ledger?.add(kube.namespace, kind, name);
    return this.creating(
      asked.catch((err: unknown) => {
        if (!createMayHaveLanded(err)) {
          this.created = this.created.filter(([k, n]) => !(k === kind && n === name));
          this.o.ledger?.remove(kube.namespace, kind, name);
        }
        throw err;
      }),
    );
  }

  private async cleanup(): Promise<void> {
    await Promise.allSettled(this.inFlight);
    if (this.kube) await this.deleteCreated(this.kube);
  }
}

/** A receiver that ended before berth could send it anything, as the feed's result. */
function resultOf(end: ContainerView): FeedResult {
  if (end.state === 'terminated') return end.exitCode === 0 ? { delivered: true } : { delivered: false, exitCode: end.exitCode, why: end.message ?? '' };
  return { delivered: false, why: end.state === 'failed' ? end.message : `the inputs container is ${end.state}` };
}

/** What a helper said, after a colon; nothing when it said nothing. */
function said(words: string): string {
  return words ? `: ${words}` : '';
}

function privilegedRefusal(target: TaskTarget | undefined): string {
  if (target?.name)
    return `-p (privileged) is refused: target ${target.name} runs every step locked down; allow privileged steps there with \`berth task target add ${target.name} --allow-privileged\` (with its other flags again)`;
  return '-p (privileged) is refused: without --target, berth runs every task locked down; add a target that allows it (`berth task target add NAME --allow-privileged`) and run with --target NAME';
}

/** `ci/build.yml` → `build`: a task run's identity on its objects. */
function stepOfFile(file: string): string {
  return (file.split('/').pop() ?? file).replace(/\.ya?ml$/, '');
}

/** A client whose log reads ignore `stream` (servers without KEP-3288 send both streams merged). */
function mergedLogs(kube: TaskCluster): TaskCluster {
  return Object.assign(Object.create(kube) as TaskCluster, {
    openPodLog: (n: string, c: string, q?: Record<string, unknown>) => kube.openPodLog(n, c, { ...q, stream: undefined }),
    readPodLog: (n: string, c: string, q?: Record<string, unknown>) => kube.readPodLog(n, c, { ...q, stream: undefined }),
  });
}
