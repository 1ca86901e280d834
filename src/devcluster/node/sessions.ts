// exec and attach as StreamSessions over podman child processes and the attached container's pipes.
import type { ChildProcess } from 'node:child_process';
import { PassThrough, Writable, type Readable } from 'node:stream';
import type { ExecOptions, ExitResult, StreamSession, AttachOptions } from '../types.js';
import type { AttachedContainer } from './attached-container.js';
import type { PodmanCli } from './podman-cli.js';
import { ExecTerminal, resizeConmonTerminal } from './exec-terminal.js';
import { stdoutHeldForStderr } from './stderr-first.js';

/** exit codes podman uses for its own failures (`podman exec` could not run anything) */
const PODMAN_FAILURE = 125;

/**
 * `podman exec -i [-t] <id> cmd...` as a child process. The exit code is the process's, 126/127 when the
 * command cannot be run (podman's and runc's convention). With a tty, `staticDir` (the container's) lets
 * resizes reach the session's terminal (exec-terminal.ts).
 */
export function execSession(cli: PodmanCli, containerId: string, opts: ExecOptions, staticDir?: string): StreamSession {
  const args = ['exec', ...(opts.stdin ? ['--interactive'] : []), ...(opts.tty ? ['--tty'] : []), containerId, ...opts.command];
  const before = opts.tty && staticDir ? ExecTerminal.sessions(staticDir) : undefined;
  const child = cli.spawn(args, [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe']);
  const terminal = before && staticDir ? new ExecTerminal(staticDir, opts.command, before) : undefined;
  if (terminal) child.on('close', () => terminal.close());
  child.stdin?.on('error', () => undefined);
  let stderrTail = '';
  child.stderr!.on('data', (b: Buffer) => {
    stderrTail = (stderrTail + b.toString('utf8')).slice(-4096);
  });
  const stderr = opts.stderr && !opts.tty ? child.stderr! : null;
  const stdout = opts.stdout ? (stderr ? stdoutHeldForStderr(child.stdout!, stderr) : child.stdout!) : null;
  if (!stdout) child.stdout!.resume();
  if (!stderr) child.stderr!.resume();
  const done = new Promise<ExitResult>((resolve) => {
    child.on('error', (err) => resolve({ error: `error executing command in container: ${err.message}` }));
    child.on('close', (code, signal) => {
      if (code === PODMAN_FAILURE) {
        const msg = stderrTail.trim().split('\n').pop()?.replace(/^Error: /, '') ?? '';
        resolve({ error: `error executing command in container: ${msg || 'podman exec failed'}` });
      } else if (code === null) resolve({ error: `error executing command in container: podman exec ended by ${signal}` });
      else resolve({ exitCode: code });
    });
  });
  const session = processSession(child, opts, stdout, stderr, done);
  if (terminal) session.resize = (width, height) => terminal.resize(width, height);
  return session;
}

/**
 * An exec session over the child process that runs it (podman exec, runc exec). Resize is not supported: the
 * process has no terminal it could resize. Abort stops the child; like the real kubelet (client-node#2532),
 * the process in the container may live on.
 */
export function processSession(child: ChildProcess, opts: ExecOptions, stdout: Readable | null, stderr: Readable | null, done: Promise<ExitResult>): StreamSession {
  return { stdin: opts.stdin ? child.stdin! : null, stdout, stderr, resize: () => undefined, done, abort: () => void child.kill('SIGKILL') };
}

/**
 * taps the live output of a running container (no replay) and feeds its stdin; a tty container's terminal is
 * resized through its conmon, whose bundle directory is `staticDir`
 */
export function attachSession(container: AttachedContainer, opts: AttachOptions, tty: boolean, staticDir?: string): StreamSession {
  const stdout = opts.stdout ? new PassThrough() : null;
  const stderr = opts.stderr && !tty ? new PassThrough() : null;
  let finish!: (r: ExitResult) => void;
  const done = new Promise<ExitResult>((resolve) => (finish = resolve));
  let ended = false;
  const untap = container.tap({
    stdout: (b) => stdout?.write(b),
    // with a tty podman merges stderr into stdout already; anything here is podman's own
    stderr: (b) => (stderr ?? stdout)?.write(b),
  });
  const end = () => {
    if (ended) return;
    ended = true;
    untap();
    stdout?.end();
    stderr?.end();
    finish({ exitCode: 0 });
  };
  void container.ended.then(end);
  const stdin = opts.stdin
    ? new Writable({
        write(chunk: Buffer, _enc, cb) {
          container.writeStdin(chunk);
          cb();
        },
        final(cb) {
          // the client closed its stdin (v5 CLOSE): with stdinOnce the container sees EOF now
          if (container.opts.stdinOnce) container.closeStdin();
          cb();
        },
      })
    : null;
  return {
    stdin,
    stdout,
    stderr,
    resize: (width, height) => {
      if (tty && staticDir) resizeConmonTerminal(staticDir, width, height);
    },
    done,
    abort: () => {
      // the client went away: the container keeps running, but a stdinOnce container's stdin closes
      if (opts.stdin && container.opts.stdinOnce) container.closeStdin();
      end();
    },
  };
}
