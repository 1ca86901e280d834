/**
 * A pod log copied to a Docker client exactly, or not at all without saying so. The log endpoint has no
 * offsets: a stream that drops (or a follow that ends while the container still runs) is opened again
 * from the same start and the bytes already delivered are skipped, after checking that they are the
 * same bytes (SHA-256 of the delivered prefix). When that cannot be done — the log changed under us,
 * the window moves (`tail`), resumes run out — the copy fails with LogIncomplete, so the caller can turn
 * a short output into an error instead of a silent success.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';

export class LogIncomplete extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogIncomplete';
  }
}

export interface LogSource {
  /** Opens the log from its (fixed) start; transient API failures are already retried inside. */
  open(): Promise<Readable>;
  /** Asked when a follow stream ended cleanly: true when the container has ended, so the log is whole. */
  ended(): Promise<boolean>;
}

export interface CopyOptions {
  follow: boolean;
  /** false when a re-opened log would not start where the first did (a tail window). */
  resumable: boolean;
  /** Aborted when the client went away: the copy stops quietly. */
  signal: AbortSignal;
  /** Re-opens in a row allowed without new bytes in between (default 6). */
  maxResumes?: number;
  /** What the log is, for messages: `the stdout log of container x`. */
  what: string;
}

/** Copies the log into `out` (not ended); returns the bytes delivered. */
export async function copyLog(src: LogSource, out: Writable, o: CopyOptions): Promise<number> {
  const delivered = createHash('sha256');
  let count = 0;
  let resumes = 0;
  const max = o.maxResumes ?? 6;
  for (;;) {
    if (o.signal.aborted) return count;
    let res: Readable;
    try {
      res = await src.open();
    } catch (err) {
      if (count === 0 && resumes === 0) throw err;
      throw new LogIncomplete(`${o.what} was cut after ${count} bytes and could not be opened again: ${(err as Error).message}`);
    }
    const before = count;
    let skip = count;
    const check = createHash('sha256');
    let dropped: string | undefined;
    const onAbort = (): void => void res.destroy();
    o.signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const chunk of res) {
        let buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
        if (skip > 0) {
          const head = buf.subarray(0, skip);
          check.update(head);
          skip -= head.length;
          buf = buf.subarray(head.length);
          if (skip === 0 && !check.digest().equals(delivered.copy().digest())) {
            throw new LogIncomplete(`${o.what} was cut after ${count} bytes, and the log read again does not start with them (rotated or replaced)`);
          }
          if (buf.length === 0) continue;
        }
        delivered.update(buf);
        count += buf.length;
        if (!out.write(buf)) await drained(out, o.signal);
      }
    } catch (err) {
      if (err instanceof LogIncomplete) throw err;
      if (o.signal.aborted) return count;
      dropped = (err as Error).message || String(err);
    } finally {
      o.signal.removeEventListener('abort', onAbort);
      res.destroy();
    }
    if (o.signal.aborted) return count;
    if (!dropped && skip > 0) dropped = `the log read again was shorter (${count - skip} of ${count} bytes)`;
    if (!dropped) {
      if (!o.follow || (await src.ended())) return count;
      dropped = 'the follow stream ended while the container runs';
    }
    if (!o.resumable) throw new LogIncomplete(`${o.what} was cut after ${count} bytes (${dropped}); a tail window cannot be resumed`);
    // The budget is for cuts in a row: a stream that brought new bytes before it dropped made progress.
    if (count > before) resumes = 0;
    if (++resumes > max) throw new LogIncomplete(`${o.what} was cut after ${count} bytes ${resumes} times in a row (last: ${dropped})`);
    // A follow can end a moment before the pod says its container ended: give the status time to catch up.
    await pause(Math.min(1000, 50 * 2 ** resumes), o.signal);
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
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
