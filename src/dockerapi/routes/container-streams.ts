/**
 * A container's output: logs and attach. Both read the pod log (so an attach opened before the container
 * runs gets the whole output of the run), stdout and stderr apart through KEP-3288's `stream` parameter,
 * each copied exactly (logs/log-copy.ts); when it cannot be, the response is cut rather than ended.
 */
import type { Writable } from 'node:stream';
import { KubeError } from '../../kube/errors.js';
import { badRequest, type Call, type OpenedStream, type Router } from '../http/http.js';
import { compareVersions } from '../http/api-version.js';
import { STDERR, STDOUT, frame } from '../http/framing.js';
import { framedWriter } from '../logs/framed-writer.js';
import { LogIncomplete } from '../logs/log-copy.js';
import { ContainerLog, logHolds } from '../logs/container-log.js';
import { LogMerge } from '../logs/log-merge.js';
import { nowNanos, parseUnixTimestamp } from '../logs/log-time.js';
import type { ContainerRecord } from '../model.js';
import type { Engine } from '../engine.js';

export function containerStreamRoutes(r: Router, engine: Engine): void {
  r.op('ContainerLogs', 'GET', '/containers/{id}/logs', async (call, [id]) => {
    const c = engine.container(id);
    const stdout = call.flag('stdout');
    const stderr = call.flag('stderr');
    if (!stdout && !stderr) throw badRequest('you must choose at least one stream');
    if (call.query.get('tail') !== 'all') call.int('tail');
    const since = logTime(call, 'since');
    const until = logTime(call, 'until');
    const tty = Boolean(c.body.Tty);
    const out = call.startChunked(streamType(call, tty));
    try {
      await streamLogs(engine, c, out, {
        stdout,
        stderr,
        follow: call.flag('follow'),
        tail: call.query.get('tail'),
        // dockerd's `since` of 0 (or before 1970) and `until` of 0 select nothing out
        since: since !== undefined && since > 0n ? since : undefined,
        until: until !== undefined && until !== 0n ? until : undefined,
        timestamps: call.flag('timestamps'),
        closed: call.clientGone(),
      });
    } catch (err) {
      // The status is sent: a cut chunked response is how the client learns the log is not whole.
      process.stderr.write(`berth serve: logs of ${c.name}: ${(err as Error).message}\n`);
      out.destroy();
      return;
    }
    out.end();
  });
  r.op('ContainerAttach', 'POST', '/containers/{id}/attach', async (call, [id]) => {
    const c = engine.container(id);
    const stream = call.openStream(streamType(call, Boolean(c.body.Tty)));
    await attach(engine, c, stream, {
      stdin: call.flag('stdin') && Boolean(c.body.OpenStdin),
      stdout: call.flag('stdout'),
      stderr: call.flag('stderr'),
      logs: call.flag('logs'),
      live: call.flag('stream'),
    });
  });
}

/** Multiplexed frames from API 1.42 on (raw before, and always with a TTY). */
export function streamType(call: Call, tty: boolean): string {
  return tty || compareVersions(call.version, '1.42') < 0 ? 'application/vnd.docker.raw-stream' : 'application/vnd.docker.multiplexed-stream';
}

/** `since` / `until` of a logs request, parsed as dockerd parses them; refused in dockerd's words. */
function logTime(call: Call, name: 'since' | 'until'): bigint | undefined {
  const value = call.query.get(name);
  if (!value) return undefined;
  try {
    return parseUnixTimestamp(value);
  } catch (err) {
    throw badRequest(`invalid value for "${name}": ${(err as Error).message}`);
  }
}

interface LogOptions {
  stdout: boolean;
  stderr: boolean;
  follow: boolean;
  tail: string | null;
  /** Lines written from this instant on (nanoseconds since the epoch). */
  since?: bigint;
  /** Lines written up to this instant. */
  until?: bigint;
  timestamps: boolean;
  closed: Promise<void>;
}

