// Runs podman as a child process. Every call has a timeout so a wedged podman never wedges the node.
// Calls that run to completion go through a ProcessRunner (process-runner.ts), streams are spawned here.
import { spawn, type ChildProcess } from 'node:child_process';
import { inProcessRunner, type ProcessRunner, type RunResult } from './process-runner.js';

export type PodmanResult = RunResult;

export interface PodmanCliOptions {
  /** binary, default 'podman' */
  binary?: string;
  /** global flags put before every sub-command, e.g. ['--runtime', '/usr/sbin/runc'] */
  globalArgs?: string[];
  /** where calls that run to completion run; default: this process */
  runner?: ProcessRunner;
}

export class PodmanCli {
  readonly binary: string;
  readonly globalArgs: string[];
  /** how many podman processes this node started: the cost model for pod start-up */
  invocations = 0;

  private readonly runner: ProcessRunner;

  constructor(opts: PodmanCliOptions = {}) {
    this.binary = opts.binary ?? 'podman';
    this.globalArgs = opts.globalArgs ?? [];
    this.runner = opts.runner ?? inProcessRunner;
  }

  /** runs to completion; never rejects: a spawn failure or timeout becomes code -1 with a message in stderr */
  run(args: string[], timeoutMs = 30_000): Promise<PodmanResult> {
    this.invocations++;
    return this.runner.run({ file: this.binary, args: [...this.globalArgs, ...args], timeoutMs, what: `podman ${args[0] ?? ''}` });
  }

  /** runs and throws PodmanError on a non-zero exit */
  async check(args: string[], timeoutMs?: number): Promise<string> {
    const r = await this.run(args, timeoutMs);
    if (r.code !== 0) throw new PodmanError(args, r);
    return r.stdout;
  }

  /** a long-lived child (attached container, exec session) whose pipes the caller owns */
  spawn(args: string[], stdio: ('pipe' | 'ignore')[]): ChildProcess {
    this.invocations++;
    return spawn(this.binary, [...this.globalArgs, ...args], { stdio: stdio as any });
  }
}

export class PodmanError extends Error {
  constructor(
    readonly args: string[],
    readonly result: PodmanResult,
  ) {
    super(podmanMessage(result) || `podman ${args[0]} exited with ${result.code}`);
  }
}

/** podman's own error text without the `Error: ` prefix, as the kubelet would show a runtime error */
export function podmanMessage(r: PodmanResult): string {
  return r.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .map((l) => l.replace(/^Error: /, ''))
    .join('; ');
}
