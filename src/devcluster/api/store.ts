// The in-memory object store: one global, increasing resourceVersion (as etcd keeps it), optimistic
// concurrency, a bounded event history for resuming watches, and list chunking with continue tokens.
import { randomUUID, randomInt } from 'node:crypto';
import type {
  KubeObject,
  ListOptions,
  ListResult,
  ObjectStore,
  ResourceType,
  UpdateOptions,
  WatchEvent,
  WatchHandle,
  WatchOptions,
} from '../types.js';
import { alreadyExists, badRequest, conflict, expired, invalid, notFound } from './errors.js';
import { ListSnapshots } from './list-snapshots.js';
import { groupVersion } from './resources.js';
import { matchesFilter, parseFilter, type ObjectFilter } from './selectors.js';
import { deepEqual } from './validation.js';

type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface Change {
  rv: number;
  type: ChangeType;
  rtKey: string;
  namespace: string | undefined;
  object: KubeObject;
  /** the state before a MODIFIED, to turn selector transitions into ADDED/DELETED */
  previous?: KubeObject;
}

interface Watcher {
  rtKey: string;
  rt: ResourceType;
  namespace: string | undefined;
  filter: ObjectFilter;
  onEvent: (e: WatchEvent) => void;
  stopped: boolean;
  /** changes up to here reached this watcher through its start (initial list or replay) */
  startRv: number;
}

/**
 * ObjectMeta's fields are `omitempty`: the real server stores and answers an emptied map, list or string (the
 * labels after `kubectl label x a-` of the last one, `finalizers: []`) as absent, not as `{}`, `[]` or "".
 */
function omitEmptyMetadata(obj: KubeObject): void {
  const meta = obj.metadata as Record<string, unknown>;
  for (const key of ['generateName', 'selfLink', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields']) {
    const value = meta[key];
    const empty = value === '' || value === null || (Array.isArray(value) ? value.length === 0 : typeof value === 'object' && Object.keys(value as object).length === 0);
    if (empty) delete meta[key];
  }
}

/** what generateName appends: the alphabet of apiserver's names.SimpleNameGenerator */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_GENERATE_NAME_PREFIX = 58;

const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';

const rtKeyOf = (rt: ResourceType) => `${rt.group}/${rt.plural}`;
const objKeyOf = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

function compareKeys(a: KubeObject, b: KubeObject): number {
  const na = a.metadata.namespace ?? '';
  const nb = b.metadata.namespace ?? '';
  if (na !== nb) return na < nb ? -1 : 1;
  const ma = a.metadata.name ?? '';
  const mb = b.metadata.name ?? '';
  return ma < mb ? -1 : ma > mb ? 1 : 0;
}

function rfc3339Seconds(d = new Date()): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

interface ContinueToken {
  rv: number;
  /** namespace/name of the last item served */
  start: string;
  /** the list as it was at its first page (list-snapshots.ts) */
  snapshot?: string;
}

function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: t.rv, start: t.start, ...(t.snapshot ? { snapshot: t.snapshot } : {}) })).toString('base64url');
}

function decodeContinue(s: string): ContinueToken {
  try {
    const j = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (typeof j.rv === 'number' && typeof j.start === 'string') return { rv: j.rv, start: j.start, ...(typeof j.snapshot === 'string' ? { snapshot: j.snapshot } : {}) };
  } catch {
    // fall through to the real server's wording
  }
  throw badRequest(`continue key is not valid: ${s}`);
}

export class MemoryStore implements ObjectStore {
  private rv = 0;
  /** rtKey -> objKey -> object */
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private readonly history: Change[] = [];
  /** the rv of the newest change dropped from history: watches from before it get 410 */
  private compactedRv = 0;
  private readonly historyLimit: number;
  private readonly watchers = new Set<Watcher>();
  private readonly undelivered: Change[] = [];
  private delivering = false;
  private readonly snapshots = new ListSnapshots();

  constructor(opts: { historyLimit?: number } = {}) {
    this.historyLimit = Math.max(1, opts.historyLimit ?? 10000);
  }

  resourceVersion(): string {
    return String(this.rv);
  }

  create(rt: ResourceType, namespace: string | undefined, obj: KubeObject): KubeObject {
    const ns = rt.namespaced ? namespace ?? obj.metadata?.namespace : undefined;
    const stored = structuredClone(obj);
    stored.metadata ??= {};
    const bucket = this.bucket(rt);
    let name = stored.metadata.name;
    if (!name) {
      const prefix = stored.metadata.generateName;
      if (!prefix) {
        throw invalid(rt, '', [{ field: 'metadata.name', type: 'FieldValueRequired', message: 'Required value: name or generateName is required' }]);
      }
      do name = generateName(prefix);
      while (bucket.has(objKeyOf(ns, name)));
    }
    if (bucket.has(objKeyOf(ns, name))) throw alreadyExists(rt, name);
    stored.apiVersion = groupVersion(rt);
    stored.kind = rt.kind;
    stored.metadata.name = name;
    if (ns !== undefined) stored.metadata.namespace = ns;
    else delete stored.metadata.namespace;
    stored.metadata.uid = randomUUID();
    stored.metadata.creationTimestamp = rfc3339Seconds();
    stored.metadata.resourceVersion = String(++this.rv);
    omitEmptyMetadata(stored);
    bucket.set(objKeyOf(ns, name), stored);
    this.record({ rv: this.rv, type: 'ADDED', rtKey: rtKeyOf(rt), namespace: ns, object: stored });
    return structuredClone(stored);
  }

