/**
 * How a run's output reaches the caller, exactly once or as a failure, never silently short.
 *
 * Where the cluster serves stdout and stderr apart in pods/log (KEP-3288), the output is followed from
 * the log, which holds it from the container's first byte (attach only sees what comes after it
 * connects) and can be read again after a break; attach then only carries stdin. Elsewhere (and with a
 * TTY) attach carries the output, and once the container has ended its log is checked to hold no byte
 * that attach did not deliver.
 *
 * stdin cannot be checked that way: a process whose attach broke saw its stdin end early and may
 * have produced a complete-looking result from part of its input. Such a run fails.
 */
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeCluster } from '../kube/cluster.js';
import { KubeError } from '../kube/errors.js';
import { openAttach, type StreamSession } from '../kube/streams.js';
import { followLog, writeDrained } from './log-follower.js';
import { MAIN_CONTAINER } from './plan.js';
import { RunError } from './run-error.js';
import { StreamDigest } from './stream-digest.js';
import type { Trace } from './trace.js';
import type { Workload } from './workload.js';

export interface RunStreams {
  kube: KubeCluster;
  podName: string;
  workload: Workload;
  io: { stdin?: Readable; stdout: Writable; stderr: Writable };
  /** stdin went into the pod as a file (servers without v5): nothing to attach for it. */
  stdinAsFile: boolean;
  /** The container was running when berth got to it (false: it had already ended). */
  running: boolean;
  /** Resolves with the pod once the main container has ended. */
  ended: Promise<V1Pod>;
  /** Aborted when the run stops (failure, interrupt): every stream of the run closes. */
  signal: AbortSignal;
  trace: Trace;
  /** A warm pod's process started before this call: one that ended before the attach never had this call's input. */
  warm?: boolean;
}

export interface RunOutput {
  /** After the container ended: resolves once every byte is delivered; throws when that is impossible. */
  settle(exitCode: number): Promise<void>;
}

/** How long a session may outlive its container's end before it counts as lost. */
const SESSION_END_GRACE_MS = 10_000;

export async function deliverFromLogs(r: RunStreams): Promise<RunOutput> {
  const follow = (stream: 'Stdout' | 'Stderr', out: Writable) =>
    followLog({ kube: r.kube, pod: r.podName, container: MAIN_CONTAINER, stream, out, ended: r.ended, signal: r.signal, trace: r.trace });
  const followers = Promise.all([follow('Stdout', r.io.stdout), follow('Stderr', r.io.stderr)]);
  followers.catch(() => undefined);
  const stdin = r.workload.stdin && !r.stdinAsFile && r.running ? await attachStdin(r) : undefined;
  return {
    async settle() {
      await followers;
      if (stdin && !(await endedWithStatus(stdin))) throw stdinLost(r);
      r.trace('log output checked');
    },
  };
}

export async function deliverFromAttach(r: RunStreams): Promise<RunOutput> {
  const seen = { stdout: new StreamDigest(), stderr: new StreamDigest() };
  const w = r.workload;
  let session: StreamSession | undefined;
  if (r.running) {
    session = await openAttach(r.kube.kc, r.kube.namespace, r.podName, MAIN_CONTAINER, {
      stdin: w.stdin && !r.stdinAsFile ? (r.io.stdin ?? emptyStream()) : undefined,
      stdout: r.io.stdout,
      stderr: r.io.stderr,
      tty: w.tty,
      requireStdinClose: true,
      tap: (channel, data) => seen[channel].add(data),
    }).catch(async (err: unknown) => {
      // A kubelet refuses to attach to a container that has just ended ("container X not found", 500): the run
      // goes on as one that ended before berth got to it, and its log is all its output. Not for a warm pod, whose
      // process was started before this call and never had its input.
      if (!r.warm && (await endsSoon(r.ended))) return undefined;
      throw err;
    });
    if (session) {
      closeOnAbort(session, r.signal);
      r.trace('attached');
    } else r.trace('the container ended before the attach');
  }
  return {
    async settle(exitCode) {
      const complete = session ? await endedWithStatus(session) : false;
      if (session && w.stdin && !r.stdinAsFile && !complete) throw stdinLost(r);
      const log = await r.kube.readPodLog(r.podName, MAIN_CONTAINER);
      const verdict = reconcileMerged(log, seen, Boolean(w.tty), complete);
      r.trace(`attach output checked against the log (${verdict.kind})`);
      if (verdict.kind === 'tail') await writeDrained(r.io.stdout, verdict.stdout);
      else if (verdict.kind === 'merged') {
        // The container wrote before berth could attach, and this cluster cannot say which bytes went
        // to which stream: shown on stderr, and a success is not claimed on top of it.
        await writeDrained(
          r.io.stderr,
          Buffer.concat([
            Buffer.from(
              `berth: pod ${r.podName} wrote before berth could attach, and this cluster serves its log with stdout and stderr merged (enable PodLogsQuerySplitStreams for exact streams); its log:\n`,
            ),
            verdict.log,
          ]),
        );
        if (exitCode === 0)
          throw new RunError(`the output of pod ${r.podName} cannot be delivered exactly: stdout and stderr are merged in its log (shown above)`);
      } else if (verdict.kind === 'lost') throw new RunError(`the output of pod ${r.podName} was not fully received: ${verdict.why}`);
    },
  };
}

