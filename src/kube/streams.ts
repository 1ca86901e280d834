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
import { keepAlive } from './keepalive.js';
import { pumpStdin } from './stdin-pump.js';

export const PROTOCOL_V5 = 'v5.channel.k8s.io';
/** Offered newest first, as client-go does; v5 is the one that can end stdin. */
const CHANNEL_PROTOCOLS = [PROTOCOL_V5, 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
const STDOUT = 1;
const STDERR = 2;
const STATUS = 3;

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
  /** Resolves once all of stdin is handed to the socket (at once without stdin); never when the session ended first. */
  stdinSent: Promise<void>;
  /** Ends the session from our side (abort). */
  close(): void;
}

export function openAttach(kc: KubeConfig, namespace: string, pod: string, container: string, opts: StreamOptions): Promise<StreamSession> {
  const query = querystring.stringify({
    container,
    stdin: Boolean(opts.stdin),
    stdout: Boolean(opts.stdout),
    stderr: Boolean(opts.stderr),
    tty: Boolean(opts.tty),
  });
  return openStream(kc, `/api/v1/namespaces/${namespace}/pods/${pod}/attach?${query}`, opts, { verb: 'create', resource: 'pods/attach', namespace, name: pod });
}

/**
 * An attach that feeds a file receiver (runtime/file-feed.ts): stdin in, its stderr out (asking for an output also
 * keeps the kubelet's empty opening frame off the status channel). Any channel protocol: without v5 the sender
 * ends stdin by closing the session, which the receiver's stdinOnce turns into its end of input.
 */
export function openFeedAttach(kc: KubeConfig, namespace: string, pod: string, container: string, stdin: Readable, stderr: Writable): Promise<StreamSession> {
  return openAttach(kc, namespace, pod, container, { stdin, stderr });
}

export function openExec(kc: KubeConfig, namespace: string, pod: string, container: string, command: string[], opts: StreamOptions): Promise<StreamSession> {
  const query = querystring.stringify({
    container,
    command,
    stdin: Boolean(opts.stdin),
    stdout: Boolean(opts.stdout),
    stderr: Boolean(opts.stderr),
    tty: Boolean(opts.tty),
  });
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
  const stopPings = keepAlive(ws, { intervalMs: opts.pingIntervalMs, pongTimeoutMs: opts.pongTimeoutMs }, (seconds) => {
    failure = new StreamLost(`the ${action.resource} stream to ${action.name} went silent (no pong for ${seconds} s)`);
  });

  const done = new Promise<StreamResult>((resolve, reject) => {
    ws.on('error', (err) => (failure ??= new StreamLost(toKubeError(err, { ...action, server }).message, err)));
    ws.on('close', () => {
      stopPings();
      if (opts.stdin) opts.stdin.unpipe?.();
      if (status) resolve({ protocol, status });
      else if (closedByUs) reject(new KubeError(`the ${action.resource} stream to ${action.name} was closed by berth`));
      else reject(failure ?? new StreamLost(`the ${action.resource} stream to ${action.name} closed without a status: the connection was lost`));
    });
  });
  done.catch(() => undefined);

  const stdinSent = opts.stdin ? pumpStdin(ws, opts.stdin, supportsStdinClose, opts.maxBufferedBytes ?? 1024 * 1024) : Promise.resolve();

  return {
    protocol,
    supportsStdinClose,
    done,
    stdinSent,
    close() {
      closedByUs = true;
      stopPings();
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close();
    },
  };
}
