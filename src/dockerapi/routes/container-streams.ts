/**
 * A container's output: logs and attach. Both read the pod log (so an attach opened before the container
 * runs gets the whole output of the run), stdout and stderr apart through KEP-3288's `stream` parameter,
 * each copied exactly (log-copy.ts); when it cannot be, the response is cut rather than ended.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { KubeError } from '../../kube/errors.js';
import { badRequest, compareVersions, type Call, type OpenedStream, type Router } from '../http.js';
import { STDERR, STDOUT, frame, framedWriter } from '../framing.js';
import { LogIncomplete, copyLog } from '../log-copy.js';
import { linesAfter, windowStart } from '../log-tail.js';
import type { LogQuery } from '../cluster.js';
import type { ContainerRecord } from '../model.js';
import type { Engine } from '../engine.js';

export function containerStreamRoutes(r: Router, engine: Engine): void {
  r.op('ContainerLogs', 'GET', '/containers/{id}/logs', async (call, [id]) => {
    const c = engine.container(id);
    const stdout = call.flag('stdout');
    const stderr = call.flag('stderr');
    if (!stdout && !stderr) throw badRequest('you must choose at least one stream');
    if (call.query.get('tail') !== 'all') call.int('tail');
    if (call.query.get('since') && !Number.isFinite(Number(call.query.get('since')))) throw badRequest(`invalid value for since: "${call.query.get('since')}" (give a unix timestamp in seconds)`);
    const tty = Boolean(c.body.Tty);
    const out = call.startChunked(tty || compareVersions(call.version, '1.42') < 0 ? 'application/vnd.docker.raw-stream' : 'application/vnd.docker.multiplexed-stream');
    try {
      await streamLogs(engine, c, out, {
        stdout,
        stderr,
        follow: call.flag('follow'),
        tail: call.query.get('tail'),
        since: call.query.get('since'),
        timestamps: call.flag('timestamps'),
        closed: closedOf(call),
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

function closedOf(call: Call): Promise<void> {
  return new Promise<void>((resolve) => call.req.socket.once('close', () => resolve()));
}

interface LogOptions {
  stdout: boolean;
  stderr: boolean;
  follow: boolean;
  tail: string | null;
  since: string | null;
  timestamps: boolean;
  closed: Promise<void>;
  sinceTime?: string;
}

/**
 * Pod log(s) → Docker frames. stdout and stderr apart through KEP-3288's `stream` parameter. Each log is
 * copied exactly (log-copy.ts: dropped streams resumed, verified); when it cannot be, this rejects
 * with LogIncomplete and the caller cuts the response instead of ending it as if it were whole.
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
  const podName = c.podName;
  const tty = Boolean(c.body.Tty);
  const tailLines = o.tail === null || o.tail === 'all' || Number(o.tail) < 0 ? undefined : Number(o.tail);
  const since = o.since && Number(o.since) > 0 ? new Date(Number(o.since) * 1000).toISOString().replace(/\.\d+Z$/, 'Z') : o.sinceTime;
  const wanted: Array<['Stdout' | 'Stderr' | 'All', number]> = tty ? [['All', STDOUT]] : [];
  if (!tty) {
    if (o.stdout) wanted.push(['Stdout', STDOUT]);
    if (o.stderr) wanted.push(['Stderr', STDERR]);
  }
  const follow = o.follow && c.status === 'running';
  const everRan = Boolean(c.startedAt) || c.status === 'running';
  const abort = new AbortController();
  void o.closed.then(() => abort.abort());
  const copy = async (q: LogQuery, writer: Writable, what: string): Promise<void> => {
    const source = { open: () => engine.openLog(podName, q), ended: () => engine.podEnded(podName), changed: (ms: number) => engine.nextChange(c, ms) };
    await copyLog(source, writer, { follow, signal: abort.signal, what: `${what} of container ${c.name}` });
  };
  // A server with split logs refuses tailLines beside a specific stream: the window is cut by time (log-tail.ts).
  let window: ReturnType<typeof windowStart> | Promise<ReturnType<typeof windowStart>> | undefined;
  const windowOnce = () =>
    (window ??= engine.openLog(podName, { tailLines: tailLines! + 1, timestamps: true, sinceTime: since }).then(async (r) => windowStart(await text(r), tailLines!)));
  const copyTailWindow = async (q: LogQuery, writer: Writable, what: string): Promise<void> => {
    const start = await windowOnce();
    const sinceTime = start && (!since || Date.parse(start.sinceTime) > Date.parse(since)) ? start.sinceTime : since;
    const cut = linesAfter(start?.nanos, o.timestamps);
    cut.pipe(writer, { end: false });
    await copy({ ...q, tailLines: undefined, timestamps: true, sinceTime }, cut, what);
    cut.end();
    await once(cut, 'end');
  };
  c.readers++;
  try {
    await Promise.all(
      wanted.map(async ([stream, id]) => {
        const writer = framedWriter(out, id, tty, true);
        const q: LogQuery = { follow, stream, tailLines, timestamps: o.timestamps, sinceTime: since };
        const what = stream === 'All' ? 'the log' : `the ${stream.toLowerCase()} log`;
        try {
          await (tailLines !== undefined && stream !== 'All' ? copyTailWindow(q, writer, what) : copy(q, writer, what));
        } catch (err) {
          if (err instanceof LogIncomplete) throw err;
          // A container that never ran has no log to read (its start failure is reported by start).
          if (!everRan) return;
          // Clusters without the split-stream log gate refuse `stream` (400/422): everything arrives as stdout.
          const refused = err instanceof KubeError && (err.code === 400 || err.code === 422);
          if (stream === 'All' || !refused) throw err;
          if (id === STDERR) return;
          await copy({ ...q, stream: undefined }, writer, 'the log');
        }
        // Done when the last frame is written, not when the cluster's stream ends: a slow client still
        // holds frames in the writer then, and the response must not end before them.
        await new Promise<void>((resolve) => {
          writer.end(() => resolve());
          abort.signal.addEventListener('abort', () => resolve(), { once: true });
        });
      }),
    );
  } finally {
    abort.abort();
    engine.releaseReader(c);
  }
}

/** attach: stdin into the pod's main container, output from its log (which also holds what came before). */
async function attach(engine: Engine, c: ContainerRecord, stream: OpenedStream, o: { stdin: boolean; stdout: boolean; stderr: boolean; logs: boolean; live: boolean }): Promise<void> {
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
    const attachedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
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
          since: null,
          timestamps: false,
          closed,
          sinceTime: beforeStart || o.logs ? undefined : attachedAt,
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

/** berth's own reaper has no pod: its log is the line testcontainers waits for. */
async function reaperLogs(engine: Engine, c: ContainerRecord, out: Writable, o: LogOptions): Promise<void> {
  if (c.status === 'created' && o.follow) await Promise.race([engine.nextChange(c, 60_000), o.closed]);
  if (o.stdout && c.status !== 'created') out.write(frame(STDOUT, Buffer.from('Started! (berth serves the Ryuk protocol itself)\n')));
  if (!o.follow) return;
  let gone = false;
  void o.closed.then(() => (gone = true));
  while (c.status === 'running' && !gone) await Promise.race([engine.nextChange(c, 60_000), o.closed]);
}
