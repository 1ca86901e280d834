// The shim agent: one long-lived berth process per user that runs `docker run` for short-lived `docker` processes.
// kustomize and kpt start a `docker` process per function; without the agent each of them pays for loading
// @kubernetes/client-node and opening a first TLS connection (about a second here). The agent keeps those loaded,
// runs each request with the caller's argv, environment and working directory, and exits after an idle period.
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
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

/** `berth shim pool ls|drain`, answered from the agent's own pool. */
async function answerControl(control: NonNullable<AgentRequest['control']>, pool: WarmPool): Promise<string> {
  if (control === 'pool-drain') {
    const n = await pool.drain();
    pool.reopen();
    return `${n} warm pod${n === 1 ? '' : 's'} deleted\n`;
  }
  const pods = pool.list();
  const rows = pods.map((p) => `${p.pod.padEnd(40)} ${p.namespace.padEnd(20)} ${String(p.idleSeconds).padStart(6)}s  ${p.key}  ${p.image}`);
  return `${'POD'.padEnd(40)} ${'NAMESPACE'.padEnd(20)} ${'IDLE'.padStart(7)}  ${'PLAN'.padEnd(12)}  IMAGE\n${rows.map((r) => `${r}\n`).join('')}`;
}

function serveConnection(socket: Socket, pool: WarmPool | undefined, onDone: () => void, background: (deletions: Promise<void>) => void): void {
  const decoder = new FrameDecoder();
  const stdin = new PassThrough();
  const signals = new EventEmitter();
  let started = false;
  let finished = false;
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
          const answer = pool ? answerControl(request.control, pool) : Promise.resolve('this agent keeps no warm pods (started with --pool-size 0)\n');
          void answer.then((text) => {
            finished = true;
            stdout.write(text);
            if (!socket.destroyed) socket.end(exitFrame(0));
            onDone();
          });
          return;
        }
        // BERTH_SHIM_POOL=0 in a caller's environment: that call neither takes nor leaves warm pods.
        const usePool = (request.env.BERTH_SHIM_POOL ?? '') !== '0' ? pool : undefined;
        runDockerShim(request.argv, request.env as NodeJS.ProcessEnv, { stdin, stdout, stderr, signals, cwd: request.cwd, traceOrigin: performance.now(), background, pool: usePool })
          .catch((err: Error) => {
            stderr.write(`docker: ${err.message}\n`);
            return 125;
          })
          .then((code) => {
            finished = true;
            // stdout and stderr frames are queued on the socket in order: the exit frame comes after them
            if (!socket.destroyed) socket.end(exitFrame(code));
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
  const pendingDeletions = new Set<Promise<void>>();
  const server = createServer((socket) => {
    active++;
    if (idle) clearTimeout(idle);
    serveConnection(
      socket,
      pool,
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
    rmSync(`${socketPath}.pid`, { force: true });
    // Idle or stopped: warm pods go with the agent (after a SIGKILL, their deadline and berth gc do),
    // once the deletions of finished runs have settled.
    void Promise.allSettled([pool?.drain(), ...pendingDeletions]).then(() => process.exit(0));
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
