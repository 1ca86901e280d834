// berth's one back-off (src/kube/backoff.ts) on a manual clock: which failures are tried again, the waits between
// tries, the tries and the budget that end them (and the note that says so), a wait the failure asks for, and stopping.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffDelay, retrying, retrySchedule, RetriesSpent, systemClock, type Backoff, type RetryPolicy } from '../../../src/kube/backoff.js';
import { manualClock, type ManualClock } from '../../util/manual-clock.js';

class Blip extends Error {}
class Refusal extends Error {}

const BACKOFF: Backoff = { initialMs: 100, maxMs: 1000, budgetMs: 10_000 };

/** A call that fails with `failures` in turn, then answers `ok`; `calls` counts its tries. */
function scripted(failures: unknown[], clock?: ManualClock, takesMs = 0): { call: () => Promise<string>; calls: () => number } {
  let n = 0;
  return {
    call: async () => {
      clock?.advance(takesMs);
      const failure = failures[n++];
      if (n > failures.length) return 'ok';
      throw failure;
    },
    calls: () => n,
  };
}

function policy(clock: ManualClock, more: Partial<RetryPolicy> = {}): RetryPolicy {
  return { backoff: BACKOFF, retryable: (err) => err instanceof Blip, clock, ...more };
}

test('the waits double from the first up to the cap; the schedule stops where the budget or the tries would be passed', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map((i) => backoffDelay(i, BACKOFF)),
    [100, 200, 400, 800, 1000, 1000],
  );
  assert.equal(backoffDelay(10_000, BACKOFF), 1000);
  assert.deepEqual(retrySchedule({ ...BACKOFF, budgetMs: 1500 }), [100, 200, 400, 800]);
  assert.deepEqual(retrySchedule({ ...BACKOFF, tries: 3 }), [100, 200]);
});

test('failures worth another try are tried again after growing waits, until the call answers', async () => {
  const clock = manualClock();
  const s = scripted([new Blip('a'), new Blip('b'), new Blip('c')]);
  assert.equal(await retrying(s.call, policy(clock)), 'ok');
  assert.equal(s.calls(), 4);
  assert.deepEqual(clock.waits, [100, 200, 400]);
});

test('a failure not worth another try is thrown at once, as it is', async () => {
  const clock = manualClock();
  const refusal = new Refusal('no');
  const s = scripted([new Blip('a'), refusal]);
  await assert.rejects(retrying(s.call, policy(clock)), (err) => err === refusal);
  assert.equal(s.calls(), 2);
  assert.deepEqual(clock.waits, [100]);
});

test('the tries run out: RetriesSpent carries the last failure and says how often and how long it was tried', async () => {
  const clock = manualClock();
  const last = new Blip('still busy');
  const s = scripted([new Blip('a'), new Blip('b'), last, new Blip('never reached')]);
  const err = await retrying(s.call, policy(clock, { backoff: { ...BACKOFF, tries: 3 } })).catch((e: unknown) => e);
  assert.ok(err instanceof RetriesSpent);
  assert.equal(err.last, last);
  assert.equal(err.cause, last);
  assert.equal(err.tries, 3);
  assert.equal(err.budget, undefined);
  assert.equal(err.message, 'still busy (tried 3 times over 0.3 s)');
  assert.equal(s.calls(), 3);
});

