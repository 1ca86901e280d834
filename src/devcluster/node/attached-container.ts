// A container run through `podman run` (attached, not detached): this process holds the container's stdin,
// stdout and stderr as pipes. Output goes to the log and to any attach sessions tapping it; stdin stays
// open (no EOF for the container) until an attach session with stdinOnce closes it. One podman process
// creates and starts the container; whether it was created and whether it runs is read from the files
// podman and runc write (--cidfile, --pidfile) and from /proc, not from more podman processes.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ContainerLog } from './container-log.js';
import type { ExitFiles } from './exit-files.js';
import type { PodmanCli } from './podman-cli.js';

export interface OutputTap {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
}

export interface RunFiles {
  /** podman writes the container's id here once it created the container */
  cidFile: string;
  /** the OCI runtime writes the container process's pid here */
  pidFile: string;
}

const POLL_MS = 10;
const STDERR_TAIL = 4096;

export class AttachedContainer {
  private readonly child: ChildProcess;
  private readonly taps = new Set<OutputTap>();
  private stdinClosed: boolean;
  private stderrTail = '';
  /** resolves when the podman process ended: the container exited or was killed, or was never made */
  readonly exited: Promise<void>;
  /**
   * resolves once the container's exit code is known: from conmon's exit file, once what the process wrote
   * before it ended has been read from the pipes, or else when `podman run` ended (see exit-files.ts)
   */
  readonly ended: Promise<void>;
  /** output that arrived after the exit file was taken as the end: none, unless a pipe held more than it seemed */
  lateOutputBytes = 0;
  private endedByExitFile = false;
  /** the container's id once podman created it; undefined when podman ended without creating it */
  readonly created: Promise<string | undefined>;
  /**
   * true once the container's own process runs (the runtime's init has exec'd the command), false when
   * the container ended, or was never made, before that was seen. Status, exec and attach wait for this.
   */
  readonly running: Promise<boolean>;
  /** the exit code of `podman run` (the container's, or 125+ for podman's own failures) */
  exitCode: number | null = null;

  /** runArgs: a complete `podman run` argv (without -d) that writes files.cidFile and files.pidFile */
  constructor(
    cli: PodmanCli,
    runArgs: string[],
    private readonly files: RunFiles,
    readonly opts: { stdin: boolean; stdinOnce: boolean; tty: boolean },
    log: ContainerLog,
    exitFiles?: ExitFiles,
  ) {
    // warnings (e.g. --tty without a terminal) would otherwise land in the container's stderr log
    this.child = cli.spawn(['--log-level', 'error', ...runArgs], [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe']);
    this.stdinClosed = !opts.stdin;
    this.child.stdin?.on('error', () => {
      this.stdinClosed = true; // the container is gone; nothing more to write
    });
    this.child.stdout!.on('data', (b: Buffer) => {
      if (this.endedByExitFile) this.lateOutputBytes += b.length;
      log.write('stdout', b);
      for (const t of this.taps) t.stdout(b);
    });
    this.child.stderr!.on('data', (b: Buffer) => {
      if (this.endedByExitFile) this.lateOutputBytes += b.length;
      log.write('stderr', b);
      this.stderrTail = (this.stderrTail + b.toString('utf8')).slice(-STDERR_TAIL);
      for (const t of this.taps) t.stderr(b);
    });
    let ended = false;
    this.exited = new Promise((resolve) => {
      this.child.on('error', () => {
        ended = true;
        resolve();
      });
      this.child.on('close', (code) => {
        ended = true;
        // the exit file holds the container's own code; podman's may be its own failure during cleanup
        if (!this.endedByExitFile) this.exitCode = code;
        resolve();
      });
    });
    let resolveEnded!: () => void;
    this.ended = new Promise((r) => (resolveEnded = r));
    void this.exited.then(() => resolveEnded());
    let resolveCreated!: (id: string | undefined) => void;
    let resolveRunning!: (running: boolean) => void;
    this.created = new Promise((r) => (resolveCreated = r));
    this.running = new Promise((r) => (resolveRunning = r));
    let id: string | undefined;
    let stopWatching = (): void => undefined;
    const onExitFile = (code: number): void => {
      void afterPendingReads().then(() => {
        if (ended) return;
        this.exitCode = code;
        this.endedByExitFile = true;
        resolveRunning(false);
        resolveEnded();
      });
    };
    void this.exited.then(() => stopWatching());
    const poll = () => {
      // a terminal's output comes through conmon's relay, which may still hold some when the exit file appears
      if (!id && (id = this.containerId()) && !opts.tty && !ended) stopWatching = exitFiles?.onExit(id, onExitFile) ?? stopWatching;
      if (id) resolveCreated(id);
      if (ended || this.endedByExitFile) {
        resolveCreated(id);
        resolveRunning(false);
        return;
      }
      if (id && this.processRuns()) {
        resolveRunning(true);
        return;
      }
      setTimeout(poll, POLL_MS);
    };
    poll();
    // the last look after the end: a container can be created and gone between two polls
    void this.exited.then(() => {
      id ??= this.containerId();
      resolveCreated(id);
      resolveRunning(false);
    });
  }

  /** what podman said on stderr last: the reason when it could not create the container */
  get podmanError(): string {
    return this.stderrTail;
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

  private containerId(): string | undefined {
    const id = readText(this.files.cidFile)?.trim();
    return id ? id : undefined;
  }

  /** the pid file exists once the runtime created the container; the command runs once its init exec'd it */
  private processRuns(): boolean {
    const pid = Number(readText(this.files.pidFile)?.trim());
    if (!pid) return false;
    const argv = readText(`/proc/${pid}/cmdline`)?.split('\0') ?? [];
    // a zombie (already exited) has an empty cmdline
    if (argv.length === 0 || argv[0] === '') return false;
    return !isRuntimeInit(argv);
  }
}

/** runc (and crun) wait in `<runtime> init` for `start`; the container runs once that process exec'd */
export function isRuntimeInit(argv: string[]): boolean {
  const bin = (argv[0] ?? '').split('/').pop() ?? '';
  return argv[1] === 'init' && (bin === 'runc' || bin === 'crun' || argv[0] === '/proc/self/exe');
}

/**
 * Two turns of the event loop, each polling for I/O. The container's process wrote its output into the pipes
 * before it exited, and conmon wrote the exit file after that: by then the pipes are readable, and one poll
 * reads what they hold.
 */
function afterPendingReads(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