/** How long a refused attach waits for the watch to report the container's end before the refusal counts. */
const ENDED_REPORT_MS = 5_000;

function endsSoon(ended: Promise<V1Pod>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ENDED_REPORT_MS)));
  return Promise.race([
    ended.then(
      () => true,
      () => false,
    ),
    late,
  ]).finally(() => clearTimeout(timer));
}

export type MergedVerdict = { kind: 'exact' } | { kind: 'tail'; stdout: Buffer } | { kind: 'merged'; log: Buffer } | { kind: 'lost'; why: string };

/**
 * Attach output against the merged log: equal lengths mean nothing was missed; a longer log means
 * attach missed bytes, recoverable only where one stream is all there is (TTY) or nothing was seen
 * yet. A shorter log is a rotated one (kubelet's containerLogMaxSize), trusted only after a complete
 * session.
 */
export function reconcileMerged(log: Buffer, seen: { stdout: StreamDigest; stderr: StreamDigest }, tty: boolean, complete: boolean): MergedVerdict {
  const total = seen.stdout.bytes + seen.stderr.bytes;
  if (log.length === total) return { kind: 'exact' };
  if (log.length < total) {
    return complete ? { kind: 'exact' } : { kind: 'lost', why: `the stream broke and the log holds only ${log.length} of the ${total} bytes received` };
  }
  if (tty && seen.stdout.isPrefixOf(log)) return { kind: 'tail', stdout: log.subarray(seen.stdout.bytes) };
  if (total === 0) return tty ? { kind: 'tail', stdout: log } : { kind: 'merged', log };
  return { kind: 'lost', why: `berth received ${total} bytes, the container wrote ${log.length}, and the missing ones cannot be placed in stdout or stderr` };
}

async function attachStdin(r: RunStreams): Promise<StreamSession | undefined> {
  let session: StreamSession;
  try {
    session = await openAttach(r.kube.kc, r.kube.namespace, r.podName, MAIN_CONTAINER, { stdin: r.io.stdin ?? emptyStream(), requireStdinClose: true });
  } catch (err) {
    // It ended between Running and the attach without its stdin, which no attach had opened yet (a read would
    // have waited for one): it did not read it, as a docker run whose command exits without reading. Its log and
    // exit code are the run's. Not for a warm pod, whose process was started before this call. The refusal says
    // so in the server's words (a kubelet: 500 "container main not found"; other servers: 400 "completed pod"), so
    // the pod's own end, reported by the watch, decides.
    if (!r.warm && err instanceof KubeError && (await endsSoon(r.ended))) {
      r.trace('the container ended before its stdin was attached: it did not read it');
      return undefined;
    }
    throw err;
  }
  closeOnAbort(session, r.signal);
  r.trace('attached (stdin)');
  return session;
}

/** True when the session closed with its Status; false when it broke (or hung past the container's end). */
async function endedWithStatus(session: StreamSession): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), SESSION_END_GRACE_MS)));
  try {
    const ok = await Promise.race([
      session.done.then(
        () => true,
        () => false,
      ),
      late,
    ]);
    if (!ok) session.close();
    return ok;
  } finally {
    clearTimeout(timer);
  }
}

function stdinLost(r: RunStreams): RunError {
  return new RunError(
    `the attach stream to pod ${r.podName} broke while it carried stdin: the container may have read only part of its input, so its result is not used (run it again)`,
  );
}

function closeOnAbort(session: StreamSession, signal: AbortSignal): void {
  if (signal.aborted) session.close();
  else signal.addEventListener('abort', () => session.close(), { once: true });
}

function emptyStream(): Readable {
  const s = new PassThrough();
  s.end();
  return s;
}
