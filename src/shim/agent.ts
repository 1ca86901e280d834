// The shim agent: one long-lived berth process per user that runs `docker run` for short-lived `docker` processes.
// kustomize and kpt start a `docker` process per function; without the agent each of them pays for loading
// @kubernetes/client-node and opening a first TLS connection (about a second here). The agent keeps those loaded,
// runs each request with the caller's argv, environment and working directory, and exits after an idle period.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { KubeCluster } from '../kube/cluster.js';
import { connectWithSettings, loadRunSettings } from '../runtime/settings.js';
import { EventEmitter } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { WarmPool, type WarmPodOptions } from '../runtime/warm-pool.js';
import { encodeFrame, exitFrame, FRAME, FrameDecoder, type AgentRequest, type Frame } from './agent-frames.js';
import { runDockerShim } from './shim.js';

/** a stream that forwards what is written as frames of one type, with the socket's backpressure */
function frameWriter(socket: Socket, type: number, isTTY: boolean): Writable & { isTTY?: boolean } {
  const w = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (socket.destroyed) return done();
      if (socket.write(encodeFrame(type, chunk))) done();
      else socket.once('drain', () => done());
    },
  }) as Writable & { isTTY?: boolean };
  w.isTTY = isTTY;
  return w;
}

/**
 * The cluster a run request names, or why the agent cannot stand in for the client: the agent runs with
 * its own environment and working directory, so a kubeconfig user whose credentials come from a program
 * (exec plugin, auth provider: it would run with the agent's environment, e.g. another cloud profile) or a
 * relative path in the berth config would not be what the client meant. Those run in the client's process.
 * A config the agent cannot read is the run's to report (runDockerShim says why).
 */
async function standIn(request: AgentRequest): Promise<{ cluster?: KubeCluster; declined?: string }> {
  const env = request.env as NodeJS.ProcessEnv;
  let settings;
  try {
    settings = loadRunSettings(env);
  } catch {
    return {};
  }
  if (settings.kubeconfig && !isAbsolute(settings.kubeconfig)) return { declined: `the kubeconfig path ${settings.kubeconfig} is relative` };
  if (settings.podTemplate && !isAbsolute(settings.podTemplate) && existsSync(resolve(request.cwd, settings.podTemplate))) return { declined: `the pod template path ${settings.podTemplate} is relative` };
  let cluster: KubeCluster;
  try {
    cluster = await connectWithSettings(settings, env);
  } catch {
    return {};
  }
  const user = cluster.kc.getCurrentUser();
  if (user?.exec || user?.authProvider) return { declined: `the kubeconfig user ${user.name} gets its credentials from ${user.exec ? 'an exec plugin' : 'an auth provider'}, which would run with the agent's environment` };
  return { cluster };
}

/** What `berth shim agent status` prints. */
function statusText(socketPath: string, startedAt: number, idleSeconds: number, active: () => number, pool: WarmPool | undefined): string {
  return [
    `pid:        ${process.pid}`,
    `socket:     ${socketPath}`,
    `up:         ${Math.round((Date.now() - startedAt) / 1000)}s (exits after ${idleSeconds}s without requests)`,
    `running:    ${active()} call${active() === 1 ? '' : 's'} and deletions`,
    `warm pods:  ${pool ? `${pool.list().length} (${pool.perPlan} per plan, up to ${pool.burstMax} for a plan called in bursts; ${pool.maxPlans} plans, ${pool.idleSeconds}s idle)` : 'off (--pool-size 0)'}`,
    '',
  ].join('\n');
}

/** `berth shim pool ls|drain`, answered from the agent's own pool. */
async function answerControl(control: 'pool-ls' | 'pool-drain', pool: WarmPool): Promise<string> {
  if (control === 'pool-drain') {
    const n = await pool.drain();
    pool.reopen();
    return `${n} warm pod${n === 1 ? '' : 's'} deleted\n`;
  }
  const pods = pool.list();
  const rows = pods.map((p) => `${p.pod.padEnd(40)} ${p.namespace.padEnd(20)} ${String(p.idleSeconds).padStart(6)}s  ${p.key}  ${p.image}`);
  return `${'POD'.padEnd(40)} ${'NAMESPACE'.padEnd(20)} ${'IDLE'.padStart(7)}  ${'PLAN'.padEnd(12)}  IMAGE\n${rows.map((r) => `${r}\n`).join('')}`;
}

