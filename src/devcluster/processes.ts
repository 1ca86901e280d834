// The cluster's parts run as detached processes of this machine: each logs to logs/NAME.log and is found again
// by the pid in pids/NAME.pid, so `down`, `status` and a later `up` work from any process.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from './layout.js';

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
}

export function logFile(layout: Layout, name: string): string {
  return join(layout.logs, `${name}.log`);
}

export function startProcess(layout: Layout, name: string, argv: string[], opts: StartOptions = {}): number {
  mkdirSync(layout.logs, { recursive: true });
  mkdirSync(layout.pids, { recursive: true });
  const log = openSync(logFile(layout, name), 'a');
  const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', log, log], env: opts.env ?? process.env });
  closeSync(log);
  if (child.pid === undefined) throw new Error(`dev-cluster: could not start ${name} (${argv[0]})`);
  child.unref();
  writeFileSync(join(layout.pids, `${name}.pid`), String(child.pid));
  return child.pid;
}

export function pidOf(layout: Layout, name: string): number | undefined {
  const file = join(layout.pids, `${name}.pid`);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8'));
  return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone (it is not our child: no exit event) */
export async function stopPid(pid: number, graceMs = 10_000): Promise<void> {
  if (!alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await pause(50);
  if (alive(pid)) {
    process.kill(pid, 'SIGKILL');
    while (alive(pid)) await pause(20);
  }
}

export async function stopProcess(layout: Layout, name: string, graceMs?: number): Promise<void> {
  const pid = pidOf(layout, name);
  if (pid !== undefined) await stopPid(pid, graceMs);
  rmSync(join(layout.pids, `${name}.pid`), { force: true });
}

/** SIGKILL at once, as a crash would; resolves once the process is gone */
export async function killProcess(layout: Layout, name: string): Promise<void> {
  const pid = pidOf(layout, name);
  if (pid !== undefined) {
    process.kill(pid, 'SIGKILL');
    while (alive(pid)) await pause(20);
  }
  rmSync(join(layout.pids, `${name}.pid`), { force: true });
}

/** the last lines of a part's log, for an error that says why it did not come up */
export function logTail(layout: Layout, name: string, lines = 15): string {
  const file = logFile(layout, name);
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/**
 * Waits until `ready` answers true. Starting processes give no event to wait on, so this asks every
 * `everyMs`; if the process dies or time runs out, the error carries its log's tail.
 */
export async function waitUntil(layout: Layout, name: string, what: string, ready: () => Promise<boolean>, timeoutMs: number, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready().catch(() => false)) return;
    const pid = pidOf(layout, name);
    const reason = pid === undefined ? `${name} exited` : Date.now() > deadline ? `${what} did not happen within ${timeoutMs / 1000} s` : undefined;
    if (reason) throw new Error(`dev-cluster: ${reason}; the end of ${logFile(layout, name)}:\n${logTail(layout, name)}`);
    await pause(everyMs);
  }
}
