// The shim agent's wire format over its unix socket: frames of a 1-byte type, a 4-byte big-endian length and the
// payload. The client sends the request header, stdin and signals; the agent sends stdout, stderr and the exit code.
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Transform, type TransformCallback } from 'node:stream';

export const FRAME = {
  /** client → agent: JSON AgentRequest, first and once */
  header: 0x48,
  stdin: 0x49,
  stdinEnd: 0x45,
  /** a signal name the client received (SIGINT, SIGTERM) */
  signal: 0x53,
  /** agent → client: the run is the agent's; stdin may follow (nothing is sent before it) */
  accepted: 0x41,
  /** agent → client: the agent cannot run this one as the client would (payload: why); the client runs it itself */
  declined: 0x44,
  stdout: 0x4f,
  stderr: 0x52,
  /** 4-byte exit code; the last frame */
  exit: 0x58,
} as const;

export interface AgentRequest {
  /** A question for the agent itself (`berth shim pool ls|drain`, `berth shim agent status|stop`) instead of a docker command. */
  control?: 'pool-ls' | 'pool-drain' | 'status' | 'stop';
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  stderrIsTTY: boolean;
}

export interface Frame {
  type: number;
  payload: Buffer;
}

export function encodeFrame(type: number, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const head = Buffer.alloc(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

export function exitFrame(code: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(code, 0);
  return encodeFrame(FRAME.exit, b);
}

/** bytes in, whole frames out (object mode) */
export class FrameDecoder extends Transform {
  private pending: Buffer = Buffer.alloc(0);

  constructor() {
    super({ readableObjectMode: true });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 5) {
      const length = this.pending.readUInt32BE(1);
      if (this.pending.length < 5 + length) break;
      this.push({ type: this.pending.readUInt8(0), payload: this.pending.subarray(5, 5 + length) } satisfies Frame);
      this.pending = this.pending.subarray(5 + length);
    }
    done();
  }
}

/**
 * `$XDG_RUNTIME_DIR` (else the temp dir) `/berth-<uid>/shim-agent-<build>.sock`, in a folder only the user
 * can open. `<build>` names this copy of berth (where it is installed and when it was built): a client only
 * ever talks to an agent of its own code, and an upgrade starts a new agent (the old one ends when idle).
 */
export function defaultAgentSocket(env: NodeJS.ProcessEnv = process.env): string {
  if (env.BERTH_SHIM_AGENT_SOCKET) return env.BERTH_SHIM_AGENT_SOCKET;
  return join(env.XDG_RUNTIME_DIR || tmpdir(), `berth-${currentUid()}`, `shim-agent-${buildId()}.sock`);
}

/**
 * The process's uid. Not os.userInfo(): that reads the passwd entry, and a pod run as a uid its image does not
 * list (runAsUser, OpenShift's random uids) has none, so it throws.
 */
export function currentUid(): number {
  return process.getuid?.() ?? 0;
}

function buildId(): string {
  const self = fileURLToPath(import.meta.url);
  let built = 0;
  try {
    built = statSync(self).mtimeMs;
  } catch {
    // bundled or virtual: the path alone
  }
  return shortHash(`${self} ${built}`);
}

/** 12 hex digits of two FNV-1a passes: a name, not a secret (node:crypto would cost every `docker run` its load). */
function shortHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c ^ (i & 0xff), 0x01000193) >>> 0;
  }
  return (a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0')).slice(0, 12);
}

export { agentEnabled } from './agent-choice.js';

/** Seconds an agent started on first use waits without requests before it exits (BERTH_SHIM_AGENT_IDLE, default 300). */
export function agentIdleSeconds(env: NodeJS.ProcessEnv = process.env): string {
  return env.BERTH_SHIM_AGENT_IDLE?.trim() || '300';
}
