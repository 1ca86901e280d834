/**
 * Transient API failures retried with bounded backoff. An overloaded API server answers 500/503, a
 * throttled client 429 (with Retry-After), a restarting one drops connections: none of these says the
 * request was wrong, and giving up on the first one turns a blip into a failed run. Only idempotent
 * calls and creates of a fixed name go through here: a create that landed before its answer was lost
 * comes back as 409 on the next try, which `onConflict` resolves by reading the object back.
 */
import { causeChain, statusOf } from './errors.js';

export interface RetryOptions {
  /** Tries in all, the first included (default 6). */
  attempts?: number;
  /** First pause; doubles up to `maxDelayMs` (defaults 100 and 2000). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** No new try starts after this much time since the first (default 15 s). */
  budgetMs?: number;
  signal?: AbortSignal;
  /** Told each failure that will be retried (BERTH_TRACE). */
  onRetry?(err: unknown, attempt: number, delayMs: number): void;
  /**
   * A 409 on a try after the first: the earlier try may have created the object. Returns the object
   * when it is ours; throws (or returns undefined) when it is not, and the 409 stands.
   */
  onConflict?(): Promise<unknown>;
}

const TRANSIENT_CODES = new Set([429, 500, 502, 503, 504]);
const TRANSIENT_NET = /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EAI_AGAIN|ECONNABORTED|UND_ERR_SOCKET|UND_ERR_CLOSED)$/;

/** True for failures that say nothing about the request: overload, throttling, a dropped connection. */
export function isTransient(err: unknown): boolean {
  const { code } = statusOf(err);
  if (code !== undefined && TRANSIENT_CODES.has(code)) return true;
  return networkCode(err) !== undefined || /socket hang up|other side closed/i.test(messageChain(err));
}

/** Seconds the server asked for in Retry-After (429/503), when it said. */
export function retryAfterMs(err: unknown): number | undefined {
  for (const cur of causeChain(err)) {
    const headers = (cur as { headers?: Record<string, string | string[] | undefined> }).headers;
    const raw = headers?.['retry-after'] ?? headers?.['Retry-After'];
    const value = Array.isArray(raw) ? raw[0] : raw;
    const seconds = value === undefined ? NaN : Number(value);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  }
  const details = statusOf(err).status?.details as { retryAfterSeconds?: number } | undefined;
  return typeof details?.retryAfterSeconds === 'number' ? details.retryAfterSeconds * 1000 : undefined;
}

export async function withRetry<T>(call: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const attempts = opts.attempts ?? 6;
  const base = opts.baseDelayMs ?? 100;
  const max = opts.maxDelayMs ?? 2000;
  const started = Date.now();
  const budget = opts.budgetMs ?? 15_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt > 1 && opts.onConflict && statusOf(err).code === 409) {
        const ours = await opts.onConflict().catch(() => undefined);
        if (ours !== undefined) return ours as T;
      }
      if (!isTransient(err) || attempt >= attempts || opts.signal?.aborted) throw err;
      const backoff = Math.min(max, base * 2 ** (attempt - 1));
      const delay = Math.min(Math.max(backoff, retryAfterMs(err) ?? 0), 10_000);
      if (Date.now() - started + delay > budget) throw err;
      opts.onRetry?.(err, attempt, delay);
      await pause(delay, opts.signal);
    }
  }
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

function networkCode(err: unknown): string | undefined {
  for (const cur of causeChain(err)) {
    if (typeof cur.code === 'string' && TRANSIENT_NET.test(cur.code)) return cur.code;
  }
  return undefined;
}

function messageChain(err: unknown): string {
  return causeChain(err)
    .map((cur) => cur.message)
    .filter((m): m is string => typeof m === 'string')
    .join(' | ');
}