  get(rt: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const o = this.tryGet(rt, namespace, name);
    if (!o) throw notFound(rt, name);
    return o;
  }

  tryGet(rt: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const o = this.bucket(rt).get(objKeyOf(rt.namespaced ? namespace : undefined, name));
    return o ? structuredClone(o) : undefined;
  }

  list(rt: ResourceType, namespace: string | undefined, opts: ListOptions = {}): ListResult {
    const filter = parseFilter(rt, opts.labelSelector, opts.fieldSelector);
    const token = opts.continue ? decodeContinue(opts.continue) : undefined;
    if (token && token.rv < this.compactedRv) throw expired(EXPIRED_CONTINUE);
    const listRv = token?.rv ?? this.rv;
    // a later page comes from the list as it was at the first (every page at one resourceVersion)
    const kept = token?.snapshot ? this.snapshots.get(token.snapshot) : undefined;
    if (token?.snapshot && !kept) throw expired(EXPIRED_CONTINUE);
    const all =
      kept ??
      [...this.bucket(rt).values()]
        .filter((o) => !rt.namespaced || namespace === undefined || o.metadata.namespace === namespace)
        .filter((o) => matchesFilter(rt, filter, o))
        .sort(compareKeys);
    const start = token?.start;
    const rest = start === undefined ? all : all.filter((o) => objKeyOf(o.metadata.namespace, o.metadata.name!) > start);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : undefined;
    const page = limit ? rest.slice(0, limit) : rest;
    const result: ListResult = { items: page.map((o) => structuredClone(o)), resourceVersion: String(listRv) };
    if (limit && rest.length > limit) {
      const last = page[page.length - 1]!;
      const snapshot = token?.snapshot ?? this.snapshots.keep(rest.slice(limit).map((o) => structuredClone(o)));
      result.continue = encodeContinue({ rv: listRv, start: objKeyOf(last.metadata.namespace, last.metadata.name!), snapshot });
      result.remainingItemCount = rest.length - limit;
    } else if (token?.snapshot) this.snapshots.drop(token.snapshot);
    return result;
  }

  update(rt: ResourceType, namespace: string | undefined, obj: KubeObject, opts: UpdateOptions = {}): KubeObject {
    const name = obj.metadata?.name;
    if (!name) throw invalid(rt, '', [{ field: 'metadata.name', type: 'FieldValueRequired', message: 'Required value: name is required' }]);
    const current = this.bucket(rt).get(objKeyOf(rt.namespaced ? namespace : undefined, name));
    if (!current) throw notFound(rt, name);
    const wanted = obj.metadata.resourceVersion;
    if (wanted && wanted !== current.metadata.resourceVersion) throw conflict(rt, name);
    const next = this.merge(rt, current, structuredClone(obj), opts, false);
    return this.write(rt, current, next);
  }

  mutate(rt: ResourceType, namespace: string | undefined, name: string, change: (obj: KubeObject) => void, opts: UpdateOptions = {}): KubeObject {
    const current = this.bucket(rt).get(objKeyOf(rt.namespaced ? namespace : undefined, name));
    if (!current) throw notFound(rt, name);
    const draft = structuredClone(current);
    change(draft);
    const next = this.merge(rt, current, draft, opts, true);
    return this.write(rt, current, next);
  }

  remove(rt: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const ns = rt.namespaced ? namespace : undefined;
    const bucket = this.bucket(rt);
    const current = bucket.get(objKeyOf(ns, name));
    if (!current) throw notFound(rt, name);
    bucket.delete(objKeyOf(ns, name));
    const last = structuredClone(current);
    last.metadata.resourceVersion = String(++this.rv);
    this.record({ rv: this.rv, type: 'DELETED', rtKey: rtKeyOf(rt), namespace: ns, object: last });
    return structuredClone(last);
  }

  watch(rt: ResourceType, namespace: string | undefined, opts: WatchOptions, onEvent: (event: WatchEvent) => void): WatchHandle {
    const filter = parseFilter(rt, opts.labelSelector, opts.fieldSelector);
    const ns = rt.namespaced ? namespace : undefined;
    const watcher: Watcher = { rtKey: rtKeyOf(rt), rt, namespace: ns, filter, onEvent, stopped: false, startRv: 0 };
    const from = opts.resourceVersion;
    let replayAfter: number;
    if (from === undefined || from === '' || from === '0') {
      replayAfter = this.rv;
      for (const o of this.list(rt, ns, { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector }).items) {
        onEvent({ type: 'ADDED', object: o });
      }
    } else {
      if (!/^\d+$/.test(from)) throw badRequest(`invalid resource version: ${JSON.stringify(from)}`);
      replayAfter = Number(from);
      if (replayAfter < this.compactedRv) throw expired(`too old resource version: ${replayAfter} (${this.compactedRv + 1})`);
    }
    // the array may grow while replaying (a consumer writing from its callback): those changes are replayed too
    for (const c of this.history) if (c.rv > replayAfter) this.deliver(watcher, c);
    watcher.startRv = this.rv;
    this.watchers.add(watcher);
    return {
      stop: () => {
        watcher.stopped = true;
        this.watchers.delete(watcher);
      },
    };
  }

