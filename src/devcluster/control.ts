// Runs the dev cluster as a background process and finds it again: up, down, status, kubeconfig.
import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startDevCluster, type DevClusterOptions, type RunningDevCluster } from './cluster.js';

const run = promisify(execFile);

export interface ClusterState {
  pid: number;
  server: string;
  clusterId: string;
  kubeconfig: string;
  startedAt: string;
}

export function defaultStateDir(): string {
  return process.env.BERTH_DEV_CLUSTER_DIR || join(homedir(), '.berth', 'dev-cluster');
}

const stateFile = (stateDir: string) => join(stateDir, 'state.json');

export function readState(stateDir: string): ClusterState | undefined {
  try {
    return JSON.parse(readFileSync(stateFile(stateDir), 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running cluster of this state dir, or undefined (a stale state file from a killed server is ignored). */
export function runningCluster(stateDir: string): ClusterState | undefined {
  const state = readState(stateDir);
  return state && isAlive(state.pid) ? state : undefined;
}

/**
 * Runs in this process until SIGINT/SIGTERM, then stops every container of the cluster before exiting.
 * `onReady` is told once the API answers (the background launcher waits for it over IPC).
 */
export async function runForeground(opts: DevClusterOptions, onReady: (state: ClusterState) => void): Promise<void> {
  const existing = runningCluster(opts.stateDir);
  if (existing) throw new Error(`a dev cluster already runs from ${opts.stateDir} (pid ${existing.pid}, ${existing.server}); stop it with: berth dev-cluster down`);
  const cluster: RunningDevCluster = await startDevCluster(opts);
  const state: ClusterState = { pid: process.pid, server: cluster.server, clusterId: cluster.clusterId, kubeconfig: cluster.kubeconfigPath, startedAt: new Date().toISOString() };
  writeFileSync(stateFile(opts.stateDir), JSON.stringify(state, null, 2));
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`dev-cluster: ${signal}, stopping pods and the API server\n`);
    try {
      await cluster.stop();
    } finally {
      rmSync(stateFile(opts.stateDir), { force: true });
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  onReady(state);
}

/** Starts the cluster as a detached process (node run with nodeFlags) and resolves once its API answers. */
export async function startBackground(cliPath: string, args: string[], stateDir: string, nodeFlags: string[] = [], timeoutMs = 60_000): Promise<ClusterState> {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const logPath = join(stateDir, 'server.log');
  const log = openSync(logPath, 'a');
  const child = spawn(process.execPath, [...nodeFlags, cliPath, 'dev-cluster', 'up', '--foreground', ...args], {
    detached: true,
    stdio: ['ignore', log, log, 'ipc'],
  });
  return new Promise<ClusterState>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`the dev cluster did not answer within ${timeoutMs / 1000} s; see ${logPath}`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.removeAllListeners();
      if (child.connected) child.disconnect();
      reject(err);
    };
    child.on('message', (msg: { ready?: ClusterState; error?: string }) => {
      if (msg.error) return fail(new Error(msg.error));
      if (!msg.ready) return;
      clearTimeout(timer);
      child.removeAllListeners();
      child.disconnect();
      child.unref();
      resolve(msg.ready);
    });
    child.on('exit', (code) => {
      const tail = existsSync(logPath) ? readFileSync(logPath, 'utf8').trim().split('\n').slice(-5).join('\n') : '';
      fail(new Error(`the dev cluster exited with code ${code} before it was ready; see ${logPath}\n${tail}`));
    });
  });
}

/** Stops the cluster's process (it removes its pods) and then sweeps podman for anything a crashed server left. */
export async function stopCluster(stateDir: string, podman = 'podman', timeoutMs = 60_000): Promise<boolean> {
  const state = readState(stateDir);
  if (!state) return false;
  if (isAlive(state.pid)) {
    process.kill(state.pid, 'SIGTERM');
    const deadline = Date.now() + timeoutMs;
    // The server is not our child, so there is no exit event to await; its pid is checked until it is gone.
    while (isAlive(state.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (isAlive(state.pid)) process.kill(state.pid, 'SIGKILL');
  }
  await sweepPodman(podman, state.clusterId);
  rmSync(stateFile(stateDir), { force: true });
  return true;
}

export async function sweepPodman(podman: string, clusterId: string): Promise<void> {
  // podman 4.3's `pod rm` takes no --filter, and infra containers carry no pod labels: list first, then remove
  const filter = `label=io.berth.dev-cluster=${clusterId}`;
  const ids = async (args: string[]) => (await run(podman, args).catch(() => ({ stdout: '' }))).stdout.split('\n').filter(Boolean);
  const pods = await ids(['pod', 'ps', '-q', '--filter', filter]);
  if (pods.length) await run(podman, ['pod', 'rm', '-f', '-t', '0', ...pods]).catch(() => undefined);
  const containers = await ids(['ps', '-a', '-q', '--filter', filter]);
  if (containers.length) await run(podman, ['rm', '-f', '-t', '0', ...containers]).catch(() => undefined);
}

/** Asks the API whether it is ready, trusting the cluster's own CA. */
export async function probeReady(stateDir: string, state: ClusterState): Promise<boolean> {
  const { request } = await import('node:https');
  const ca = readFileSync(join(stateDir, 'ca.crt'));
  return new Promise((resolve) => {
    const req = request(`${state.server}/readyz`, { ca, timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
