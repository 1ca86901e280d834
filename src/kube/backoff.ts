/**
 * berth's one back-off: a call tried again after failures worth another try, waiting longer after each
 * (doubling up to a cap, or longer when the failure itself asks for a wait), until a number of tries or a
 * time budget is spent. What is worth another try is the caller's policy: the Kubernetes API's in
 * retry.ts, a published port's in dockerapi/networks/port-proxy.ts, a task output's in task/outputs.ts. The clock
 * is injectable, so a test sees every wait without sleeping through it.
 */

export interface Backoff {
  /** The wait after the first failure; it doubles after each further one, up to `maxMs`. */
  initialMs: number;
  maxMs: number;
  /** No wait may end later than this after the budget started (see `budgetFrom`); Infinity: the tries alone bound it. */
  budgetMs: number;
  /** Tries in all, the first included (unbounded when absent: the budget bounds them). */
  tries?: number;
  /**
   * Tries in all when the last failure named its own wait (a server's Retry-After): a server that says when to
   * come back is no reason to give up sooner than it asks; the budget still bounds them. Default: `tries`.
   */
  triesWhenAsked?: number;
}

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** The wait before retry number `retry` (0-based): doubling from initialMs, capped at maxMs. */
export function backoffDelay(retry: number, b: Pick<Backoff, 'initialMs' | 'maxMs'>): number {
  return Math.min(b.maxMs, b.initialMs * 2 ** Math.min(retry, 30));
}

/** The waits between tries that fit in the budget and the tries (the tries themselves taking no time). */
export function retrySchedule(b: Backoff): number[] {
  const waits: number[] = [];
  let total = 0;
  for (let i = 0; i + 1 < (b.tries ?? Infinity); i++) {
    const d = backoffDelay(i, b);
    if (total + d > b.budgetMs) break;
    waits.push(d);
    total += d;
  }
  return waits;
}

export interface RetryPolicy {
  backoff: Backoff;
  /** Whether this failure is worth another try; any other is thrown at once, as it is. */
  retryable(err: unknown): boolean;
  /** A wait the failure asks for itself (a server's Retry-After): taken when longer than the back-off's, if it fits the budget. */
  waitAsked?(err: unknown): number | undefined;
  /**
   * When the budget starts: at the first try (default), or at the first failure, for a call whose first
   * try may rightly take long (a port-forward waiting for its pod is not yet spent retrying).
   */
  budgetFrom?: 'first try' | 'first failure';
  /** Stops the retries (before and after each wait): the last failure is thrown as it is. */
  signal?: AbortSignal;
  cancelled?(): boolean;
  clock?: Clock;
}

/** The budget that ended the retries, and the wait the next try would have needed. */
export interface SpentBudget {
  budgetMs: number;
  nextWaitMs: number;
}

/**
 * Thrown when the tries or the budget ran out while the failures were still worth another try: the last
 * failure (`last`, also the cause), and a note saying how long it was retried, for the sentence that
 * reports it.
 */
export class RetriesSpent extends Error {
  constructor(
    readonly last: unknown,
    readonly tries: number,
    readonly elapsedMs: number,
    /** Set when the budget (rather than the number of tries) ended the retries. */
    readonly budget?: SpentBudget,
  ) {
    super(`${last instanceof Error ? last.message : String(last)} (${retriesNote(tries, elapsedMs, budget)})`, { cause: last });
    this.name = 'RetriesSpent';
  }

  /** `tried 4 times over 3.5 s; the next try, 8 s later, would pass its 10 s retry budget` */
  get note(): string {
    return retriesNote(this.tries, this.elapsedMs, this.budget);
  }
}

function retriesNote(tries: number, elapsedMs: number, budget: SpentBudget | undefined): string {
  const tried = tries === 1 ? 'tried once' : `tried ${tries} times over ${seconds(elapsedMs)} s`;
  return budget ? `${tried}; the next try, ${seconds(budget.nextWaitMs)} s later, would pass its ${seconds(budget.budgetMs)} s retry budget` : tried;
}

/** `0.2`, `3.5`, `15`: tenths, without a trailing .0 */
function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

/** Calls `call` until it succeeds, fails in a way not worth another try, is stopped, or the tries or the budget run out. */
export async function retrying<T>(call: (attempt: number) => Promise<T>, policy: RetryPolicy): Promise<T> {
  const clock = policy.clock ?? systemClock;
  const { backoff } = policy;
  const firstTry = clock.now();
  let budgetStart = policy.budgetFrom === 'first failure' ? undefined : firstTry;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(attempt);
    } catch (err) {
      budgetStart ??= clock.now();
      if (!policy.retryable(err) || stopped(policy)) throw err;
      const asked = policy.waitAsked?.(err);
      const tries = asked === undefined ? backoff.tries : (backoff.triesWhenAsked ?? backoff.tries);
      if (attempt >= (tries ?? Infinity)) throw new RetriesSpent(err, attempt, clock.now() - firstTry);
      const wait = Math.max(backoffDelay(attempt - 1, backoff), asked ?? 0);
      if (clock.now() + wait - budgetStart > backoff.budgetMs)
        throw new RetriesSpent(err, attempt, clock.now() - firstTry, { budgetMs: backoff.budgetMs, nextWaitMs: wait });
      await clock.sleep(wait, policy.signal);
      if (stopped(policy)) throw err;
    }
  }
}

function stopped(policy: RetryPolicy): boolean {
  return policy.signal?.aborted === true || policy.cancelled?.() === true;
}
