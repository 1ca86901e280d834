/**
 * `berth` acting as `docker`: the argv kustomize and kpt send becomes a pod, and the answers they
 * expect before running come back in docker's shape. Exit codes follow `docker run`: the function's
 * own, 125 for berth or cluster failures (126/127 when the entrypoint cannot run), with the reason
 * on stderr.
 */
import { Writable, type Readable } from 'node:stream';
import type { KubeCluster } from '../kube/cluster.js';
import { KubeError } from '../kube/errors.js';
import { MountError } from '../runtime/mounts.js';
import { PlanError } from '../runtime/plan.js';
import { RunError } from '../runtime/run-error.js';
import { noTrace, traceEnabled, traceTo } from '../runtime/trace.js';
import { PodTemplateError } from '../runtime/pod-template.js';
import { applySettings, connectWithSettings, loadRunSettings, runClusterOf, SettingsError } from '../runtime/settings.js';
import { DockerUsageError, parseDockerArgv, type DockerCommand, type RunCommand } from './argv.js';
import { answerLocally, SHIM_DOCKER_VERSION } from './answers.js';

export { SHIM_DOCKER_VERSION };

export interface ShimIO {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
  /** Emits SIGINT/SIGTERM; defaults to `process`. */
  signals?: NodeJS.EventEmitter;
  cwd?: string;
  /** Tests inject a cluster; otherwise it is resolved from the kubeconfig. */
  cluster?: KubeCluster;
  /** performance.now() that BERTH_TRACE counts from: 0, the process start, unless a long-lived agent runs this. */
  traceOrigin?: number;
  /**
   * A long-lived caller (the agent) takes a finished run's deletions and keeps its process alive
   * until they settle; the exit code goes back without waiting for them. A shim process exits when
   * runDockerShim returns, so it has none and waits.
   */
  background?: (deletions: Promise<void>) => void;
  /** Warm pods of a long-lived caller (the agent). */
  pool?: import('../runtime/warm-pool.js').WarmPool;
}

export async function runDockerShim(argv: string[], env: NodeJS.ProcessEnv, io: ShimIO): Promise<number> {
  let command: DockerCommand;
  try {
    command = parseDockerArgv(argv, env, io.cwd ?? process.cwd());
  } catch (err) {
    if (err instanceof DockerUsageError) {
      io.stderr.write(`docker: ${err.message}\n${err.command ? `See 'docker ${err.command} --help'.\n` : ''}`);
      return err.exitCode;
    }
    throw err;
  }
  const answered = answerLocally(command, io.stdout);
  if (answered !== undefined) return answered;
  switch (command.kind) {
    case 'info':
      return info(env, io, command.format);
    case 'run':
      return run(command, env, io);
    default:
      throw new Error(`berth bug: docker ${command.kind} has no answer`);
  }
}

async function info(env: NodeJS.ProcessEnv, io: ShimIO, format?: string): Promise<number> {
  try {
    const settings = loadRunSettings(env);
    const cluster = io.cluster ?? (await connectWithSettings(settings, env));
    const v = await cluster.serverVersion();
    const data = {
      ServerVersion: SHIM_DOCKER_VERSION,
      Name: 'berth',
      KubernetesServer: cluster.server,
      KubernetesVersion: `${v.major}.${v.minor}`,
      Namespace: cluster.namespace,
    };
    if (format && /json/.test(format)) io.stdout.write(`${JSON.stringify(data)}\n`);
    else
      io.stdout.write(
        `Server: berth (containers run as Kubernetes pods)\n Cluster: ${data.KubernetesServer} (Kubernetes ${data.KubernetesVersion})\n Namespace: ${data.Namespace}\n`,
      );
    return 0;
  } catch (err) {
    io.stderr.write(`${messageOf(err)}\n`);
    return 1;
  }
}

async function run(command: RunCommand, env: NodeJS.ProcessEnv, io: ShimIO): Promise<number> {
  const controller = new AbortController();
  const signals = io.signals ?? process;
  let caught: string | undefined;
  const onSignal = (name: string) => (): void => {
    caught = name;
    controller.abort();
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  signals.on('SIGINT', onInt);
  signals.on('SIGTERM', onTerm);
  const status = new StatusLine(io.stderr, env);
  const trace = traceEnabled(env) ? traceTo(io.stderr, io.traceOrigin ?? 0) : noTrace;
  trace('shim begins');
  try {
    const settings = loadRunSettings(env);
    // Loading the runtime overlaps reading the kubeconfig: both are start-up cost of a shim process.
    const [cluster, { runWorkload }] = await Promise.all([io.cluster ?? connectWithSettings(settings, env), import('../runtime/run.js')]);
    const workload = await applySettings(command.workload, settings, cluster);
    trace('connected and configured');
    status.verbose(`running ${workload.image} in namespace ${cluster.namespace} of ${cluster.server}`);
    const { exitCode } = await runWorkload(
      workload,
      {
        stdin: command.workload.stdin ? io.stdin : undefined,
        stdout: command.attach.stdout ? io.stdout : discard(),
        stderr: command.attach.stderr ? io.stderr : discard(),
        signal: controller.signal,
        onProgress: (phase) => status.show(phase),
        trace,
      },
      { ...runClusterOf(settings, cluster), background: io.background, pool: io.pool },
    );
    status.clear();
    return exitCode;
  } catch (err) {
    status.clear();
    if (caught) {
      io.stderr.write(`berth: ${caught}: the pod and its objects were deleted\n`);
      return caught === 'SIGINT' ? 130 : 143;
    }
    io.stderr.write(`docker: ${messageOf(err)}\n`);
    return err instanceof RunError ? err.exitCode : 125;
  } finally {
    signals.off('SIGINT', onInt);
    signals.off('SIGTERM', onTerm);
  }
}

function messageOf(err: unknown): string {
  if (
    err instanceof RunError ||
    err instanceof KubeError ||
    err instanceof SettingsError ||
    err instanceof MountError ||
    err instanceof PlanError ||
    err instanceof PodTemplateError
  )
    return err.message;
  return err instanceof Error ? err.message : String(err);
}

function discard(): Writable {
  return new Writable({ write: (_c, _e, cb) => cb() });
}

/** One line on a terminal's stderr that is rewritten and finally erased; plain lines when verbose. */
class StatusLine {
  private readonly tty: boolean;
  private readonly isVerbose: boolean;
  private shown = false;
  private last = '';

  constructor(
    private readonly out: Writable & { isTTY?: boolean },
    env: NodeJS.ProcessEnv,
  ) {
    this.tty = Boolean(out.isTTY);
    this.isVerbose = /^(1|true|yes|on)$/i.test(env.BERTH_VERBOSE ?? '');
  }

  show(phase: string): void {
    if (phase === this.last) return;
    this.last = phase;
    if (this.isVerbose && !this.tty) this.out.write(`berth: ${phase}\n`);
    else if (this.tty) {
      this.out.write(`\r\x1b[2Kberth: ${phase}…`);
      this.shown = true;
      // Once running, the function owns stderr: the line must be gone before it writes.
      if (phase === 'running') this.clear();
    }
  }

  verbose(line: string): void {
    if (this.isVerbose) this.out.write(`berth: ${line}\n`);
  }

  clear(): void {
    if (this.shown) this.out.write('\r\x1b[2K');
    this.shown = false;
  }
}
