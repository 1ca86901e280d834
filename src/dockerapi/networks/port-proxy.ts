/**
 * Published ports: every TCP connection accepted on this machine gets its own way into the pod, either
 * a port-forward through the API server or, when berth runs inside the cluster, a plain TCP connection
 * to the pod IP. Opening that way is retried with backoff (API servers and kubelets refuse upgrades
 * while busy, pods restart); the client's bytes stay unread in its socket until the way is open, so a
 * failed attempt loses nothing. Once open, a drop ends that one connection: a TCP byte stream cannot
 * be resumed, the next connection opens afresh.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { retrying, RetriesSpent, type Backoff, type Clock } from '../../kube/backoff.js';
import { KubeError } from '../../kube/errors.js';

export type PortMode = 'forward' | 'direct';
export const PORT_MODES = ['forward', 'direct', 'auto'] as const;

/** `auto`: direct inside the cluster (pod IPs are routable there), port-forward from outside. */
export function resolvePortMode(flag: string, kubeSource: string): PortMode {
  if (flag === 'forward' || flag === 'direct') return flag;
  if (flag === 'auto') return kubeSource === 'in-cluster' ? 'direct' : 'forward';
  throw new Error(`--port-mode ${flag}: give forward, direct or auto`);
}

/** 100 ms doubling to 2 s; no retry starts later than 10 s after the first failure. */
export const DEFAULT_BACKOFF: Backoff = { initialMs: 100, maxMs: 2000, budgetMs: 10_000 };

/** The container behind the port is not running any more: retrying cannot help. */
export class PortTargetGone extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PortTargetGone';
  }
}

/**
 * Worth another attempt: the API server busy or unreachable (5xx, 429, no answer), the pod not found
 * (a restart replaces it). Not: refusals that stay (400 completed pod, 401, 403), a gone container,
 * and in direct mode a pod that answers that nothing listens (ECONNREFUSED).
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof PortTargetGone) return false;
  if (err instanceof KubeError) return err.code === undefined || err.code === 404 || err.code === 429 || err.code >= 500;
  return (err as NodeJS.ErrnoException | undefined)?.code !== 'ECONNREFUSED';
}

export interface OpenRetryOptions {
  backoff?: Backoff;
  /** Stop early (the client went away). */
  cancelled?: () => boolean;
  clock?: Clock;
}

/** Calls open until it succeeds, a failure is not retryable, or the budget is spent (RetriesSpent). */
export function openWithRetry<T>(open: () => Promise<T>, opts: OpenRetryOptions = {}): Promise<T> {
  // Counted from the first failure: waiting for a pod to start is not spent retrying.
  return retrying(open, {
    backoff: opts.backoff ?? DEFAULT_BACKOFF,
    retryable: isRetryable,
    budgetFrom: 'first failure',
    cancelled: opts.cancelled,
    clock: opts.clock,
  });
}

