/**
 * The Kubernetes API's retry policy, over backoff.ts. An overloaded API server answers 500/503, a
 * throttled client 429 (with Retry-After), a restarting one drops connections: none of these says the
 * request was wrong, and giving up on the first one turns a blip into a failed run. Only idempotent
 * calls and creates of a fixed name go through here: a create that landed before its answer was lost
 * comes back as 409 on the next try, which `onConflict` resolves by reading the object back.
 */
import { retrying, RetriesSpent, type Backoff, type Clock } from './backoff.js';
import { causeChain, statusOf, toKubeError, type KubeAction } from './errors.js';

/** 100 ms doubling to 2 s, 6 tries, none starting more than 15 s after the first. */
export const KUBE_BACKOFF: Backoff = { initialMs: 100, maxMs: 2000, budgetMs: 15_000, tries: 6 };

export interface KubeRetryOptions {
  /**
   * What the call is: its last failure, once the retries are spent, becomes this sentence with how long it
   * was retried. Without it that failure comes back as a RetriesSpent (statusOf and toKubeError see through it).
   */
  action?: KubeAction;
  /** Tries in all (default KUBE_BACKOFF's). */
  tries?: number;
  /** Narrows which failures are tried again (always transient ones): a call may know more of what a failure means. */
  retryable?(err: unknown): boolean;
  signal?: AbortSignal;
  clock?: Clock;
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

/** An idempotent call, tried again on transient failures, after the wait the server asked for when it asked. */
export async function withRetry<T>(call: () => Promise<T>, opts: KubeRetryOptions = {}): Promise<T> {
  const tried = async (attempt: number): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (attempt > 1 && opts.onConflict && statusOf(err).code === 409) {
        const ours = await opts.onConflict().catch(() => undefined);
        if (ours !== undefined) return ours as T;
      }
      throw err;
    }
  };
  try {
    return await retrying(tried, {
      backoff: { ...KUBE_BACKOFF, tries: opts.tries ?? KUBE_BACKOFF.tries },
      retryable: (err) => isTransient(err) && (opts.retryable?.(err) ?? true),
      // the wait the server asked for, all of it (a try sooner is what it refused), or none when it would pass the budget
      waitAsked: retryAfterMs,
      signal: opts.signal,
      clock: opts.clock,
    });
  } catch (err) {
    throw err instanceof RetriesSpent && opts.action ? toKubeError(err, opts.action) : err;
  }
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
