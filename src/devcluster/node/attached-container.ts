// A running container driven through `podman start --attach`: this process holds the container's stdin,
// stdout and stderr as pipes. Output goes to the log and to any attach sessions tapping it; stdin stays
// open (no EOF for the container) until an attach session with stdinOnce closes it.
import type { ChildProcess } from 'node:child_process';
import type { ContainerLog } from './container-log.js';
import type { PodmanCli } from './podman-cli.js';

export interface OutputTap {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
}

export class AttachedContainer {
  private readonly child: ChildProcess;
  private readonly taps = new Set<OutputTap>();
  private stdinClosed: boolean;
  /** resolves when the attach process ended: the container exited or was killed */
  readonly exited: Promise<void>;
  /**
   * true once podman reports the container running (`podman start --attach` itself says nothing when it has
   * started the container), false when it ended first. Status, exec and attach must wait for this.
   */
  readonly running: Promise<boolean>;
  /** the exit code of `podman start --attach` (the container's, or 125+ for podman's own failures) */
  exitCode: number | null = null;

  constructor(
    cli: PodmanCli,
    readonly containerId: string,
    readonly opts: { stdin: boolean; stdinOnce: boolean; tty: boolean },
    log: ContainerLog,
  ) {
    const args = ['start', '--attach', ...(opts.stdin ? ['--interactive'] : []), containerId];
    this.child = cli.spawn(args, [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe']);
    this.stdinClosed = !opts.stdin;
    this.child.stdin?.on('error', () => {
      this.stdinClosed = true; // the container is gone; nothing more to write
    });
    this.child.stdout!.on('data', (b: Buffer) => {
      log.write('stdout', b);
      for (const t of this.taps) t.stdout(b);
    });
    this.child.stderr!.on('data', (b: Buffer) => {
      log.write('stderr', b);
      for (const t of this.taps) t.stderr(b);
    });
    this.exited = new Promise((resolve) => {
      this.child.on('error', () => resolve());
      this.child.on('close', (code) => {
        this.exitCode = code;
        resolve();
      });
    });
    const waiter = cli.spawn(['wait', '--condition', 'running', '--interval', '50ms', containerId], ['ignore', 'ignore', 'ignore']);
    this.running = new Promise((resolve) => {
      waiter.on('error', () => resolve(false));
      waiter.on('close', (code) => resolve(code === 0));
      // a container that ends before podman saw it running never meets the condition
      void this.exited.then(() => {
        resolve(false);
        waiter.kill('SIGKILL');
      });
    });
  }

  tap(t: OutputTap): () => void {
    this.taps.add(t);
    return () => this.taps.delete(t);
  }

  get acceptsStdin(): boolean {
    return !this.stdinClosed;
  }

  writeStdin(chunk: Buffer): void {
    if (!this.stdinClosed) this.child.stdin!.write(chunk);
  }

  /** EOF for the container's stdin (stdinOnce after the attach client closed its stdin) */
  closeStdin(): void {
    if (this.stdinClosed) return;
    this.stdinClosed = true;
    this.child.stdin!.end();
  }

  /** only when podman itself no longer answers: the container is stopped through `podman stop` normally */
  killAttachProcess(): void {
    this.child.kill('SIGKILL');
  }
}
