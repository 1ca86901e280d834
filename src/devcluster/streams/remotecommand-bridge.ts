// Joins an accepted exec/attach WebSocket to a node StreamSession: output to channels 1/2, channel 0 to
// stdin, resizes, v5 CLOSE, and the closing status on channel 3 once the session is over and its output
// flushed.
import type { Readable } from 'node:stream';
import { WebSocket } from 'ws';
import type { ExitResult, StreamSession } from '../types.js';
import { sessionOutcome } from './remotecommand-session.js';
import { ChannelCodec, toBuffer } from './channel-codec.js';
import { sendOnChannel } from './channel-send.js';
import { legacyErrorText, sessionStatus, type SessionKind } from './exit-status.js';
import { ResizeDecoder } from './resize-decoder.js';
import { isBase64Protocol, V4_BASE64_CHANNEL, V4_CHANNEL, V5_CHANNEL } from './subprotocols.js';
import { closeSession } from './websocket-accept.js';

export const STDIN = 0;
export const STDOUT = 1;
export const STDERR = 2;
export const ERROR = 3;
export const RESIZE = 4;
export const CLOSE = 255;
const CHANNEL_COUNT = 5;

/** output is paused while more than this is queued on the WebSocket, stdin's socket while more waits for the process; both resume below the low mark */
const HIGH_WATER = 1024 * 1024;
const LOW_WATER = 256 * 1024;
/** a dropped session is cut at its first output or after this long, whichever is first */
const DROP_AFTER_MS = 100;

export interface BridgeOptions {
  protocol: string;
  kind: SessionKind;
  command: readonly string[];
  /** the reliability fault: cut the socket without a status */
  drop: boolean;
}

export function bridgeRemoteCommand(ws: WebSocket, session: StreamSession, opts: BridgeOptions): void {
  new RemoteCommandBridge(ws, session, opts).start();
}

