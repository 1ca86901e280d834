/**
 * attach/exec sessions over client-node's WebSocket connection, with what client-node leaves out:
 * the negotiated protocol is checked, stdin is throttled on the socket's real buffer, v5 ends stdin
 * with a CLOSE frame, pings keep proxies from cutting a quiet session, the server's Status body of
 * a refused upgrade is kept for the error sentence, and a socket that closes without a Status frame
 * is a failure, never a silent success.
 */
import type { Readable, Writable } from 'node:stream';
import querystring from 'node:querystring';
import type { KubeConfig } from '@kubernetes/client-node';
import WebSocket from 'ws';
import { openChannelSocket } from './channel-socket.js';
import { KubeError, StreamLost, toKubeError, type StatusLike } from './errors.js';

export const PROTOCOL_V5 = 'v5.channel.k8s.io';
/** Offered newest first, as client-go does; v5 is the one that can end stdin. */
const CHANNEL_PROTOCOLS = [PROTOCOL_V5, 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const STATUS = 3;
const CLOSE = 255;

export interface StreamOptions {
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  tty?: boolean;
  /** Refuse (and close) a session whose server cannot end stdin (no v5) instead of hanging. */
  requireStdinClose?: boolean;
  /** Pause stdin while more than this many bytes wait in the socket. */
  maxBufferedBytes?: number;
  pingIntervalMs?: number;
  /** No pong for this long ends the session as failed (client-go: 61 s). */
  pongTimeoutMs?: number;
  /** Told every output chunk before it is written (what the session delivered, for checks against the log). */
  tap?(channel: 'stdout' | 'stderr', data: Buffer): void;
}

export interface StreamResult {
  protocol: string;
  /** Channel-3 Status: `Success`, or `Failure` with reason NonZeroExitCode and the exit code as cause. */
  status: StatusLike & { status?: string };
}

export interface StreamSession {
  protocol: string;
  supportsStdinClose: boolean;
  /** Settles when the server closes the session; rejects when it ends without a Status. */
  done: Promise<StreamResult>;
  /** Ends the session from our side (abort). */
  close(): void;
}

export function openAttach(kc: KubeConfig, namespace: string, pod: string, container: string, opts: StreamOptions): Promise<StreamSession> {
  const query = querystring.stringify({ container, stdin: Boolean(opts.stdin), stdout: Boolean(opts.stdout), stderr: Boolean(opts.stderr), tty: Boolean(opts.tty) });
  return openStream(kc, `/api/v1/namespaces/${namespace}/pods/${pod}/attach?${query}`, opts, { verb: 'create', resource: 'pods/attach', namespace, name: pod });
}

export function openExec(kc: KubeConfig, namespace: string, pod: string, container: string, command: string[], opts: StreamOptions): Promise<StreamSession> {
  const query = querystring.stringify({ container, command, stdin: Boolean(opts.stdin), stdout: Boolean(opts.stdout), stderr: Boolean(opts.stderr), tty: Boolean(opts.tty) });
  return openStream(kc, `/api/v1/namespaces/${namespace}/pods/${pod}/exec?${query}`, opts, { verb: 'create', resource: 'pods/exec', namespace, name: pod });
}

/** The exit code an exec Status carries (0 for Success); undefined when it carries none. */
export function exitCodeOfStatus(status: StreamResult['status']): number | undefined {
  if (status.status === 'Success') return 0;
  if (status.reason === 'NonZeroExitCode') {
    const cause = status.details?.causes?.find((c) => (c as { reason?: string }).reason === 'ExitCode');
    const n = Number(cause?.message);
    if (Number.isInteger(n)) return n;
  }
  return undefined;
}

async function openStream(
  kc: KubeConfig,
  path: string,
  opts: StreamOptions,
  action: { verb: string; resource: string; namespace: string; name: string },
): Promise<StreamSession> {
  const server = kc.getCurrentCluster()?.server;
  const opened = await openChannelSocket(kc, path, CHANNEL_PROTOCOLS, { ...action, server });
  const ws = opened.ws;
  let status: StreamResult['status'] | undefined;
  const outputs: Record<number, Writable | undefined> = { [STDOUT]: opts.stdout, [STDERR]: opts.stderr };
  const onMessage = (raw: Buffer): void => {
    if (raw.length === 0) return;
    const channel = raw[0];
    const data = raw.subarray(1);
    if (channel === STATUS) {
      // servers open each channel with an empty frame; a status is the one frame with content
      if (data.length === 0) return;
      try {
        status = JSON.parse(data.toString('utf8')) as StreamResult['status'];
      } catch {
        // pre-v4 servers send the error as plain text
        status = { status: 'Failure', message: data.toString('utf8') } as StreamResult['status'];
      }
      return;
    }
    const out = outputs[channel];
    if (!out || data.length === 0) return;
    opts.tap?.(channel === STDOUT ? 'stdout' : 'stderr', data);
    if (!out.write(data)) {
      // Reading backpressure: stop reading the socket until the consumer drains.
      ws.pause();
      out.once('drain', () => ws.resume());
    }
  };
  opened.takeOver();
  for (const frame of opened.early) onMessage(frame);
  ws.on('message', (raw: Buffer) => onMessage(raw));

  const protocol = ws.protocol;
  const supportsStdinClose = protocol === PROTOCOL_V5;
  if (opts.stdin && opts.requireStdinClose && !supportsStdinClose) {
    ws.close();
    throw new KubeError(
      `the cluster negotiated ${protocol || 'no channel protocol'} for ${action.resource}, which cannot end stdin (needs ${PROTOCOL_V5}, Kubernetes ≥ 1.30); set stdinMode: file in the berth config`,
    );
  }

  let closedByUs = false;
  let failure: Error | undefined;
  const pingEvery = opts.pingIntervalMs ?? 5000;
  const pongTimeout = opts.pongTimeoutMs ?? 61000;
  let lastPong = Date.now();
  ws.on('pong', () => (lastPong = Date.now()));
  const pinger = setInterval(() => {
    if (Date.now() - lastPong > pongTimeout) {
      failure = new StreamLost(`the ${action.resource} stream to ${action.name} went silent (no pong for ${Math.round(pongTimeout / 1000)} s)`);
      ws.terminate();
      return;
    }
    if (ws.readyState === WebSocket.OPEN) ws.ping();
  }, pingEvery);
  pinger.unref();

  const done = new Promise<StreamResult>((resolve, reject) => {
    ws.on('error', (err) => (failure ??= new StreamLost(toKubeError(err, { ...action, server }).message, err)));
    ws.on('close', () => {
      clearInterval(pinger);
      if (opts.stdin) opts.stdin.unpipe?.();
      if (status) resolve({ protocol, status });
      else if (closedByUs) reject(new KubeError(`the ${action.resource} stream to ${action.name} was closed by berth`));
      else reject(failure ?? new StreamLost(`the ${action.resource} stream to ${action.name} closed without a status: the connection was lost`));
    });
  });
  done.catch(() => undefined);

  if (opts.stdin) pumpStdin(ws, opts.stdin, supportsStdinClose, opts.maxBufferedBytes ?? 1024 * 1024);

  return {
    protocol,
    supportsStdinClose,
    done,
    close() {
      closedByUs = true;
      clearInterval(pinger);
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close();
    },
  };
}

/**
 * Largest stdin payload per WebSocket message. The kubelet's and API server's stream code (x/net/websocket)
 * refuses messages over 32 MiB, and the receiver holds a whole message before writing any of it to the
 * process: a big chunk (a whole archive) is cut so the process starts reading while the rest travels.
 * kubectl's own stdin messages are at most 32 KiB (one read of its stdin).
 */
export const MAX_STDIN_FRAME = 64 * 1024;

/**
 * stdin → channel 0, at most `maxBuffered` bytes in the socket at a time: a large chunk (a whole archive
 * handed over at once) is framed piece by piece as the socket drains, not copied into frames all at once.
 * Ends with v5 CLOSE once everything is sent.
 */
function pumpStdin(ws: WebSocket, stdin: Readable, canClose: boolean, maxBuffered: number): void {
  let inFlight = 0;
  let pending: Buffer | undefined;
  let ended = false;
  // A frame's buffer is reused once the socket has written it (or is gone): a fresh one per message made
  // V8 count each 16 MiB archive twice towards its next full collection. As many as maxBuffered holds.
  const spare: Buffer[] = [];
  const sendFrame = (data: Buffer): void => {
    const block = spare.pop() ?? Buffer.allocUnsafe(MAX_STDIN_FRAME + 1);
    const frame = block.subarray(0, data.length + 1);
    frame[0] = STDIN;
    data.copy(frame, 1);
    inFlight += frame.length;
    ws.send(frame, { binary: true }, () => {
      inFlight -= frame.length;
      spare.push(block);
      pump();
    });
  };
  const pump = (): void => {
    if (ws.readyState !== WebSocket.OPEN) return;
    while (pending && inFlight <= maxBuffered) {
      sendFrame(pending.subarray(0, MAX_STDIN_FRAME));
      pending = pending.length > MAX_STDIN_FRAME ? pending.subarray(MAX_STDIN_FRAME) : undefined;
    }
    if (pending || inFlight > maxBuffered) return;
    // Without v5 there is no way to end stdin but closing the socket, which ends the whole session:
    // callers plan for that (stdin delivered as a file) and never give us stdin then.
    if (ended) {
      ended = false;
      if (canClose) ws.send(Buffer.from([CLOSE, STDIN]), { binary: true });
    } else if (inFlight <= maxBuffered / 2 && stdin.isPaused()) stdin.resume();
  };
  const onData = (chunk: Buffer | string): void => {
    if (ws.readyState !== WebSocket.OPEN) return;
    pending = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (pending.length === 0) pending = undefined;
    pump();
    if (pending || inFlight > maxBuffered) stdin.pause();
  };
  stdin.on('data', onData);
  stdin.once('end', () => {
    stdin.off('data', onData);
    ended = true;
    pump();
  });
  stdin.once('error', () => ws.close());
  ws.once('close', () => stdin.off('data', onData));
}