/**
 * Pod log(s) → Docker frames. stdout and stderr apart through KEP-3288's `stream` parameter. Each log is
 * copied exactly (logs/container-log.ts, logs/log-copy.ts: dropped streams resumed, verified); when it cannot be, this
 * rejects with LogIncomplete and the caller cuts the response instead of ending it as if it were whole.
 */
async function streamLogs(engine: Engine, c: ContainerRecord, out: Writable, o: LogOptions): Promise<void> {
  if (engine.isReaper(c)) return reaperLogs(engine, c, out, o);
  // A created container has no pod yet: when following, its output starts with the start.
  if (o.follow) {
    let gone = false;
    void o.closed.then(() => (gone = true));
    while (c.status === 'created' && engine.containers.get(c.id) === c && !gone) await Promise.race([engine.nextChange(c, 60_000), o.closed]);
  }
  if (!c.podName) return;
  const tty = Boolean(c.body.Tty);
  const wanted: Array<['Stdout' | 'Stderr' | 'All', number]> = tty ? [['All', STDOUT]] : [];
  if (!tty) {
    if (o.stdout) wanted.push(['Stdout', STDOUT]);
    if (o.stderr) wanted.push(['Stderr', STDERR]);
  }
  // Every line still to come is written after an `until` already past: nothing to follow.
  const follow = o.follow && c.status === 'running' && !(o.until !== undefined && o.until <= nowNanos());
  const everRan = Boolean(c.startedAt) || c.status === 'running';
  const abort = new AbortController();
  void o.closed.then(() => abort.abort());
  const tail = o.tail === null || o.tail === 'all' || Number(o.tail) < 0 ? undefined : Number(o.tail);
  // Read to its end, stdout and stderr go out in the order their lines were written (dockerd's log file order);
  // a follow passes each line on as it comes.
  let byTime = !follow && !tty && o.stdout && o.stderr;
  // A merge reads both logs with their times and judges every line. An ended container that wrote no stderr
  // (most write none) has its order already: its stdout is read as it is.
  if (byTime && c.status === 'exited' && (await logHolds(engine, c.podName, 'Stderr')) === false) {
    byTime = false;
    wanted.splice(
      wanted.findIndex(([, id]) => id === STDERR),
      1,
    );
  }
  const log = new ContainerLog(
    engine,
    c,
    c.podName,
    { tail, since: o.since, until: o.until, timestamps: o.timestamps, stampLines: byTime },
    follow,
    abort.signal,
  );
  c.readers++;
  try {
    if (byTime) await copyByTime(log, out, o.timestamps, everRan, abort.signal);
    else await copyApart(log, wanted, out, tty, follow, everRan, abort.signal);
  } finally {
    abort.abort();
    engine.releaseReader(c);
  }
}