/** A TCP connection to the pod itself (the pod network must be routable from here). */
export function connectDirect(ip: string | undefined, port: number, timeoutMs = 5000): Promise<net.Socket> {
  if (!ip) return Promise.reject(new KubeError('the pod has no IP yet'));
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: ip, port, allowHalfOpen: true });
    s.setTimeout(timeoutMs, () => s.destroy(Object.assign(new Error(`connect to ${ip}:${port} timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    s.once('error', reject);
    s.once('connect', () => {
      s.setTimeout(0);
      s.off('error', reject);
      resolve(s);
    });
  });
}

/**
 * Joins the client to the pod's side both ways. The pod's end ends the client; a failure of the pod's
 * side resets the client (its data may be incomplete, so no orderly FIN); the client's close ends the pod's side.
 * `halfCloseIdleMs`: for a pod side that cannot be half-closed (port-forward v4), the client's end closes
 * it once it has been quiet that long, so the answer still arrives but a client that connected and left
 * (a port probe) does not hold a forward open for as long as the server in the pod keeps idle connections.
 */
export function splice(client: net.Socket, upstream: Duplex, onFailure: (err: Error) => void, opts: { halfCloseIdleMs?: number } = {}): void {
  let closedByUs = false;
  const reset = (): void => {
    if (!client.destroyed) client.resetAndDestroy();
  };
  upstream.on('error', (err) => {
    onFailure(err);
    reset();
  });
  upstream.on('close', () => {
    if (closedByUs) client.end();
    else if (!upstream.readableEnded) reset();
  });
  client.on('error', () => upstream.destroy());
  client.on('close', () => upstream.destroy());
  if (opts.halfCloseIdleMs !== undefined) {
    const idleMs = opts.halfCloseIdleMs;
    client.once('end', () => {
      const timer = setTimeout(() => {
        closedByUs = true;
        upstream.destroy();
      }, idleMs);
      upstream.on('data', () => timer.refresh());
      upstream.once('close', () => clearTimeout(timer));
    });
  }
  upstream.pipe(client);
  client.pipe(upstream);
}

export interface PortTarget {
  podName: string;
  podIP?: string;
}

export interface PortProxyOptions {
  mode: PortMode;
  forward: (pod: string, port: number) => Promise<Duplex>;
  log: (line: string) => void;
  backoff?: Backoff;
  /** The clock the retries wait on (a test's). */
  clock?: Clock;
  /** Port-forward only: how long the pod side may stay quiet after the client's half-close (default 2 s). */
  halfCloseIdleMs?: number;
}

/** One per engine: opens each accepted connection's way into its pod and logs each distinct failure once. */
export class PortProxy {
  private readonly logged = new Set<string>();

  constructor(private readonly opts: PortProxyOptions) {}

  get mode(): PortMode {
    return this.opts.mode;
  }

  /** `target` is asked afresh on every attempt: after a restart it names the new pod. */
  async handle(client: net.Socket, port: number, what: string, target: () => Promise<PortTarget>): Promise<void> {
    client.on('error', () => undefined);
    // Nothing reads the client until the way is open: a failed attempt consumes none of its bytes.
    client.pause();
    let upstream: Duplex;
    try {
      upstream = await openWithRetry(
        async () => {
          const t = await target();
          return this.opts.mode === 'direct' ? connectDirect(t.podIP, port) : this.opts.forward(t.podName, port);
        },
        { backoff: this.opts.backoff, cancelled: () => client.destroyed, clock: this.opts.clock },
      );
    } catch (err) {
      if (!client.destroyed) client.resetAndDestroy();
      if (!(err instanceof PortTargetGone))
        this.logOnce(what, `cannot open ${this.opts.mode === 'direct' ? 'a connection' : 'a port-forward'} to port ${port}${triedFor(err)}: ${messageOf(err)}`);
      return;
    }
    if (client.destroyed) return void upstream.destroy();
    // Direct mode passes the half-close on as TCP does; port-forward v4 cannot.
    const halfCloseIdleMs = this.opts.mode === 'forward' ? (this.opts.halfCloseIdleMs ?? 2000) : undefined;
    splice(client, upstream, (err) => this.logOnce(what, `a connection to port ${port} broke: ${err.message}`), { halfCloseIdleMs });
  }

  private logOnce(what: string, message: string): void {
    const key = `${what}\n${message}`;
    if (this.logged.has(key)) return;
    if (this.logged.size > 1000) this.logged.clear();
    this.logged.add(key);
    this.opts.log(`${what}: ${message} (the connection was closed)`);
  }
}

/** How long the opening was retried, said without the exact time and tries, so that each failure is still logged once. */
function triedFor(err: unknown): string {
  return err instanceof RetriesSpent && err.budget ? ` (retried for ${err.budget.budgetMs / 1000} s)` : '';
}

function messageOf(err: unknown): string {
  const last = err instanceof RetriesSpent ? err.last : err;
  return last instanceof Error ? last.message : String(last);
}
