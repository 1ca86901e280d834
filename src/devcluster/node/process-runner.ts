// Runs a command to completion and collects its output. Node's spawn blocks its event loop until the child
// has called exec: 7 to 26 ms per podman call on the bench machine under load, about nine calls per pod, so the
// dev cluster's own loop (every API request, log and exec stream) stalled for that long on each. The dev
// cluster therefore runs these calls in a small helper process (runner-helper.ts) whose loop blocks instead.
import { fork, spawn, type ChildProcess } from 'node:child_process';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunRequest {
  file: string;
  args: string[];
  timeoutMs: number;
  /** how errors name the command, e.g. `podman ps` */
  what: string;
}

export interface ProcessRunner {
  /** never rejects: a spawn failure or timeout becomes code -1 with the reason in stderr */
  run(req: RunRequest): Promise<RunResult>;
  close(): void;
}

/** Runs the command from this process. */
export const inProcessRunner: ProcessRunner = {
  run: runHere,
  close: () => undefined,
};

export function runHere({ file, args, timeoutMs, what }: RunRequest): Promise<RunResult> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
        stderr: timedOut ? `${what} timed out after ${timeoutMs} ms. ${stderr}` : stderr,
      });
    });
  });
}

interface Pending {
  req: RunRequest;
  resolve: (r: RunResult) => void;
}

/**
 * Runs commands in one helper process, started on first use. Should the helper be gone (it crashed, or could
 * not start), every later call runs here instead; the calls it held fail with the reason, as they may have run.
 */
export class HelperProcessRunner implements ProcessRunner {
  private helper?: ChildProcess;
  private failed = false;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly helperPath: string) {}

  run(req: RunRequest): Promise<RunResult> {
    const helper = this.started();
    if (!helper) return runHere(req);
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.pending.set(id, { req, resolve });
      helper.channel?.ref();
      helper.send({ id, ...req }, (err) => {
        if (err) this.fallBack();
      });
    });
  }

  /** the helper ends once the calls it holds are answered; later calls run here */
  close(): void {
    this.failed = true;
    if (this.pending.size === 0) this.disconnect();
  }

  private disconnect(): void {
    const helper = this.helper;
    this.helper = undefined;
    if (helper?.connected) helper.disconnect();
  }

  private started(): ChildProcess | undefined {
    if (this.failed) return undefined;
    if (this.helper) return this.helper;
    try {
      // a plain node: none of this process's flags (profilers, loaders, heap sizes) are the helper's
      this.helper = fork(this.helperPath, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
    } catch {
      this.failed = true;
      return undefined;
    }
    this.helper.unref();
    this.helper.channel?.unref();
    this.helper.on('message', (m: { id: number; result: RunResult }) => this.answer(m.id, m.result));
    this.helper.on('error', () => this.fallBack());
    this.helper.on('exit', () => this.fallBack());
    return this.helper;
  }

  private answer(id: number, result: RunResult): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (this.pending.size === 0) {
      this.helper?.channel?.unref();
      if (this.failed) this.disconnect();
    }
    p.resolve(result);
  }

  /** the helper is gone: what it held fails (it may have run), everything after runs here */
  private fallBack(): void {
    if (this.helper) process.stderr.write('devcluster: the process runner helper ended; podman calls run in the server process from now on\n');
    this.failed = true;
    this.helper = undefined;
    const held = [...this.pending.values()];
    this.pending.clear();
    for (const p of held) p.resolve({ code: -1, stdout: '', stderr: `the dev cluster's process runner ended before ${p.req.what} was answered` });
  }
}
