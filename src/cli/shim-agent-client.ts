// The `docker` process as a thin client of the shim agent: it forwards its argv, environment, working directory,
// stdin and signals, and plays back stdout, stderr and the exit code. The agent is started on first use.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { delimiter, dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentIdleSeconds, encodeFrame, FRAME, FrameDecoder, type AgentRequest, type Frame } from '../shim/agent-frames.js';
import type { Trace } from '../runtime/trace.js';

const AGENT_START_TIMEOUT_MS = 10_000;

function connectTo(path: string): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => resolve(socket));
    socket.once('error', () => resolve(undefined));
  });
}

/**
 * Starts `berth shim agent` detached (a session of its own: a terminal's Ctrl-C is for the client) and
 * resolves once it listens, or gives up (the caller runs in-process). It holds none of the client's
 * stdio (a shell reading the client's output must not wait for the agent); what it says goes to
 * `SOCKET.log`, private to the user as the socket is.
 */
async function startAgent(path: string): Promise<void> {
  // only the first call of a session starts the agent: the others do not load these
  const [{ spawn }, { createInterface }] = await Promise.all([import('node:child_process'), import('node:readline')]);
  const main = fileURLToPath(new URL('./main.js', import.meta.url));
  let log: number | 'ignore' = 'ignore';
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    if (statSync(dirname(path)).mode & 0o077) {
      // the agent would refuse it: say so once per call, as each call is then slower by a whole berth start
      process.stderr.write(
        `berth: the shim agent was not started: ${dirname(path)} must be private to you (mode 0700); this call runs in its own process, which is slower (name a socket in a private folder with BERTH_SHIM_AGENT_SOCKET, or set BERTH_SHIM_AGENT=0 to run every call so, without this line)\n`,
      );
      return;
    }
    log = openSync(`${path}.log`, 'a', 0o600);
  } catch {
    // no log: the agent still runs
  }
  const child = spawn(process.execPath, [main, 'shim', 'agent', '--socket', path, '--idle', agentIdleSeconds()], {
    detached: true,
    stdio: ['ignore', 'pipe', log],
  });
  if (typeof log === 'number') closeSync(log);
  const stdout = child.stdout as NonNullable<typeof child.stdout>;
  return new Promise((resolve) => {
    const timer = setTimeout(finish, AGENT_START_TIMEOUT_MS);
    function finish() {
      clearTimeout(timer);
      stdout.destroy();
      child.unref();
      resolve();
    }
    createInterface({ input: stdout }).once('line', finish);
    child.once('exit', finish);
  });
}

/**
 * The paths in the environment that name files relative to the working directory, made absolute: the agent
 * resolves them from its own.
 */
function absolutePaths(env: NodeJS.ProcessEnv, cwd: string): NodeJS.ProcessEnv {
  const out = { ...env };
  const abs = (p: string) => (p && !isAbsolute(p) ? resolve(cwd, p) : p);
  if (out.KUBECONFIG) out.KUBECONFIG = out.KUBECONFIG.split(delimiter).map(abs).join(delimiter);
  for (const name of ['BERTH_KUBECONFIG', 'BERTH_CONFIG']) if (out[name]) out[name] = abs(out[name]);
  // a template name stays a name; a file found from here becomes its absolute path
  const template = out.BERTH_POD_TEMPLATE;
  if (template && !isAbsolute(template) && existsSync(resolve(cwd, template))) out.BERTH_POD_TEMPLATE = resolve(cwd, template);
  return out;
}

/**
 * The exit code, or undefined when no agent could be reached or it declined the call (the caller then runs
 * the shim in-process: nothing of stdin has been read yet).
 */
export async function runThroughAgent(argv: string[], socketPath: string, forwardStdin: boolean, trace: Trace): Promise<number | undefined> {
  let socket = await connectTo(socketPath);
  if (!socket) {
    trace('client: no agent: starting one');
    await startAgent(socketPath);
    socket = await connectTo(socketPath);
  }
  if (!socket) return undefined;
  trace('client: connected to the agent');
  const cwd = process.cwd();
  const request: AgentRequest = { argv, env: absolutePaths(process.env, cwd), cwd, stderrIsTTY: Boolean(process.stderr.isTTY) };
  socket.write(encodeFrame(FRAME.header, JSON.stringify(request)));
  const forward = (): void => {
    if (!forwardStdin) return;
    process.stdin.on('data', (chunk: Buffer) => {
      if (socket.write(encodeFrame(FRAME.stdin, chunk))) return;
      process.stdin.pause();
      socket.once('drain', () => process.stdin.resume());
    });
    process.stdin.on('end', () => socket.write(encodeFrame(FRAME.stdinEnd)));
  };
  const relay = (name: string) => () => socket.write(encodeFrame(FRAME.signal, name));
  process.on('SIGINT', relay('SIGINT'));
  process.on('SIGTERM', relay('SIGTERM'));
  return new Promise<number | undefined>((resolve) => {
    let code: number | undefined;
    let declined = false;
    const decoder = new FrameDecoder();
    socket.pipe(decoder);
    decoder.on('data', (frame: Frame) => {
      if (frame.type === FRAME.stdout) {
        if (process.stdout.write(frame.payload)) return;
        socket.pause();
        process.stdout.once('drain', () => socket.resume());
      } else if (frame.type === FRAME.stderr) process.stderr.write(frame.payload);
      else if (frame.type === FRAME.accepted) {
        trace('client: the agent runs the call');
        forward();
      } else if (frame.type === FRAME.declined) {
        declined = true;
        trace(`client: the agent declined (${frame.payload.toString()}): running in this process`);
      } else if (frame.type === FRAME.exit) {
        code = frame.payload.readInt32BE(0);
        trace('client: exit code received');
        // The exit frame is the agent's last: what stdin still holds is for nobody (docker run ends when its
        // container does, read or not), and stdin frames the agent no longer takes must not hold the socket open.
        process.stdin.removeAllListeners('data');
        process.stdin.destroy();
        socket.destroy();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (declined) {
        process.removeAllListeners('SIGINT');
        process.removeAllListeners('SIGTERM');
        return resolve(undefined);
      }
      if (code === undefined) process.stderr.write("docker: berth's shim agent went away before the run ended (see `berth shim agent --help`)\n");
      resolve(code ?? 125);
    });
  });
}

/** The pid of the agent that answers at `socketPath` (from its pid file); undefined when none answers there. */
export async function agentPid(socketPath: string): Promise<string | undefined> {
  const socket = await connectTo(socketPath);
  if (!socket) return undefined;
  socket.destroy();
  try {
    return readFileSync(`${socketPath}.pid`, 'utf8').trim() || '?';
  } catch {
    return '?';
  }
}

/** A control question (`berth shim pool ls|drain`, `berth shim agent status|stop`) to a running agent; undefined when none runs. */
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