/** Each log into its own framed writer, written as it comes. */
async function copyApart(
  log: ContainerLog,
  wanted: Array<['Stdout' | 'Stderr' | 'All', number]>,
  out: Writable,
  tty: boolean,
  follow: boolean,
  everRan: boolean,
  signal: AbortSignal,
): Promise<void> {
  await Promise.all(
    wanted.map(async ([stream, id]) => {
      const writer = framedWriter(out, id, tty, follow ? 'at-once' : 'held');
      await copyStream(log, stream, id, writer, everRan);
      // Done when the last frame is written, not when the cluster's stream ends: a slow client still
      // holds frames in the writer then, and the response must not end before them.
      await new Promise<void>((resolve) => {
        writer.end(() => resolve());
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }),
  );
}

/** stdout and stderr read to their ends, merged by the times of their lines (logs/log-merge.ts). */
async function copyByTime(log: ContainerLog, out: Writable, timestamps: boolean, everRan: boolean, signal: AbortSignal): Promise<void> {
  const merge = new LogMerge(out, timestamps);
  const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  const copies = (
    [
      ['Stdout', STDOUT, merge.stdout],
      ['Stderr', STDERR, merge.stderr],
    ] as const
  ).map(async ([stream, id, input]) => {
    await copyStream(log, stream, id, input, everRan);
    await new Promise<void>((resolve) => input.end(() => resolve()));
  });
  // a failed copy rejects at once; the merge then waits for nothing more
  await Promise.all([...copies, Promise.race([merge.done, aborted])]);
}

/** One log of the container (`All`: the merged one) into `writer`, not ended. */
async function copyStream(log: ContainerLog, stream: 'Stdout' | 'Stderr' | 'All', id: number, writer: Writable, everRan: boolean): Promise<void> {
  const what = stream === 'All' ? 'the log' : `the ${stream.toLowerCase()} log`;
  try {
    await log.copy(stream, writer, what);
  } catch (err) {
    if (err instanceof LogIncomplete) throw err;
    // A container that never ran has no log to read (its start failure is reported by start).
    if (!everRan) return;
    // Clusters without the split-stream log gate refuse `stream` (400/422): everything arrives as stdout.
    const refused = err instanceof KubeError && (err.code === 400 || err.code === 422);
    if (stream === 'All' || !refused) throw err;
    if (id === STDERR) return;
    await log.copy(undefined, writer, 'the log');
  }
}

/** attach: stdin into the pod's main container, output from its log (which also holds what came before). */
async function attach(
  engine: Engine,
  c: ContainerRecord,
  stream: OpenedStream,
  o: { stdin: boolean; stdout: boolean; stderr: boolean; logs: boolean; live: boolean },
): Promise<void> {
  c.readers++;
  try {
    const closed = stream.closed;
    let gone = false;
    void closed.then(() => (gone = true));
    // Opened before the container runs (docker run, docker start -a): the whole output of the run that
    // follows is this attach's, however long the start takes.
    const beforeStart = c.status !== 'running';
    const generation = c.generation;
    const waiting = (): boolean => c.status === 'created' || (o.live && beforeStart && c.status === 'exited' && c.generation === generation);
    while (waiting() && engine.containers.get(c.id) === c) {
      await Promise.race([engine.nextChange(c, 60_000), closed]);
      if (gone) return;
    }
    if (!c.podName) return stream.end();
    // From the start of this second: the pods/log API selects whole seconds.
    const attachedAt = BigInt(Math.floor(Date.now() / 1000)) * 1_000_000_000n;
    if (o.stdin && c.status === 'running') {
      void engine
        .attachStdin(c.podName, stream.input, Boolean(c.body.Tty))
        .then((s) => s.done)
        .catch(() => undefined);
    }
    if (o.live || o.logs) {
      try {
        await streamLogs(engine, c, stream.out, {
          stdout: o.stdout,
          stderr: o.stderr,
          follow: o.live,
          tail: null,
          since: beforeStart || o.logs ? undefined : attachedAt,
          timestamps: false,
          closed,
        });
      } catch (err) {
        // Cut, not ended: the client must not take a short output for the whole one; `wait` reports why.
        engine.outputIncomplete(c, (err as Error).message);
        stream.out.destroy();
        return;
      }
    }
    stream.end();
  } finally {
    engine.releaseReader(c);
  }
}

/**
 * berth's own reaper has no pod: its log is the line testcontainers waits for, which each flavour matches its own
 * way (Java `.*Started.*`, Go `Started`, Python `.* Started!`: text and a space before it).
 */
async function reaperLogs(engine: Engine, c: ContainerRecord, out: Writable, o: LogOptions): Promise<void> {
  if (c.status === 'created' && o.follow) await Promise.race([engine.nextChange(c, 60_000), o.closed]);
  if (o.stdout && c.status !== 'created') out.write(frame(STDOUT, Buffer.from('berth: Started! (berth serves the Ryuk protocol itself)\n')));
  if (!o.follow) return;
  let gone = false;
  void o.closed.then(() => (gone = true));
  while (c.status === 'running' && !gone) await Promise.race([engine.nextChange(c, 60_000), o.closed]);
}
