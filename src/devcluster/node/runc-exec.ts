// exec straight through the OCI runtime, as containerd's shim does on a real node (`runc exec`), instead of
// through `podman exec`: podman's own start-up (storage, locks, a conmon per exec) costs a few hundred
// milliseconds of every exec, archive copy and kubectl cp under load, and runc hands the process our pipes
// directly. The process gets what the container's OCI spec gives it (env, HOSTNAME included, user, working
// directory, capabilities), as a CRI runtime's exec does. Used for rootful runc without a terminal; podman
// exec serves the rest (a tty needs a console socket, crun and rootless keep their own state).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { ExecOptions, ExitResult, StreamSession } from '../types.js';
import type { PodmanCli } from './podman-cli.js';
import { processSession } from './sessions.js';
import { stdoutHeldForStderr } from './stderr-first.js';

/** runc's state directory when run as root (podman passes no --root of its own) */
const RUNC_ROOT = '/run/runc';

export interface RuncRuntime {
  binary: string;
  root: string;
  /** where each exec's runc log goes (read for the reason of a failed exec, then removed) */
  logDir: string;
}

/** runc as podman runs it, or undefined when podman's runtime is another one or runs rootless. */
export async function detectRunc(cli: PodmanCli, logDir: string): Promise<RuncRuntime | undefined> {
  if (process.getuid?.() !== 0 || !existsSync(RUNC_ROOT)) return undefined;
  const r = await cli.run(['info', '--format', '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}}']);
  const [name, binary] = r.stdout.trim().split(/\s+/);
  if (r.code !== 0 || name !== 'runc' || !binary) return undefined;
  mkdirSync(logDir, { recursive: true });
  return { binary, root: RUNC_ROOT, logDir };
}

/** Whether runc holds this container's state (it runs under runc at RUNC_ROOT). */
export function runcCanExec(runtime: RuncRuntime, containerId: string, opts: ExecOptions): boolean {
  return !opts.tty && /^[0-9a-f]{64}$/.test(containerId) && existsSync(join(runtime.root, containerId, 'state.json'));
}

/** runc's exit code for its own failures (the process never ran); the reason is in its log */
const RUNC_FAILURE = 255;

/**
 * `runc exec <id> cmd...`. The exit code is the process's (128 + signal when killed); when runc could not
 * start the command, 127 (not found) or 126 (not executable), as podman and dockerd answer, with runc's reason
 * on stderr; other runc failures end the session with the reason as the error.
 */
export function runcExecSession(runtime: RuncRuntime, containerId: string, opts: ExecOptions): StreamSession {
  const logFile = join(runtime.logDir, `${randomUUID()}.json`);
  const args = ['--root', runtime.root, '--log', logFile, '--log-format', 'json', 'exec', containerId, ...opts.command];
  const child = spawn(runtime.binary, args, { stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  child.stdin?.on('error', () => undefined);
  // runc's own reason (not the process's output) is written to stderr after runc exits, so the stream ends then
  const stderr = opts.stderr ? new PassThrough() : null;
  if (stderr) child.stderr!.pipe(stderr, { end: false });
  else child.stderr!.resume();
  const stdout = opts.stdout ? (stderr ? stdoutHeldForStderr(child.stdout!, child.stderr!) : child.stdout!) : null;
  if (!stdout) child.stdout!.resume();
  const done = new Promise<ExitResult>((resolve) => {
    child.on('error', (err) => {
      stderr?.end();
      resolve({ error: `error executing command in container: ${err.message}` });
    });
    child.on('close', (code, signal) => {
      const failure = code === RUNC_FAILURE ? runcError(logFile) : undefined;
      rmSync(logFile, { force: true });
      if (failure !== undefined) {
        const unrunnable = /executable file not found|no such file or directory/i.test(failure) ? 127 : /permission denied|is a directory/i.test(failure) ? 126 : undefined;
        if (unrunnable !== undefined) stderr?.write(`OCI runtime exec failed: ${failure}\n`);
        stderr?.end();
        resolve(unrunnable !== undefined ? { exitCode: unrunnable } : { error: `error executing command in container: ${failure}` });
        return;
      }
      stderr?.end();
      if (code === null) resolve({ error: `error executing command in container: runc exec ended by ${signal}` });
      else resolve({ exitCode: code });
    });
  });
  return processSession(child, opts, stdout, stderr, done);
}

/** The last error runc logged (JSON lines), or undefined when it logged none: the 255 was the process's own. */
function runcError(logFile: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return undefined;
  }
  let message: string | undefined;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const entry = JSON.parse(line) as { level?: string; msg?: string };
      if (entry.level === 'error' || entry.level === 'fatal') message = entry.msg ?? message;
    } catch {
      // a torn line: runc was killed while writing
    }
  }
  return message;
}