  // ---- internals ----

  private bucket(rt: ResourceType): Map<string, KubeObject> {
    const key = rtKeyOf(rt);
    let b = this.objects.get(key);
    if (!b) this.objects.set(key, (b = new Map()));
    return b;
  }

  /** the object to store: identity and server-owned fields from `current`, the rest from `incoming` */
  private merge(rt: ResourceType, current: KubeObject, incoming: KubeObject, opts: UpdateOptions, inProcess: boolean): KubeObject {
    const hasStatus = rt.subresources?.includes('status') ?? false;
    let next: KubeObject;
    if (opts.subresource === 'status') {
      next = structuredClone(current);
      if (incoming.status === undefined) delete next.status;
      else next.status = incoming.status;
    } else {
      next = incoming;
      next.metadata ??= {};
      if (hasStatus && !inProcess) {
        if (current.status === undefined) delete next.status;
        else next.status = structuredClone(current.status);
      }
      if (!inProcess) {
        // clients cannot start or move a graceful deletion through an update
        for (const k of ['deletionTimestamp', 'deletionGracePeriodSeconds'] as const) {
          if (current.metadata[k] === undefined) delete next.metadata[k];
          else (next.metadata as Record<string, unknown>)[k] = current.metadata[k];
        }
      }
    }
    next.apiVersion = groupVersion(rt);
    next.kind = rt.kind;
    next.metadata.name = current.metadata.name;
    if (current.metadata.namespace !== undefined) next.metadata.namespace = current.metadata.namespace;
    else delete next.metadata.namespace;
    next.metadata.uid = current.metadata.uid;
    next.metadata.creationTimestamp = current.metadata.creationTimestamp;
    next.metadata.resourceVersion = current.metadata.resourceVersion;
    omitEmptyMetadata(next);
    return next;
  }

  private write(rt: ResourceType, current: KubeObject, next: KubeObject): KubeObject {
    // a write that changes nothing keeps its resourceVersion and emits nothing, as on the real server
    if (deepEqual(current, next)) return structuredClone(current);
    next.metadata.resourceVersion = String(++this.rv);
    const ns = current.metadata.namespace;
    this.bucket(rt).set(objKeyOf(ns, current.metadata.name!), next);
    this.record({ rv: this.rv, type: 'MODIFIED', rtKey: rtKeyOf(rt), namespace: ns, object: next, previous: current });
    return structuredClone(next);
  }

  private record(change: Change): void {
    this.history.push(change);
    while (this.history.length > this.historyLimit) this.compactedRv = this.history.shift()!.rv;
    // a consumer that writes from inside its callback must not make others see its change before this one
    this.undelivered.push(change);
    if (this.delivering) return;
    this.delivering = true;
    try {
      for (let c = this.undelivered.shift(); c; c = this.undelivered.shift()) {
        for (const w of [...this.watchers]) {
          if (w.stopped || c.rv <= w.startRv) continue;
          try {
            this.deliver(w, c);
          } catch (e) {
            // a failing consumer must not break the write or the other watchers
            process.stderr.write(`devcluster store: watch consumer failed: ${(e as Error).stack ?? e}\n`);
          }
        }
      }
    } finally {
      this.delivering = false;
    }
  }

  private deliver(w: Watcher, c: Change): void {
    if (c.rtKey !== w.rtKey) return;
    if (w.namespace !== undefined && c.namespace !== w.namespace) return;
    const now = matchesFilter(w.rt, w.filter, c.object);
    if (c.type !== 'MODIFIED' || !c.previous) {
      if (now) w.onEvent({ type: c.type, object: structuredClone(c.object) });
      return;
    }
    const before = matchesFilter(w.rt, w.filter, c.previous);
    if (now && before) w.onEvent({ type: 'MODIFIED', object: structuredClone(c.object) });
    else if (now) w.onEvent({ type: 'ADDED', object: structuredClone(c.object) });
    else if (before) {
      // the last state that matched, at the resourceVersion of the change (as the watch cache does)
      const last = structuredClone(c.previous);
      last.metadata.resourceVersion = String(c.rv);
      w.onEvent({ type: 'DELETED', object: last });
    }
  }
}

/** `prefix` and five random characters, as names.SimpleNameGenerator makes them */
export function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return prefix.slice(0, MAX_GENERATE_NAME_PREFIX) + suffix;
}
