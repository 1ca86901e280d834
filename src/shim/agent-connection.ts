// One client of the shim agent (agent.ts): its request frame, then a run (or a control command such as
// `berth shim pool ls`) whose stdout, stderr and exit code go back as frames, with the client's stdin and
// signals passed on. A client that goes away before its run ended is treated as SIGTERM.
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { EventEmitter } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import type { KubeCluster } from '../kube/cluster.js';
import { connectWithSettings, loadRunSettings } from '../runtime/settings.js';
import type { WarmPool } from '../runtime/warm-pool.js';
import { encodeFrame, exitFrame, FRAME, FrameDecoder, type AgentRequest, type Frame } from './agent-frames.js';
import { runDockerShim } from './shim.js';

/** how long a client may keep its connection after the answer before the agent closes it */
const ANSWERED_CONNECTION_MS = 10_000;

/** What a connection needs of its agent. */
export interface AgentContext {
  pool: WarmPool | undefined;
  status(): string;
  stop(): void;
}

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
  if (settings.podTemplate && !isAbsolute(settings.podTemplate) && existsSync(resolve(request.cwd, settings.podTemplate)))
    return { declined: `the pod template path ${settings.podTemplate} is relative` };
  let cluster: KubeCluster;
  try {
    cluster = await connectWithSettings(settings, env);
  } catch {
    return {};
  }
  const user = cluster.kc.getCurrentUser();
  if (user?.exec || user?.authProvider)
    return {
      declined: `the kubeconfig user ${user.name} gets its credentials from ${user.exec ? 'an exec plugin' : 'an auth provider'}, which would run with the agent's environment`,
    };
  return { cluster };
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

/** Serves one connection; `onDone` once it is answered (or went away), `background` for deletions still running after. */
export class AgentConnection {
  private readonly stdin = new PassThrough();
  private readonly signals = new EventEmitter();
  private started = false;
  private finished = false;
  private gone = false;

  constructor(
    private readonly socket: Socket,
    private readonly agent: AgentContext,
    private readonly onDone: () => void,
    private readonly background: (deletions: Promise<void>) => void,
  ) {
    const decoder = new FrameDecoder();
    socket.on('error', () => socket.destroy());
    socket.pipe(decoder);
    decoder.on('data', (frame: Frame) => this.onFrame(frame));
    // the client went away (killed, even with SIGKILL) before its run ended: clean up as for SIGTERM
    socket.on('close', () => {
      this.gone = true;
      if (this.started && !this.finished) this.signals.emit('SIGTERM');
      if (!this.started) onDone();
    });
  }

  private onFrame(frame: Frame): void {
    switch (frame.type) {
      case FRAME.header:
        return this.onRequest(frame.payload);
      case FRAME.stdin:
        // after the answer, stdin is for nobody: taken and dropped, so the client's writes never block on it
        if (this.finished) return;
        if (this.stdin.write(frame.payload)) return;
        this.socket.pause();
        this.stdin.once('drain', () => this.socket.resume());
        return;
      case FRAME.stdinEnd:
        this.stdin.end();
        return;
      case FRAME.signal:
        this.signals.emit(frame.payload.toString());
        return;
      default:
        this.socket.destroy();
    }
  }

  private onRequest(payload: Buffer): void {
    if (this.started) return void this.socket.destroy();
    this.started = true;
    let request: AgentRequest;
    try {
      request = JSON.parse(payload.toString()) as AgentRequest;
    } catch {
      return void this.socket.destroy();
    }
    const stdout = frameWriter(this.socket, FRAME.stdout, false);
    const stderr = frameWriter(this.socket, FRAME.stderr, request.stderrIsTTY);
    if (request.control) return this.answer(request.control, stdout);
    void this.run(request, stdout, stderr).catch((err: Error) => {
      stderr.write(`docker: ${err.message}\n`);
      this.finish(exitFrame(125));
    });
  }

  /** `berth shim agent status|stop`, `berth shim pool ls|drain` */
  private answer(control: NonNullable<AgentRequest['control']>, stdout: Writable): void {
    const { pool } = this.agent;
    const answer =
      control === 'status' || control === 'stop'
        ? Promise.resolve(control === 'status' ? this.agent.status() : `agent ${process.pid} stops: its warm pods are deleted\n`)
        : pool
          ? answerControl(control, pool)
          : Promise.resolve('this agent keeps no warm pods (started with --pool-size 0)\n');
    void answer.then((text) => {
      stdout.write(text);
      this.finish(exitFrame(0));
      if (control === 'stop') this.agent.stop();
    });
  }

  /** A docker call, run here for the client unless it must run in the client's own process (standIn). */
  private async run(request: AgentRequest, stdout: Writable, stderr: Writable): Promise<void> {
    const traceOrigin = performance.now();
    // BERTH_SHIM_POOL=0 in a caller's environment: that call neither takes nor leaves warm pods.
    const pool = (request.env.BERTH_SHIM_POOL ?? '') !== '0' ? this.agent.pool : undefined;
    const { cluster, declined } = await standIn(request);
    // the client went away while the agent looked at its request: nothing was started
    if (this.gone) return this.finish();
    // The client has sent nothing but its request: it runs the call itself.
    if (declined) return this.finish(encodeFrame(FRAME.declined, declined));
    this.socket.write(encodeFrame(FRAME.accepted));
    const { stdin, signals, background } = this;
    const code = await runDockerShim(request.argv, request.env as NodeJS.ProcessEnv, {
      stdin,
      stdout,
      stderr,
      signals,
      cwd: request.cwd,
      traceOrigin,
      background,
      pool,
      cluster,
    });
    // stdout and stderr frames are queued on the socket in order: the exit frame comes after them
    this.finish(exitFrame(code));
  }

  /**
   * The answer is complete: its last frame (if any) ends the connection. stdin that the run did not read is
   * dropped (the socket may be paused on it), and a client that keeps the connection open after its answer
   * (stopped, wedged) is cut after a while: an agent that is asked to stop waits for its connections.
   */
  private finish(last?: Buffer): void {
    this.finished = true;
    this.stdin.destroy();
    this.socket.resume();
    if (last && !this.socket.destroyed) this.socket.end(last);
    setTimeout(() => this.socket.destroy(), ANSWERED_CONNECTION_MS).unref();
    this.onDone();
  }
}
