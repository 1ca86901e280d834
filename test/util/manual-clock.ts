/**
 * A clock for the back-off (src/kube/backoff.ts) whose time moves only when something sleeps on it: a
 * wait ends at once, its length is recorded, and `now` is the sum of the waits so far. Tests see every
 * wait the retries took without sleeping through any of them.
 */
import type { Clock } from '../../src/kube/backoff.js';

export interface ManualClock extends Clock {
  /** Every wait asked for, in order. */
  readonly waits: number[];
  /** Moves time on without a wait (a call that takes this long). */
  advance(ms: number): void;
}

export function manualClock(start = 1_000_000): ManualClock {
  let now = start;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  };
}
