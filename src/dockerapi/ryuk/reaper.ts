/**
 * Ryuk, served by berth itself. testcontainers starts `testcontainers/ryuk` with the docker socket bound
 * in, waits for "Started" in its log, connects to its port 8080 and sends label filters. A pod cannot
 * reach berth's socket, so berth recognises the image and plays the reaper in-process: no pod, the same
 * port protocol (`label=k=v&label=...` lines answered `ACK`), and when the last client has been gone for
 * RYUK_RECONNECTION_TIMEOUT (or none came within RYUK_CONNECTION_TIMEOUT) it removes every container,
 * network and volume matching any filter received.
 */
import net from 'node:net';
import { goDurationMs } from '../filters/docker-time.js';

export const REAPER_IMAGE = /(^|\/)ryuk(:|@|$)/;

export function isReaperImage(image: string): boolean {
  return REAPER_IMAGE.test(image);
}

/** One line of the protocol → the labels that must all match. */
export function parseReaperLine(line: string): string[] {
  return new URLSearchParams(line.trim()).getAll('label').filter(Boolean);
}

/**
 * A Ryuk timeout (`RYUK_CONNECTION_TIMEOUT`, `RYUK_RECONNECTION_TIMEOUT`) in milliseconds: a Go duration, as Ryuk
 * reads it (`10s`, `1m30s`, `500ms`), or plain seconds, which berth has always taken too; a negative one is over
 * at once. A value that is neither keeps the default, and berth serve says so.
 */
export function ryukTimeoutMs(name: string, text: string | undefined, fallbackMs: number): number {
  const value = text?.trim();
  if (!value) return fallbackMs;
  const ms = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : goDurationMs(value);
  if (ms === undefined) {
    process.stderr.write(
      `berth serve: the reaper's ${name}=${text} is no duration (give one as Ryuk reads it: 10s, 1m30s, 500ms); it keeps ${fallbackMs / 1000}s\n`,
    );
    return fallbackMs;
  }
  return Math.max(0, ms);
}

export interface ReaperOptions {
  host: string;
  port: number;
  connectionTimeoutMs: number;
  reconnectionTimeoutMs: number;
  /** Removes everything whose labels match one of the filter sets. */
  reap(filters: string[][]): Promise<void>;
  /** The reaper is done (after reaping): its container exits. */
  onDone(): void;
}

export class Reaper {
  private server?: net.Server;
  private readonly filters: string[][] = [];
  private clients = 0;
  private timer?: NodeJS.Timeout;
  private done = false;

  constructor(private readonly opts: ReaperOptions) {}

  async start(): Promise<number> {
    const server = net.createServer((socket) => this.onClient(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => resolve());
    });
    this.arm(this.opts.connectionTimeoutMs);
    return (server.address() as net.AddressInfo).port;
  }

  private onClient(socket: net.Socket): void {
    this.clients++;
    clearTimeout(this.timer);
    let buffered = '';
    socket.on('data', (d: Buffer) => {
      buffered += d.toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const labels = parseReaperLine(line);
        if (labels.length) this.filters.push(labels);
        socket.write('ACK\n');
      }
    });
    socket.on('error', () => undefined);
    socket.once('close', () => {
      this.clients--;
      if (this.clients === 0) this.arm(this.opts.reconnectionTimeoutMs);
    });
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.finish(true), ms);
    this.timer.unref();
  }

  /** Stops serving; reaps first when `reap` (the timeout path), not when the reaper container is stopped. */
  async finish(reap: boolean): Promise<void> {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.server?.close();
    if (reap && this.filters.length) await this.opts.reap(this.filters).catch(() => undefined);
    this.opts.onDone();
  }
}
