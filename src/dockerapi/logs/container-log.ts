/**
 * One run's log, as `docker logs` and attach select it: each of its logs (stdout, stderr, or the merged one)
 * copied exactly (log-copy.ts) into a writer. What a pods/log query can select itself goes as that query; what
 * it cannot — a tail window (log-tail.ts), a time within a second (its `sinceTime` has whole seconds), an end
 * time (it has no `until`) — is read with timestamps from a fixed start and cut by time here (log-cut.ts). Either
 * read starts in the same place however often it is opened again, so a dropped stream can always be resumed.
 */
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { buffer } from 'node:stream/consumers';
import type { LogQuery } from '../cluster.js';
import type { Engine } from '../engine.js';
import type { ContainerRecord } from '../model.js';
import { copyLog, type CopyOptions, type LogSource } from './log-copy.js';
import { timeCut } from './log-cut.js';
import { windowStart } from './log-tail.js';
import { isWholeSecond, sinceTimeOf } from './log-time.js';

/** The lines a client asked for; instants in nanoseconds since the epoch, both included (as dockerd's). */
export interface LogSelection {
  /** The last N lines only. */
  tail?: number;
  since?: bigint;
  until?: bigint;
  timestamps: boolean;
  /** Every line led by its time even without `timestamps`, for a merge by time (log-merge.ts). */
  stampLines?: boolean;
}

/**
 * Whether one stream of an ended container's log holds anything: its first byte, read alone. Undefined when the
 * cluster does not say (a refused `stream`, an error): the caller then reads as if it did.
 */
export async function logHolds(engine: Engine, podName: string, stream: 'Stdout' | 'Stderr'): Promise<boolean | undefined> {
  try {
    return (await buffer(await engine.openLog(podName, { stream, limitBytes: 1 }))).length > 0;
  } catch {
    return undefined;
  }
}

export class ContainerLog {
  private window?: Promise<bigint | undefined>;
  /** Aborted at the first line past `until` in any of the logs: every follow then reads its log to its end. */
  private readonly stopFollowing = new AbortController();

  constructor(
    private readonly engine: Engine,
    private readonly c: ContainerRecord,
    private readonly podName: string,
    private readonly selection: LogSelection,
    private readonly follow: boolean,
    /** Aborted when the client went away. */
    private readonly signal: AbortSignal,
  ) {}

  /** Copies one log (`stream` absent: the merged log) into `writer`, not ended. */
  async copy(stream: LogQuery['stream'], writer: Writable, what: string): Promise<void> {
    const s = this.selection;
    // timestamps: the kubelet's drop trailing zeros, the cut writes them as dockerd does
    const cutHere = s.timestamps || s.stampLines || s.tail !== undefined || s.until !== undefined || (s.since !== undefined && !isWholeSecond(s.since));
    if (cutHere) return this.copyCut(stream, writer, what);
    await copyLog(
      this.source({ stream, timestamps: s.timestamps, sinceTime: s.since === undefined ? undefined : sinceTimeOf(s.since) }),
      writer,
      this.options(what, this.signal),
    );
  }

  /** One log read with timestamps from its first instant on, through a cut by time into `writer`. */
  private async copyCut(stream: LogQuery['stream'], writer: Writable, what: string): Promise<void> {
    const s = this.selection;
    const from = await this.firstInstant();
    const cut = timeCut({ from, until: s.until, keepTimestamps: s.timestamps, stampLines: s.stampLines, onPastUntil: () => this.stopFollowing.abort() });
    // A line without a timestamp fails the cut: the copy into it stops then, and the failure is this copy's.
    const failed = new AbortController();
    cut.once('error', () => failed.abort());
    cut.pipe(writer, { end: false });
    const source = this.source({ stream, timestamps: true, sinceTime: from === undefined ? undefined : sinceTimeOf(from) });
    try {
      await copyLog(source, cut, this.options(what, AbortSignal.any([this.signal, failed.signal])));
    } catch (err) {
      // Nothing more goes into the writer from this cut (a refused `stream` is read again merged, into the same writer).
      cut.unpipe(writer);
      cut.destroy();
      throw err;
    }
    if (!cut.destroyed) cut.end();
    try {
      await finished(cut, { signal: this.signal });
    } catch (err) {
      // A client gone away stops the copy quietly (its writer may never drain again).
      if (!this.signal.aborted) throw err;
    }
  }

  /** The first instant to read: `since`, or just past the line before the tail window when that is later. */
  private async firstInstant(): Promise<bigint | undefined> {
    const { tail, since } = this.selection;
    const before = tail === undefined ? undefined : await this.windowStart(tail);
    const afterWindow = before === undefined ? undefined : before + 1n;
    if (since === undefined || afterWindow === undefined) return since ?? afterWindow;
    return since > afterWindow ? since : afterWindow;
  }

  /** Found once on the merged log, for every log of the container. */
  private windowStart(tail: number): Promise<bigint | undefined> {
    const since = this.selection.since;
    this.window ??= this.engine
      .openLog(this.podName, { tailLines: tail + 1, timestamps: true, sinceTime: since === undefined ? undefined : sinceTimeOf(since) })
      .then(async (r) => windowStart(await buffer(r), tail));
    return this.window;
  }

  private source(q: Omit<LogQuery, 'follow'>): LogSource {
    return {
      open: (follow, signal) => this.engine.openLog(this.podName, { ...q, follow, signal }),
      ended: () => this.engine.podEnded(this.podName),
      changed: (ms) => this.engine.nextChange(this.c, ms),
    };
  }

  private options(what: string, signal: AbortSignal): CopyOptions {
    return { follow: this.follow, signal, stopFollowing: this.stopFollowing.signal, what: `${what} of container ${this.c.name}` };
  }
}
