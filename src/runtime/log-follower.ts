/**
 * A container's output stream from its log, exactly once: followed live from the container's first
 * byte (attach only sees what is written after it connects), resumed when the follow breaks (the
 * bytes already delivered are read again, checked against what was delivered, and skipped), and
 * completed after the container has ended from its log read again, so nothing is lost at the end
 * either (log-placement.ts: also when the kubelet has rotated the log meanwhile).
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { KubeCluster } from '../kube/cluster.js';
import { placeLog } from './log-placement.js';
import { RunError } from './run-error.js';
import { Replay, StreamDigest } from './stream-digest.js';
import type { Trace } from './trace.js';

export interface FollowTarget {
  kube: Pick<KubeCluster, 'readPodLog' | 'openPodLog'>;
  pod: string;
  container: string;
  stream: 'Stdout' | 'Stderr';
  out: Writable;
  /** Resolves once the container has ended (its log is then complete). */
  ended: Promise<unknown>;
  signal: AbortSignal;
  trace: Trace;
}

/** Breaks of the follow tolerated before the run fails. */
const MAX_RESUMES = 20;
/** After a follow ends, how long to wait for the container's end before resuming the follow. */
const END_GRACE_MS = 1000;

export async function followLog(t: FollowTarget): Promise<StreamDigest> {
  const delivered = new StreamDigest();
  let ended = false;
  void t.ended.then(
    () => (ended = true),
    () => undefined,
  );
  // one follow that ended cleanly, with the container: it carried the whole stream (log-placement.ts)
  let followedWhole = false;
  for (let resumes = 0; !ended; resumes++) {
    if (t.signal.aborted) return delivered;
    if (resumes > MAX_RESUMES) throw new RunError(`the ${t.stream.toLowerCase()} log of pod ${t.pod} broke ${MAX_RESUMES} times while berth followed it`);
    const broke = await followOnce(t, delivered).then(
      () => false,
      (err: unknown) => {
        if (err instanceof RunError) throw err;
        t.trace(`log ${t.stream}: follow broke (${(err as Error).message})`);
        return true;
      },
    );
    // A clean end is the container's end (or a server's timeout): wait to hear which. A break is
    // resumed at once, after a short pause that grows with each break.
    if (!ended) await Promise.race([t.ended.catch(() => undefined), delay(broke ? Math.min(1000, 50 * (resumes + 1)) : END_GRACE_MS)]);
    followedWhole = resumes === 0 && !broke && ended;
  }
  if (t.signal.aborted) return delivered;
  const log = await t.kube.readPodLog(t.pod, t.container, { stream: t.stream });
  const placed = placeLog(log, delivered, followedWhole);
  if (placed.kind === 'unplaced') {
    throw new RunError(
      `the ${t.stream.toLowerCase()} of pod ${t.pod} does not match what berth delivered (${delivered.bytes} bytes delivered, the log holds ${log.length}; ${placed.why}): its output cannot be trusted`,
    );
  }
  if (placed.kind === 'rotated') t.trace(`log ${t.stream}: rotated by the kubelet; its newest file continues what was delivered`);
  await write(t.out, placed.rest, delivered);
  return delivered;
}

/** One follow request: skips (and checks) what was already delivered, delivers the rest. */
async function followOnce(t: FollowTarget, delivered: StreamDigest): Promise<void> {
  const res = await t.kube.openPodLog(t.pod, t.container, { follow: true, stream: t.stream });
  const stop = (): void => void res.destroy();
  t.signal.addEventListener('abort', stop);
  const replay = new Replay(delivered);
  try {
    for await (const piece of res) {
      const chunk = replay.rest(piece as Buffer);
      if (replay.differs) {
        throw new RunError(
          `the ${t.stream.toLowerCase()} log of pod ${t.pod} no longer begins with what berth delivered: the kubelet rotated it (containerLogMaxSize) while berth's follow of it was broken, or it changed; what the container wrote meanwhile may be lost`,
        );
      }
      if (chunk.length > 0) await write(t.out, chunk, delivered);
    }
  } finally {
    t.signal.removeEventListener('abort', stop);
  }
}

async function write(out: Writable, chunk: Buffer, delivered: StreamDigest): Promise<void> {
  if (chunk.length === 0) return;
  delivered.add(chunk);
  await writeDrained(out, chunk);
}

/** Writes and, when the stream's buffer is full, waits for it to drain: output never outruns its reader. */
export async function writeDrained(out: Writable, data: Buffer): Promise<void> {
  if (data.length > 0 && !out.write(data)) await once(out, 'drain');
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
