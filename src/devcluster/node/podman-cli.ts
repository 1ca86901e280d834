// Runs podman as a child process. Every call has a timeout so a wedged podman never wedges the node.
import { spawn, type ChildProcess } from 'node:child_process';

export interface PodmanResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface PodmanCliOptions {
  /** binary, default 'podman' */
  binary?: string;
  /** global flags put before every sub-command, e.g. ['--runtime', '/usr/sbin/runc'] */
  globalArgs?: string[];
}

export class PodmanCli {
  readonly binary: string;
  readonly globalArgs: string[];
  /** how many podman processes this node started: the cost model for pod start-up */
  invocations = 0;

  constructor(opts: PodmanCliOptions = {}) {
    this.binary = opts.binary ?? 'podman';
    this.globalArgs = opts.globalArgs ?? [];
  }

  /** runs to completion; never rejects: a spawn failure or timeout becomes code -1 with a message in stderr */
  run(args: string[], timeoutMs = 30_000): Promise<PodmanResult> {
    return new Promise((resolve) => {
      let child: ChildProcess;
      try {
        child = this.spawn(args, ['ignore', 'pipe', 'pipe']);
      } catch (err) {
        resolve({ code: -1, stdout: '', stderr: String(err) });
        return;
      }
      const out: Buffer[] = [];
      const errOut: Buffer[] = [];
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, timeoutMs);
      child.stdout!.on('data', (d: Buffer) => out.push(d));
      child.stderr!.on('data', (d: Buffer) => errOut.push(d));
      child.on('error', (err) => {
        clearTimeout(timer);
        resolve({ code: -1, stdout: '', stderr: String(err) });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        const stderr = Buffer.concat(errOut).toString('utf8');
        resolve({
          code: timedOut ? -1 : (code ?? -1),
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: timedOut ? `podman ${args[0]} timed out after ${timeoutMs} ms. ${stderr}` : stderr,
        });
      });
    });
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
