// The garbage collector: when an object goes, its dependents (ownerReferences naming its uid) go too,
// in the background and recursively, unless it was deleted with propagationPolicy Orphan.
import { ApiError } from '../api/errors.js';
import { RESOURCES } from '../api/resources.js';
import type { KubeObject, ObjectStore, OwnerReference, ResourceType, WatchHandle } from '../types.js';
import type { DeletionHooks } from './handlers-context.js';

/** watches every served kind from now on; the handles stop them */
export function watchAllKinds(store: ObjectStore, onEvent: (rt: ResourceType, type: string, obj: KubeObject) => void): WatchHandle[] {
  return RESOURCES.filter((rt) => rt.verbs.includes('watch')).map((rt) =>
    store.watch(rt, undefined, { resourceVersion: store.resourceVersion() }, (e) => onEvent(rt, e.type, e.object)),
  );
}

export class GarbageCollector implements DeletionHooks {
  private readonly orphaned = new Set<string>();
  private readonly queue: { uid: string; namespace: string | undefined }[] = [];
  private handles: WatchHandle[] = [];
  private scheduled: NodeJS.Immediate | undefined;

  constructor(
    private readonly store: ObjectStore,
    /** deletes a dependent as a DELETE with propagationPolicy Background would */
    private readonly deleteDependent: (rt: ResourceType, namespace: string | undefined, name: string) => void,
  ) {}

  start(): void {
    this.handles = watchAllKinds(this.store, (_rt, type, obj) => {
      if (type !== 'DELETED' || !obj.metadata.uid) return;
      this.queue.push({ uid: obj.metadata.uid, namespace: obj.metadata.namespace });
      this.scheduled ??= setImmediate(() => this.drain());
    });
  }

  stop(): void {
    for (const h of this.handles) h.stop();
    this.handles = [];
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
  }

  orphan(uid: string): void {
    this.orphaned.add(uid);
  }

  private drain(): void {
    this.scheduled = undefined;
    for (let item = this.queue.shift(); item; item = this.queue.shift()) {
      try {
        this.collect(item.uid, item.namespace);
      } catch (e) {
        process.stderr.write(`devcluster garbage collector: ${(e as Error).stack ?? e}\n`);
      }
    }
  }

  private collect(ownerUid: string, ownerNamespace: string | undefined): void {
    const orphan = this.orphaned.delete(ownerUid);
    for (const rt of RESOURCES) {
      if (!rt.verbs.includes('list')) continue;
      // a namespaced owner has dependents only in its namespace; a cluster-scoped one anywhere
      const namespace = rt.namespaced ? ownerNamespace : undefined;
      if (ownerNamespace !== undefined && !rt.namespaced) continue;
      for (const dep of this.store.list(rt, namespace).items) {
        const refs = dep.metadata.ownerReferences ?? [];
        if (!refs.some((r) => r.uid === ownerUid)) continue;
        const others = refs.filter((r) => r.uid !== ownerUid);
        if (orphan || others.some((r) => this.ownerExists(r, dep.metadata.namespace))) {
          this.dropReference(rt, dep, ownerUid);
        } else {
          this.tolerateGone(() => this.deleteDependent(rt, dep.metadata.namespace, dep.metadata.name!));
        }
      }
    }
  }

  private ownerExists(ref: OwnerReference, namespace: string | undefined): boolean {
    const rt = RESOURCES.find((r) => r.kind === ref.kind && (r.group ? `${r.group}/${r.version}` : r.version) === ref.apiVersion);
    if (!rt) return false;
    return this.store.tryGet(rt, rt.namespaced ? namespace : undefined, ref.name)?.metadata.uid === ref.uid;
  }

  private dropReference(rt: ResourceType, dep: KubeObject, uid: string): void {
    this.tolerateGone(() =>
      this.store.mutate(rt, dep.metadata.namespace, dep.metadata.name!, (o) => {
        const left = (o.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
        if (left.length) o.metadata.ownerReferences = left;
        else delete o.metadata.ownerReferences;
      }),
    );
  }

  private tolerateGone(f: () => void): void {
    try {
      f();
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
  }
}
