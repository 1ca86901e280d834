/**
 * The Kubernetes API's retry policy, over backoff.ts. An overloaded API server answers 500/503, a
 * throttled client 429 (with Retry-After), a restarting one drops connections: none of these says the
 * request was wrong, and giving up on the first one turns a blip into a failed run. Only idempotent calls
 * go through withRetry; a create, which is not, goes through createWithRetry: a create that landed before
 * its answer was lost comes back as 409 on the next try, and is read back instead of failing.
 */
import { retrying, RetriesSpent, type Backoff, type Clock } from './backoff.js';
import { causeChain, madeNothing, statusOf, toKubeError, type KubeAction } from './errors.js';

/**
 * 100 ms doubling to 2 s, 6 tries, none starting more than 15 s after the first. A failure that says when to
 * come back (API Priority and Fairness' 429 with Retry-After) gets 10 tries, as client-go gives it: at a third of
 * requests rejected, 6 tries lost about one call in 1400, which a render of dozens of calls met.
 */
export const KUBE_BACKOFF: Backoff = { initialMs: 100, maxMs: 2000, budgetMs: 15_000, tries: 6, triesWhenAsked: 10 };

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
  try {
    return await retrying(call, {
      backoff: opts.tries === undefined ? KUBE_BACKOFF : { ...KUBE_BACKOFF, tries: opts.tries, triesWhenAsked: opts.tries },
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

/**
 * A create of a fixed name. A try whose answer was lost (a dropped connection, a timeout, a 5xx) may have
 * made the object, so a later try can meet our own object: that 409 is resolved by `readBack`, which
 * returns the object when it is ours. A 409 while no earlier try can have landed is someone else's object
 * and stands. A failure says whether any try may have made the object (KubeError.createdNothing).
 */
export async function createWithRetry<T>(
  create: () => Promise<T>,
  readBack: () => Promise<T | undefined>,
  opts: KubeRetryOptions & { action: KubeAction },
): Promise<T> {
  let mayHaveLanded = false;
  const tried = async (): Promise<T> => {
    try {
      return await create();
    } catch (err) {
      if (mayHaveLanded && statusOf(err).code === 409) {
        const ours = await readBack().catch((readFailure: unknown) => {
          // a blip while reading back is tried again (the create meets the same 409); a refusal leaves the 409 standing
          if (isTransient(readFailure)) throw readFailure;
          return undefined;
        });
        if (ours !== undefined) return ours;
      }
      if (!madeNothing(err)) mayHaveLanded = true;
      throw err;
    }
  };
  try {
    return await withRetry(tried, opts);
  } catch (err) {
    const failed = toKubeError(err, opts.action);
    failed.createdNothing = !mayHaveLanded;
    throw failed;
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
