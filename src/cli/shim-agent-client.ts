// The `docker` process as a thin client of the shim agent: it forwards its argv, environment, working directory,
// stdin and signals, and plays back stdout, stderr and the exit code. The agent is started on first use.
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { encodeFrame, FRAME, FrameDecoder, type AgentRequest, type Frame } from '../shim/agent-frames.js';

const AGENT_START_TIMEOUT_MS = 10_000;

function connectTo(path: string): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => resolve(socket));
    socket.once('error', () => resolve(undefined));
  });
}

/** starts `berth shim agent` detached and resolves once it listens (or gives up: the caller runs in-process) */
function startAgent(path: string): Promise<void> {
  const main = fileURLToPath(new URL('./main.js', import.meta.url));
  const child = spawn(process.execPath, [main, 'shim', 'agent', '--socket', path], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve) => {
    const timer = setTimeout(finish, AGENT_START_TIMEOUT_MS);
    function finish() {
      clearTimeout(timer);
      child.stdout.destroy();
      child.unref();
      resolve();
    }
    createInterface({ input: child.stdout }).once('line', finish);
    child.once('exit', finish);
  });
}

/** the exit code, or undefined when no agent could be reached (the caller then runs the shim in-process) */
export async function runThroughAgent(argv: string[], socketPath: string, forwardStdin: boolean): Promise<number | undefined> {
  let socket = await connectTo(socketPath);
  if (!socket) {
    await startAgent(socketPath);
    socket = await connectTo(socketPath);
  }
  if (!socket) return undefined;
  const request: AgentRequest = { argv, env: process.env, cwd: process.cwd(), stderrIsTTY: Boolean(process.stderr.isTTY) };
  socket.write(encodeFrame(FRAME.header, JSON.stringify(request)));
  if (forwardStdin) {
    process.stdin.on('data', (chunk: Buffer) => {
      if (socket.write(encodeFrame(FRAME.stdin, chunk))) return;
      process.stdin.pause();
      socket.once('drain', () => process.stdin.resume());
    });
    process.stdin.on('end', () => socket.write(encodeFrame(FRAME.stdinEnd)));
  }
  const relay = (name: string) => () => socket.write(encodeFrame(FRAME.signal, name));
  process.on('SIGINT', relay('SIGINT'));
  process.on('SIGTERM', relay('SIGTERM'));
  return new Promise<number>((resolve) => {
    let code: number | undefined;
    const decoder = new FrameDecoder();
    socket.pipe(decoder);
    decoder.on('data', (frame: Frame) => {
      if (frame.type === FRAME.stdout) {
        if (process.stdout.write(frame.payload)) return;
        socket.pause();
        process.stdout.once('drain', () => socket.resume());
      } else if (frame.type === FRAME.stderr) process.stderr.write(frame.payload);
      else if (frame.type === FRAME.exit) code = frame.payload.readInt32BE(0);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (code === undefined) process.stderr.write('docker: berth\'s shim agent went away before the run ended (see `berth shim agent --help`)\n');
      resolve(code ?? 125);
    });
  });
}

/** A control question (`berth shim pool ls|drain`) to a running agent; undefined when none runs. */
export async function askAgent(socketPath: string, control: NonNullable<AgentRequest['control']>): Promise<string | undefined> {
  const socket = await connectTo(socketPath);
  if (!socket) return undefined;
  const request: AgentRequest = { control, argv: [], env: {}, cwd: process.cwd(), stderrIsTTY: false };
  socket.write(encodeFrame(FRAME.header, JSON.stringify(request)));
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const decoder = new FrameDecoder();
    socket.pipe(decoder);
    decoder.on('data', (frame: Frame) => {
      if (frame.type === FRAME.stdout) out.push(frame.payload);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Buffer.concat(out).toString()));
  });
}
