/**
 * One port-forward WebSocket (`v4.channel.k8s.io`) as a Duplex: the TCP connection inside the pod.
 * berth's own because client-node's PortForward never ends its output when the socket closes (a
 * dropped forward leaves the client hanging), drops the error channel, ignores backpressure both ways
 * and hides the Status of a refused upgrade. The socket is opened first and only then does anything
 * read the caller's bytes, so a refused attempt consumes nothing and the caller may retry.
 */
import { Duplex } from 'node:stream';
import type { KubeConfig } from '@kubernetes/client-node';
import WebSocket from 'ws';
import { openChannelSocket } from './channel-socket.js';
import { KubeError } from './errors.js';
import { keepAlive } from './keepalive.js';

export const PORT_FORWARD_PROTOCOL = 'v4.channel.k8s.io';
/** Each channel's first bytes from the server are the port, 2 bytes little-endian. */
const PORT_PREFIX_BYTES = 2;
const DATA = 0;
const ERROR = 1;

export interface PortForwardOptions {
  pingIntervalMs?: number;
  /** No pong for this long ends the forward as dropped (client-go: 61 s). */
  pongTimeoutMs?: number;
}

/** Opens the forward; rejects (with the server's Status in the sentence) when the upgrade fails. */
export async function openPortForward(kc: KubeConfig, namespace: string, pod: string, port: number, opts: PortForwardOptions = {}): Promise<Duplex> {
  const action = { verb: 'create', resource: 'pods/portforward', namespace, name: pod, server: kc.getCurrentCluster()?.server };
  // Only v4 carries port-forward over channels; the server must not pick an exec-only protocol.
  const opened = await openChannelSocket(kc, `/api/v1/namespaces/${namespace}/pods/${pod}/portforward?ports=${port}`, [PORT_FORWARD_PROTOCOL], action);
  const ws = opened.ws;
  // Frames that arrived before the Duplex takes over are handed to it.
  opened.takeOver();
  const frames = opened.early;
  if (ws.protocol !== PORT_FORWARD_PROTOCOL) {
    ws.close();
    throw new KubeError(`the cluster negotiated ${ws.protocol || 'no protocol'} for pods/portforward of ${pod}; berth speaks ${PORT_FORWARD_PROTOCOL}`);
  }
  return new PortForwardStream(ws, frames, pod, port, opts);
}

class PortForwardStream extends Duplex {
  private readonly prefixLeft = [PORT_PREFIX_BYTES, PORT_PREFIX_BYTES];
  private readonly stopPings: () => void;
  private failure?: Error;

  constructor(
    private readonly ws: WebSocket,
    early: Buffer[],
    private readonly pod: string,
    private readonly port: number,
    opts: PortForwardOptions,
  ) {
    super({ allowHalfOpen: true });
    ws.on('message', (raw: Buffer, isBinary: boolean) => {
      if (isBinary && raw.length > 0) this.onFrame(raw);
    });
    ws.on('error', (err) => (this.failure ??= err));
    ws.on('close', (code) => this.onClose(code));
    this.stopPings = keepAlive(ws, { intervalMs: opts.pingIntervalMs, pongTimeoutMs: opts.pongTimeoutMs }, (seconds) => {
      this.failure ??= new KubeError(`the port-forward to ${pod}:${port} went silent (no pong for ${seconds} s)`);
    });
    for (const f of early) this.onFrame(f);
  }

  private onFrame(frame: Buffer): void {
    const channel = frame[0];
    let payload = frame.subarray(1);
    if (channel !== DATA && channel !== ERROR) return;
    const skip = Math.min(this.prefixLeft[channel], payload.length);
    this.prefixLeft[channel] -= skip;
    payload = payload.subarray(skip);
    if (payload.length === 0) return;
    if (channel === ERROR) {
      // The kubelet could not reach the port in the pod (nothing listens, the pod is going away).
      this.failure = new KubeError(payload.toString('utf8').trim());
      this.ws.close();
      return;
    }
    if (!this.push(payload)) this.ws.pause();
  }

  private onClose(code: number): void {
    this.stopPings();
    if (this.failure) this.destroy(this.failure);
    else if (code !== 1000 && code !== 1005)
      this.destroy(new KubeError(`the port-forward to ${this.pod}:${this.port} was dropped (WebSocket closed with ${code})`));
    else this.push(null);
  }

  override _read(): void {
    if (this.ws.isPaused) this.ws.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.ws.readyState !== WebSocket.OPEN) return done(this.failure ?? new KubeError(`the port-forward to ${this.pod}:${this.port} is closed`));
    const frame = Buffer.allocUnsafe(chunk.length + 1);
    frame[0] = DATA;
    chunk.copy(frame, 1);
    // Completing the write only once the frame left keeps a fast client from filling memory.
    this.ws.send(frame, { binary: true }, (err) => done(err ?? null));
  }

  /** v4 cannot half-close: the pod's side ends the connection (documented in docs/serve.md). */
  override _final(done: (err?: Error | null) => void): void {
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.stopPings();
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close();
    done(err);
  }
}
