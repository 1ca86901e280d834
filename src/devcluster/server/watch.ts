// A watch over HTTP: chunked NDJSON, one event per line flushed at once, bookmarks when asked for (as the watch cache sends them),
// ended by timeoutSeconds (default a random 30–60 min, as the real server's min-request-timeout does),
// by the endWatchAfterMs fault, by the client, or by the server closing.
import type { ServerResponse, IncomingMessage } from 'node:http';
import { ApiError } from '../api/errors.js';
import { groupVersion } from '../api/resources.js';
import type { ObjectStore, ResourceType, WatchEvent, WatchHandle, WatchOptions } from '../types.js';

export interface WatchServeOptions {
  store: ObjectStore;
  rt: ResourceType;
  namespace: string | undefined;
  watch: WatchOptions;
  timeoutSeconds?: number;
  /** 0 = off */
  endAfterMs: number;
  bookmarkIntervalMs?: number;
  /**
   * sendInitialEvents=true (WatchList): the current objects as ADDED whatever resourceVersion was given, then
   * a bookmark annotated `k8s.io/initial-events-end` that says the state is complete, then what changes
   */
  sendInitialEvents?: boolean;
  contentType: string;
  /** e.g. the Table conversion; applied to ADDED/MODIFIED/DELETED objects */
  encodeObject?: (event: WatchEvent) => WatchEvent;
  liveStreams: Set<() => void>;
}

/** the watch cache's bookmark frequency (cacher's defaultBookmarkFrequency) */
const BOOKMARK_FREQUENCY_MS = 60_000;
/** and one bookmark this long before the watch's deadline, so that the client resumes from the newest version */
const PRE_TIMEOUT_MS = 2000;

function randomTimeoutSeconds(): number {
  return 1800 + Math.floor(Math.random() * 1800);
}

/**
 * Starts the watch. Throws (before anything is written) for a bad request such as an invalid selector;
 * a too old resourceVersion is answered in-stream with an ERROR event carrying the 410 Status, as the
 * real server does.
 */
export function serveWatch(req: IncomingMessage, res: ServerResponse, o: WatchServeOptions): void {
  const early: WatchEvent[] = [];
  let live = false;
  let ended = false;
  const write = (e: WatchEvent) => {
    if (ended) return;
    const out = o.encodeObject && e.type !== 'BOOKMARK' && e.type !== 'ERROR' ? o.encodeObject(e) : e;
    res.write(`${JSON.stringify(out)}\n`);
  };
  const onEvent = (e: WatchEvent) => (live ? write(e) : early.push(e));

  let handle: WatchHandle | undefined;
  let tooOld: ApiError | undefined;
  try {
    handle = o.store.watch(o.rt, o.namespace, o.sendInitialEvents ? { ...o.watch, resourceVersion: undefined } : o.watch, onEvent);
  } catch (e) {
    if (e instanceof ApiError && e.code === 410) tooOld = e;
    else throw e;
  }

  res.writeHead(200, {
    'Content-Type': o.contentType,
    'Transfer-Encoding': 'chunked',
    'Cache-Control': 'no-cache, private',
  });
  res.flushHeaders();
  live = true;

  const timers: NodeJS.Timeout[] = [];
  const finish = () => {
    if (ended) return;
    ended = true;
    handle?.stop();
    for (const t of timers) clearTimeout(t);
    o.liveStreams.delete(finish);
    if (!res.writableEnded) res.end();
  };
  o.liveStreams.add(finish);
  req.on('close', finish);
  res.on('close', finish);
  res.on('error', finish);

  if (tooOld) {
    write({ type: 'ERROR', object: tooOld.toStatus() as unknown as WatchEvent['object'] });
    finish();
    return;
  }
  for (const e of early) write(e);
  const bookmark = (annotations?: Record<string, string>): WatchEvent => ({
    type: 'BOOKMARK',
    object: { apiVersion: groupVersion(o.rt), kind: o.rt.kind, metadata: { resourceVersion: o.store.resourceVersion(), ...(annotations ? { annotations } : {}) } },
  });
  // delivery is synchronous: everything up to the store's newest version has been written by now
  if (o.sendInitialEvents) write(bookmark({ 'k8s.io/initial-events-end': 'true' }));

  const timeoutMs = (o.timeoutSeconds && o.timeoutSeconds > 0 ? o.timeoutSeconds : randomTimeoutSeconds()) * 1000;
  timers.push(setTimeout(finish, timeoutMs));
  if (o.endAfterMs > 0) timers.push(setTimeout(finish, o.endAfterMs));
  if (o.watch.allowWatchBookmarks) scheduleBookmarks(Date.now() + timeoutMs - PRE_TIMEOUT_MS, o.bookmarkIntervalMs ?? BOOKMARK_FREQUENCY_MS, () => write(bookmark()), timers);
}

/**
 * As the watch cache (cache_watcher.go nextBookmarkTime): a bookmark every `every` ms, and the last one at
 * `lastAt`, 2 s before the deadline; none when the watch is shorter than that. Delivery is synchronous, so a
 * bookmark's version (the store's newest) follows everything written before it.
 */
function scheduleBookmarks(lastAt: number, every: number, send: () => void, timers: NodeJS.Timeout[]): void {
  const next = (from: number) => {
    const at = Math.min(from + every, lastAt);
    if (at < from) return;
    const timer = setTimeout(() => {
      send();
      if (at < lastAt) next(at);
    }, at - Date.now());
    timers.push(timer);
  };
  next(Date.now());
}