interface AgentContext {
  pool: WarmPool | undefined;
  status(): string;
  stop(): void;
}

function serveConnection(socket: Socket, agent: AgentContext, onDone: () => void, background: (deletions: Promise<void>) => void): void {
  const pool = agent.pool;
  const decoder = new FrameDecoder();
  const stdin = new PassThrough();
  const signals = new EventEmitter();
  let started = false;
  let finished = false;
  let gone = false;
  socket.on('error', () => socket.destroy());
  socket.pipe(decoder);
  decoder.on('data', (frame: Frame) => {
    switch (frame.type) {
      case FRAME.header: {
        if (started) return socket.destroy();
        started = true;
        let request: AgentRequest;
        try {
          request = JSON.parse(frame.payload.toString()) as AgentRequest;
        } catch {
          return socket.destroy();
        }
        const stdout = frameWriter(socket, FRAME.stdout, false);
        const stderr = frameWriter(socket, FRAME.stderr, request.stderrIsTTY);
        if (request.control) {
          const control = request.control;
          const answer =
            control === 'status' || control === 'stop'
              ? Promise.resolve(control === 'status' ? agent.status() : `agent ${process.pid} stops: its warm pods are deleted\n`)
              : pool
                ? answerControl(control, pool)
                : Promise.resolve('this agent keeps no warm pods (started with --pool-size 0)\n');
          void answer.then((text) => {
            finished = true;
            stdout.write(text);
            if (!socket.destroyed) socket.end(exitFrame(0));
            onDone();
            if (control === 'stop') agent.stop();
          });
          return;
        }
        const traceOrigin = performance.now();
        // BERTH_SHIM_POOL=0 in a caller's environment: that call neither takes nor leaves warm pods.
        const usePool = (request.env.BERTH_SHIM_POOL ?? '') !== '0' ? pool : undefined;
        void standIn(request)
          .then(({ cluster, declined }) => {
            if (gone) {
              // the client went away while the agent looked at its request: nothing was started
              finished = true;
              onDone();
              return undefined;
            }
            if (declined) {
              // The client has sent nothing but its request: it runs the call itself.
              finished = true;
              if (!socket.destroyed) socket.end(encodeFrame(FRAME.declined, declined));
              onDone();
              return undefined;
            }
            socket.write(encodeFrame(FRAME.accepted));
            return runDockerShim(request.argv, request.env as NodeJS.ProcessEnv, { stdin, stdout, stderr, signals, cwd: request.cwd, traceOrigin, background, pool: usePool, cluster });
          })
          .then((code) => {
            if (code === undefined) return;
            finished = true;
            // stdout and stderr frames are queued on the socket in order: the exit frame comes after them
            if (!socket.destroyed) socket.end(exitFrame(code));
            onDone();
          })
          .catch((err: Error) => {
            stderr.write(`docker: ${err.message}\n`);
            finished = true;
            if (!socket.destroyed) socket.end(exitFrame(125));
            onDone();
          });
        return;
      }
      case FRAME.stdin:
        if (stdin.write(frame.payload)) return;
        socket.pause();
        stdin.once('drain', () => socket.resume());
        return;
      case FRAME.stdinEnd:
        stdin.end();
        return;
      case FRAME.signal:
        signals.emit(frame.payload.toString());
        return;
      default:
        socket.destroy();
    }
  });
  // the client went away (killed, even with SIGKILL) before its run ended: clean up as for SIGTERM
  socket.on('close', () => {
    gone = true;
    if (started && !finished) signals.emit('SIGTERM');
    if (!started) onDone();
  });
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
    serveConnection(
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
