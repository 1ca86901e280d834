/**
 * A pod log copied to a Docker client exactly, or not at all without saying so. The log endpoint has no
 * offsets: a stream that drops (or a follow that ends while the container still runs) is opened again
 * from the same start and the bytes already delivered are skipped, after checking that they are the
 * same bytes (SHA-256 of the delivered prefix). When that cannot be done — the log changed under us,
 * resumes run out — the copy fails with LogIncomplete, so the caller can turn a short output into an
 * error instead of a silent success.
 */
import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { backoffDelay, systemClock } from '../../kube/backoff.js';

export class LogIncomplete extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogIncomplete';
  }
}

export interface LogSource {
  /** Opens the log from its (fixed) start, followed or not; transient API failures are already retried inside. */
  open(follow: boolean, signal: AbortSignal): Promise<Readable>;
  /** Whether the container has ended (or its pod is gone): a follow of its log that ended is then whole. */
  ended(): Promise<boolean>;
  /** Resolves at the next change of the container's state, or after `ms`. */
  changed(ms: number): Promise<void>;
}

export interface CopyOptions {
  follow: boolean;
  /** Aborted when the client went away: the copy stops quietly. */
  signal: AbortSignal;
  /** Aborted when the follow is to end before the container does (a line past `until`): the log is then read
   *  once more, without follow, to its end. */
  stopFollowing?: AbortSignal;
  /** Re-opens in a row allowed without new bytes in between (default 6). */
  maxResumes?: number;
  /** How long a follow that ended waits for the pod to say its container ended (default 2 s). */
  settleMs?: number;
  /** What the log is, for messages: `the stdout log of container x`. */
  what: string;
}

/** The wait before a dropped stream is opened again: 100 ms, doubling after each drop in a row, up to 1 s. */
const REOPEN_BACKOFF = { initialMs: 100, maxMs: 1000 };

/** The bytes delivered so far: their count and a running hash, to check a read from the start against. */
interface Delivered {
  hash: Hash;
  count: number;
}

/** Copies the log into `out` (not ended); returns the bytes delivered. */
export async function copyLog(src: LogSource, out: Writable, o: CopyOptions): Promise<number> {
  const delivered: Delivered = { hash: createHash('sha256'), count: 0 };
  let resumes = 0;
  const max = o.maxResumes ?? 6;
  for (;;) {
    if (o.signal.aborted) return delivered.count;
    const following = o.follow && !o.stopFollowing?.aborted;
    let res: Readable;
    try {
      // a follow's open waits for the log's first byte on a kubelet: asked to stop following, it is abandoned
      res = await src.open(following, following && o.stopFollowing ? AbortSignal.any([o.signal, o.stopFollowing]) : o.signal);
    } catch (err) {
      if (o.signal.aborted) return delivered.count;
      if (following && o.stopFollowing?.aborted) continue;
      if (delivered.count === 0 && resumes === 0) throw err;
      throw new LogIncomplete(`${o.what} was cut after ${delivered.count} bytes and could not be opened again: ${(err as Error).message}`);
    }
    const before = delivered.count;
    let dropped = await readOnce(res, out, delivered, following, o);
    if (o.signal.aborted) return delivered.count;
    // Asked to stop following: whatever this read brought, one more without follow reads the log to its end.
    if (following && o.stopFollowing?.aborted) continue;
    const clean = !dropped;
    if (clean) {
      if (!following) return delivered.count;
      // A follow ends a moment before the pod says its container ended: give the status time to catch up.
      if (await endedWithin(src, o.settleMs ?? 2000, o.signal)) return delivered.count;
      if (o.signal.aborted) return delivered.count;
      dropped = 'the follow stream ended while the container runs';
    }
    // The budget is for cuts in a row: a stream that brought new bytes before it dropped made progress.
    if (delivered.count > before) resumes = 0;
    if (++resumes > max) throw new LogIncomplete(`${o.what} was cut after ${delivered.count} bytes ${resumes} times in a row (last: ${dropped})`);
    // A dropped stream is opened again after a backoff; one that ended has just waited for the pod's status.
    if (!clean) await systemClock.sleep(backoffDelay(resumes - 1, REOPEN_BACKOFF), o.signal);
  }
}

/**
 * One read of the log from its start into `out`: the bytes already delivered are checked and skipped, the rest
 * delivered. Resolves with why the read dropped, or undefined when it ended cleanly (or the client went away);
 * rejects with LogIncomplete when the log read again does not start with the delivered bytes.
 */
async function readOnce(res: Readable, out: Writable, delivered: Delivered, following: boolean, o: CopyOptions): Promise<string | undefined> {
  let skip = delivered.count;
  const check = createHash('sha256');
  const stop = (): void => void res.destroy();
  o.signal.addEventListener('abort', stop, { once: true });
  if (following) o.stopFollowing?.addEventListener('abort', stop, { once: true });
  if (o.signal.aborted || (following && o.stopFollowing?.aborted)) stop();
  try {
    for await (const chunk of res) {
      let buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      if (skip > 0) {
        const head = buf.subarray(0, skip);
        check.update(head);
        skip -= head.length;
        buf = buf.subarray(head.length);
        if (skip === 0 && !check.digest().equals(delivered.hash.copy().digest())) {
          throw new LogIncomplete(`${o.what} was cut after ${delivered.count} bytes, and the log read again does not start with them (rotated or replaced)`);
        }
        if (buf.length === 0) continue;
      }
      delivered.hash.update(buf);
      delivered.count += buf.length;
      if (!out.write(buf)) await drained(out, o.signal);
    }
  } catch (err) {
    if (err instanceof LogIncomplete) throw err;
    return (err as Error).message || String(err);
  } finally {
    o.signal.removeEventListener('abort', stop);
    o.stopFollowing?.removeEventListener('abort', stop);
    res.destroy();
  }
  return skip > 0 ? `the log read again was shorter (${delivered.count - skip} of ${delivered.count} bytes)` : undefined;
}

/** How often the container's end is asked for while no change of its state comes. */
const SETTLE_POLL_MS = 250;

/** Whether the container has ended, asked again at each change of its state (and every SETTLE_POLL_MS) for up to `ms`. */
async function endedWithin(src: LogSource, ms: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await src.ended()) return true;
    const left = deadline - Date.now();
    if (left <= 0 || signal.aborted) return false;
    await nextChange(src, Math.min(left, SETTLE_POLL_MS), signal);
  }
}

/** The source's next change, or `ms`, or the client going away, whichever comes first. */
function nextChange(src: LogSource, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    src.changed(ms).then(done, done);
  });
}

/** Resolves when `out` can take more, or the client went away. */
async function drained(out: Writable, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  signal.addEventListener('abort', stop, { once: true });
  try {
    await once(out, 'drain', { signal: ac.signal });
  } catch {
    /* aborted: the client is gone */
  } finally {
    signal.removeEventListener('abort', stop);
  }
}
