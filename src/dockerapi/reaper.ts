/**
 * Ryuk, served by berth itself. testcontainers starts `testcontainers/ryuk` with the docker socket bound
 * in, waits for "Started" in its log, connects to its port 8080 and sends label filters. A pod cannot
 * reach berth's socket, so berth recognises the image and plays the reaper in-process: no pod, the same
 * port protocol (`label=k=v&label=...` lines answered `ACK`), and when the last client has been gone for
 * RYUK_RECONNECTION_TIMEOUT (or none came within RYUK_CONNECTION_TIMEOUT) it removes every container,
 * network and volume matching any filter received.
 */
import net from 'node:net';

export const REAPER_IMAGE = /(^|\/)ryuk(:|@|$)/;

export function isReaperImage(image: string): boolean {
  return REAPER_IMAGE.test(image);
}

/** One line of the protocol → the labels that must all match. */
export function parseReaperLine(line: string): string[] {
  return new URLSearchParams(line.trim()).getAll('label').filter(Boolean);
}

/** `10s`, `1m`, `500ms` or plain seconds → milliseconds. */
export function parseGoDuration(text: string | undefined, fallbackMs: number): number {
  if (!text) return fallbackMs;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) return fallbackMs;
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : m[2] === 'h' ? n * 3_600_000 : n * 1000;
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
