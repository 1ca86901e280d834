// The shim agent: one long-lived berth process per user that runs `docker run` for short-lived `docker` processes.
// kustomize and kpt start a `docker` process per function; without the agent each of them pays for loading
// @kubernetes/client-node and opening a first TLS connection (about a second here). The agent keeps those loaded,
// runs each request with the caller's argv, environment and working directory (agent-connection.ts), and exits
// after an idle period.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname } from 'node:path';
import { WarmPool, type WarmPodOptions } from '../runtime/warm-pool.js';
import { AgentConnection, type AgentContext } from './agent-connection.js';

/** What `berth shim agent status` prints. */
function statusText(socketPath: string, startedAt: number, idleSeconds: number, active: () => number, pool: WarmPool | undefined): string {
  return [
    `pid:        ${process.pid}`,
    `socket:     ${socketPath}`,
    "serves:     every context and namespace (each call with its caller's kubeconfig and BERTH_* settings)",
    `up:         ${Math.round((Date.now() - startedAt) / 1000)}s (exits after ${idleSeconds}s without requests)`,
    `running:    ${active()} call${active() === 1 ? '' : 's'} and deletions`,
    `warm pods:  ${pool ? `${pool.list().length} (${pool.perPlan} per plan, up to ${pool.burstMax} for a plan called in bursts; ${pool.maxPlans} plans, ${pool.idleSeconds}s idle)` : 'off (--pool-size 0)'}`,
    '',
  ].join('\n');
}

/**
 * Listens on `socketPath` (mode 0600 in a 0700 folder; its pid in `socketPath`.pid) until idle for
 * `idleSeconds`; keeps warm pods (unless `pool.perPlan` is 0), all deleted before it exits, also on
 * SIGTERM and SIGINT.
 */
export function startAgent(socketPath: string, idleSeconds: number, poolOptions: WarmPodOptions = {}): Promise<Server> {
  const pool =
    (poolOptions.perPlan ?? 2) > 0
      ? new WarmPool({ ...poolOptions, idleSeconds: Math.min(idleSeconds, poolOptions.idleSeconds ?? 300), onError: (m) => process.stderr.write(`${m}\n`) })
      : undefined;
  mkdirSync(dirname(socketPath), { recursive: true, mode: 0o700 });
  if (statSync(dirname(socketPath)).mode & 0o077) throw new Error(`${dirname(socketPath)} must be private to you (mode 0700)`);
  rmSync(socketPath, { force: true });
  let active = 0;
  let idle: NodeJS.Timeout | undefined;
  const startedAt = Date.now();
  const pendingDeletions = new Set<Promise<void>>();
  const context: AgentContext = {
    pool,
    status: () => statusText(socketPath, startedAt, idleSeconds, () => active - 1, pool),
    stop: () => stop(),
  };
  const server = createServer((socket) => {
    active++;
    if (idle) clearTimeout(idle);
    new AgentConnection(
      socket,
      context,
      () => {
        active--;
        armIdle();
      },
      // the client has its exit code while its pod is deleted: an idle agent still waits for that
      (deletions) => {
        active++;
        if (idle) clearTimeout(idle);
        pendingDeletions.add(deletions);
        void deletions.catch(() => undefined).finally(() => pendingDeletions.delete(deletions));
        void deletions
          .catch(() => undefined)
          .finally(() => {
            active--;
            armIdle();
          });
      },
    );
  });
  const armIdle = () => {
    if (active > 0) return;
    if (idle) clearTimeout(idle);
    idle = setTimeout(() => server.close(), idleSeconds * 1000);
  };
  server.on('close', () => {
    rmSync(socketPath, { force: true });
    // at once, with the socket: a client that finds no socket from now on starts a new agent on this log
    removeEmptyLog(`${socketPath}.log`);
    // Idle or stopped: warm pods go with the agent (after a SIGKILL, their deadline and berth gc do),
    // once the deletions of finished runs have settled. The pid file goes last: `berth shim agent stop`
    // waits for it (a newer agent may own it by then).
    void Promise.allSettled([pool?.drain(), ...pendingDeletions]).then(() => {
      try {
        if (readFileSync(`${socketPath}.pid`, 'utf8').trim() === String(process.pid)) rmSync(`${socketPath}.pid`, { force: true });
      } catch {
        // no pid file
      }
      process.exit(0);
    });
  });
  const stop = (): void => {
    if (idle) clearTimeout(idle);
    server.close();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const oldMask = process.umask(0o177);
    server.listen(socketPath, () => {
      process.umask(oldMask);
      // lets a user (or a test) find and stop the agent
      writeFileSync(`${socketPath}.pid`, `${process.pid}\n`);
      armIdle();
      resolve(server);
    });
  });
}

/**
 * The log the client opened for this agent (shim-agent-client.ts), gone at a clean exit when the agent said
 * nothing: one is made per build of berth, and empty ones piled up in the socket's folder. One with
 * lines stays for the user to read.
 */
function removeEmptyLog(path: string): void {
  try {
    if (statSync(path).size === 0) rmSync(path, { force: true });
  } catch {
    // no log
  }
}