class RemoteCommandBridge {
  private readonly codec: ChannelCodec;
  private readonly v5: boolean;
  private readonly v4OrLater: boolean;
  private readonly resize = new ResizeDecoder();
  /** status sent, or the session torn down: nothing more goes either way */
  private over = false;
  private outputPaused = false;
  private stdinPausedSocket = false;
  private stdinEnded = false;
  private dropTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly session: StreamSession,
    private readonly opts: BridgeOptions,
  ) {
    this.codec = new ChannelCodec(isBase64Protocol(opts.protocol));
    this.v5 = opts.protocol === V5_CHANNEL;
    this.v4OrLater = this.v5 || opts.protocol === V4_CHANNEL || opts.protocol === V4_BASE64_CHANNEL;
  }

  start(): void {
    const { ws, session } = this;
    ws.on('error', () => undefined); // a 'close' follows every error
    ws.on('close', () => this.onSocketClosed());
    ws.on('message', (data) => this.safely(() => this.onMessage(toBuffer(data))));
    session.stdin?.on('error', () => undefined); // EPIPE once the process is gone is not the client's problem
    session.stdin?.once('close', () => this.resumeSocket());
    // the kubelet announces the connection with an empty frame on the lowest channel it writes
    this.send(session.stdout ? STDOUT : session.stderr ? STDERR : ERROR, Buffer.alloc(0));
    if (this.opts.drop) this.dropTimer = setTimeout(() => this.drop(), DROP_AFTER_MS);

    const outputs = Promise.all([this.pump(session.stdout, STDOUT), this.pump(session.stderr, STDERR)]);
    void sessionOutcome(session, outputs).then((result) => this.safely(() => this.finish(result)));
  }

  /** resolves when the stream has ended (or was never there) */
  private pump(readable: Readable | null, channel: number): Promise<void> {
    if (!readable) return Promise.resolve();
    return new Promise((resolve) => {
      readable.on('data', (chunk: Buffer | string) =>
        this.safely(() => {
          this.send(channel, typeof chunk === 'string' ? Buffer.from(chunk) : chunk, () => this.maybeResumeOutput());
          if (this.opts.drop) this.drop();
          else if (this.ws.bufferedAmount > HIGH_WATER) this.pauseOutput();
        }),
      );
      readable.once('end', () => resolve());
      readable.once('close', () => resolve());
      readable.once('error', () => resolve());
    });
  }

  private pauseOutput(): void {
    if (this.outputPaused) return;
    this.outputPaused = true;
    this.session.stdout?.pause();
    this.session.stderr?.pause();
  }

  private maybeResumeOutput(): void {
    if (!this.outputPaused || this.ws.bufferedAmount > LOW_WATER) return;
    this.outputPaused = false;
    this.session.stdout?.resume();
    this.session.stderr?.resume();
  }

  private onMessage(message: Buffer): void {
    if (this.over) return;
    const frame = this.codec.decode(message);
    if (!frame) return;
    const { channel, payload } = frame;
    if (channel === STDIN) this.writeStdin(payload);
    else if (channel === RESIZE) for (const size of this.resize.push(payload)) this.session.resize(size.width, size.height);
    else if (channel === CLOSE && this.v5) this.onClose(payload);
    // other channels are the server's to write, or unknown: the kubelet ignores them
  }

  /** v5 CLOSE: exactly one byte naming a valid channel, anything else is a protocol error */
  private onClose(payload: Buffer): void {
    if (payload.length !== 1 || payload[0]! >= CHANNEL_COUNT) {
      this.teardown(true);
      return;
    }
    if (payload[0] === STDIN) this.endStdin();
  }

  /**
   * The socket is paused while more than HIGH_WATER waits for the process, and read again below LOW_WATER.
   * Not at the pipe's own 16 KiB mark, with 'drain': that let the pipe run empty after every message before
   * the next was read (a 16 MiB archive at 130 MiB/s), where a kubelet's copy keeps feeding it.
   */
  private writeStdin(data: Buffer): void {
    const stdin = this.session.stdin;
    if (!stdin || this.stdinEnded || stdin.destroyed || stdin.writableEnded || data.length === 0) return;
    stdin.write(data, () => {
      if (this.stdinPausedSocket && stdin.writableLength <= LOW_WATER) this.resumeSocket();
    });
    if (stdin.writableLength > HIGH_WATER && !this.stdinPausedSocket) {
      this.stdinPausedSocket = true;
      this.ws.pause();
    }
  }

  private resumeSocket(): void {
    if (!this.stdinPausedSocket) return;
    this.stdinPausedSocket = false;
    this.ws.resume();
  }

  private endStdin(): void {
    if (this.stdinEnded) return;
    this.stdinEnded = true;
    const stdin = this.session.stdin;
    if (stdin && !stdin.destroyed && !stdin.writableEnded) stdin.end();
  }

  private finish(result: ExitResult): void {
    if (this.over) return;
    // a session picked for dropping never delivers a status, however quickly it ends
    if (this.opts.drop) {
      this.drop();
      return;
    }
    this.over = true;
    clearTimeout(this.dropTimer);
    this.resumeSocket();
    if (this.ws.readyState !== WebSocket.OPEN) return;
    const status = sessionStatus(result, this.opts.kind, this.opts.command);
    if (this.v4OrLater) this.send(ERROR, Buffer.from(JSON.stringify(status)));
    else {
      const text = legacyErrorText(status);
      if (text !== undefined) this.send(ERROR, Buffer.from(text));
    }
    closeSession(this.ws);
  }

  private drop(): void {
    this.teardown(true);
  }

  /** the client left (or must be cut off) before the session ended: stop the session */
  private teardown(cutSocket: boolean): void {
    if (this.over) return;
    this.over = true;
    clearTimeout(this.dropTimer);
    if (cutSocket) this.ws.terminate();
    this.session.stdout?.resume(); // let the node's pipes drain instead of blocking the process
    this.session.stderr?.resume();
    try {
      this.session.abort();
    } catch {
      // the session is gone either way
    }
  }

  private onSocketClosed(): void {
    this.teardown(false);
  }

  private send(channel: number, payload: Buffer, sent?: () => void): void {
    sendOnChannel(this.ws, this.codec, channel, payload, sent);
  }

  private safely(action: () => void): void {
    try {
      action();
    } catch {
      this.teardown(true);
    }
  }
}