test('the budget ends the retries before a wait that would pass it, and the note names the budget', async () => {
  const clock = manualClock();
  const s = scripted(Array.from({ length: 20 }, (_, i) => new Blip(`busy ${i}`)));
  const err = await retrying(s.call, policy(clock, { backoff: { ...BACKOFF, budgetMs: 1500 } })).catch((e: unknown) => e);
  assert.ok(err instanceof RetriesSpent);
  // 100 + 200 + 400 + 800 = 1500 fits; the next 1000 would not
  assert.deepEqual(clock.waits, [100, 200, 400, 800]);
  assert.equal(s.calls(), 5);
  assert.deepEqual(err.budget, { budgetMs: 1500, nextWaitMs: 1000 });
  assert.equal(err.note, 'tried 5 times over 1.5 s; the next try, 1 s later, would pass its 1.5 s retry budget');
  assert.match(err.message, /^busy 4 \(tried 5 times/);
});

test('the time the tries themselves take is spent from the budget', async () => {
  const clock = manualClock();
  const s = scripted(
    Array.from({ length: 20 }, () => new Blip('slow')),
    clock,
    600,
  );
  const err = await retrying(s.call, policy(clock, { backoff: { ...BACKOFF, budgetMs: 1500 } })).catch((e: unknown) => e);
  assert.ok(err instanceof RetriesSpent);
  // 600 + 100 + 600 + 200: the third try starts at 1500 and fails at 2100; its wait of 400 would pass the budget
  assert.deepEqual(clock.waits, [100, 200]);
  assert.equal(err.tries, 3);
});

test('a budget counted from the first failure does not spend the time a slow first try took', async () => {
  /** A call whose first try takes 5 s, refused three times, then open. */
  const slowStart = (clock: ManualClock): (() => Promise<string>) => {
    let n = 0;
    return async () => {
      if (++n === 1) clock.advance(5000);
      if (n < 4) throw new Blip('refused');
      return 'open';
    };
  };
  const budget = { ...BACKOFF, budgetMs: 1000 };
  const clock = manualClock();
  assert.equal(await retrying(slowStart(clock), policy(clock, { backoff: budget, budgetFrom: 'first failure' })), 'open');
  assert.deepEqual(clock.waits, [100, 200, 400]);

  const other = manualClock();
  const fromFirstTry = await retrying(slowStart(other), policy(other, { backoff: budget })).catch((e: unknown) => e);
  assert.ok(fromFirstTry instanceof RetriesSpent, 'counted from the first try, the slow try spent the whole budget');
  assert.equal(fromFirstTry.tries, 1);
});

test('a wait the failure asks for is taken when longer than the back-off, and ends the retries when it would pass the budget', async () => {
  const clock = manualClock();
  const asks = (ms: number): Blip => Object.assign(new Blip('throttled'), { askedMs: ms });
  const waitAsked = (err: unknown): number | undefined => (err as { askedMs?: number }).askedMs;
  const s = scripted([asks(3000), asks(10), new Blip('plain')]);
  assert.equal(await retrying(s.call, policy(clock, { waitAsked })), 'ok');
  assert.deepEqual(clock.waits, [3000, 200, 400]);

  const late = manualClock();
  const tooLong = scripted([asks(20_000)]);
  const err = await retrying(tooLong.call, policy(late, { waitAsked })).catch((e: unknown) => e);
  assert.ok(err instanceof RetriesSpent);
  assert.deepEqual(late.waits, [], 'a wait past the budget is not started');
  assert.equal(err.note, 'tried once; the next try, 20 s later, would pass its 10 s retry budget');
});

test('stopped (signal or cancelled) before or during a wait: the last failure is thrown as it is, with no further try', async () => {
  const ac = new AbortController();
  const first = new Blip('first');
  const s = scripted([first, new Blip('second')]);
  const clock = manualClock();
  const aborting = { ...clock, sleep: async (ms: number) => (clock.waits.push(ms), ac.abort()) };
  await assert.rejects(retrying(s.call, policy(clock, { clock: aborting, signal: ac.signal })), (err) => err === first);
  assert.equal(s.calls(), 1);

  let gone = false;
  const second = new Blip('second');
  const t = scripted([new Blip('a'), second, new Blip('c')]);
  const call = async (): Promise<string> => {
    const out = t.call();
    if (t.calls() === 2) gone = true;
    return out;
  };
  await assert.rejects(retrying(call, policy(manualClock(), { cancelled: () => gone })), (err) => err === second);
  assert.equal(t.calls(), 2);
});

test('the system clock wakes a sleeper at once when its signal aborts', async () => {
  const ac = new AbortController();
  const slept = systemClock.sleep(60_000, ac.signal);
  ac.abort();
  await slept;
  const started = Date.now();
  await systemClock.sleep(1);
  assert.ok(Date.now() - started < 1000);
});
