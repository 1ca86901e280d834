/**
 * The one bounded poll of berth's tests, for what no event announces (a port that starts answering,
 * a health probe that settles, a container podman removes a moment later). `check` is asked until it
 * returns a value other than undefined or false; its last answer or failure is named when time runs out.
 */
export interface EventuallyOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between tries (default 100 ms). */
  intervalMs?: number;
}

export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  opts: EventuallyOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`${what}: not within ${timeoutMs} ms (last: ${detail})`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}
