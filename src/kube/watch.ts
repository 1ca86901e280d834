/**
 * The one watch loop of berth: a watch that resumes. The server ends watches as a matter of course
 * (timeouts) and fails them for a moment (restarts, overload); the loop starts again from the last
 * resourceVersion it saw, so no event is lost and none is seen twice. A 410 (that version has
 * expired) starts over from the current state: with `list`, by listing first as a reflector does.
 * What a failure means (try again after a pause, or give up) is the caller's policy: a run's pod
 * watch gives up after a few transient failures, berth serve's reflector never does.
 */
import { Watch, type KubeConfig } from './client-node.js';
import { statusOf } from './errors.js';

export type WatchQuery = Record<string, string | boolean>;

/** One watch request: events until the server ends it (`done()`) or it fails (`done(err)`). */
export type WatchRequest = (query: WatchQuery, onEvent: (type: string, obj: unknown) => void, done: (err?: unknown) => void) => Promise<{ abort(): void }>;

/** Watch requests on one collection path (`/api/v1/namespaces/ns/pods`) through client-node's Watch. */
export function watchRequests(kc: KubeConfig, path: string): WatchRequest {
  const watch = new Watch(kc);
  return (query, onEvent, done) => watch.watch(path, query, onEvent, done);
}

interface Versioned {
  metadata?: { resourceVersion?: string };
}

export interface ResumableWatchOptions<T extends Versioned> {
  request: WatchRequest;
  /** The selectors (labelSelector, fieldSelector); bookmarks and resourceVersion are added here. */
  query: WatchQuery;
  /** ADDED, MODIFIED or DELETED; returning true ends the watch (`done` resolves). */
  onEvent(type: string, obj: T): boolean | void;
  /** Given, every start without a resourceVersion lists first (handing the items to `onList`). */
  list?(): Promise<{ items: T[]; resourceVersion?: string }>;
  onList?(items: T[], listStartedAt: number): void;
  /**
   * A failure (a failed request or list, an ERROR event other than 410): milliseconds until the next
   * try, or undefined to end the watch with it. `failures` counts them since the last event.
   */
  retryAfter(err: unknown, failures: number): number | undefined;
  /** Pauses between tries do not keep the process alive (a long-lived watch that is stopped from outside). */
  background?: boolean;
}

export interface ResumableWatch {
  /** Ends the watch: `done` resolves, or rejects with `err` when given. */
  stop(err?: unknown): void;
  /** Settles once the watch has ended: rejected with the failure that ended it. */
  done: Promise<void>;
}

export function resumableWatch<T extends Versioned>(opts: ResumableWatchOptions<T>): ResumableWatch {
  let resourceVersion: string | undefined;
  let failures = 0;
  let finished = false;
  let controller: { abort(): void } | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  // Each request has a generation: callbacks of a request given up on are ignored.
  let generation = 0;
  let settle!: (err?: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    settle = (err) => (err === undefined ? resolve() : reject(err));
  });

  const finish = (err?: unknown): void => {
    if (finished) return;
    finished = true;
    generation++;
    controller?.abort();
    clearTimeout(retryTimer);
    settle(err);
  };
  const startIn = (ms: number): void => {
    if (ms <= 0) return void start();
    retryTimer = setTimeout(() => void start(), ms);
    if (opts.background) retryTimer.unref();
  };
  const failed = (gen: number, err: unknown): void => {
    if (finished || gen !== generation) return;
    generation++;
    controller?.abort();
    if (statusOf(err).code === 410) resourceVersion = undefined;
    const delay = opts.retryAfter(err, ++failures);
    if (delay === undefined) finish(err ?? new Error('watch failed'));
    else startIn(delay);
  };
  const start = async (): Promise<void> => {
    if (finished) return;
    const gen = ++generation;
    if (!resourceVersion && opts.list) {
      const listStartedAt = Date.now();
      try {
        const list = await opts.list();
        if (finished || gen !== generation) return;
        resourceVersion = list.resourceVersion;
        opts.onList?.(list.items, listStartedAt);
      } catch (err) {
        return failed(gen, err);
      }
    }
    const query: WatchQuery = { ...opts.query, allowWatchBookmarks: true };
    if (resourceVersion) query.resourceVersion = resourceVersion;
    opts
      .request(
        query,
        (type, raw) => {
          if (finished || gen !== generation) return;
          const obj = raw as T & { code?: number };
          if (type === 'ERROR') {
            // 410: our resourceVersion is too old; the server ends the watch and we start over.
            if (obj.code === 410) resourceVersion = undefined;
            else failed(gen, { code: obj.code, body: obj });
            return;
          }
          failures = 0;
          resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
          if (type === 'BOOKMARK') return;
          if (opts.onEvent(type, obj)) finish();
        },
        (err) => {
          if (finished || gen !== generation) return;
          if (err && (err as { name?: string }).name !== 'AbortError') return failed(gen, err);
          // The server ended the watch (timeouts are normal): resume where we were.
          void start();
        },
      )
      .then((c) => {
        if (gen === generation) controller = c;
        if (finished || gen !== generation) c.abort();
      })
      .catch((err: unknown) => failed(gen, err));
  };
  void start();
  return { stop: finish, done };
}
