// What the real control plane's controllers do for namespaces: the built-in namespaces and the
// `kubernetes` Service at startup, a `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap in
// every namespace (recreated when deleted), and the emptying and removal of a terminating namespace.
import { ApiError } from '../api/errors.js';
import { RESOURCES, resourceByKind } from '../api/resources.js';
import type { KubeObject, ResourceType, WatchHandle } from '../types.js';
import { prepareCreate } from './handlers-crud.js';
import type { ServerContext } from './handlers-context.js';
import { deleteObject } from './handlers-delete.js';
import { watchAllKinds } from './handlers-gc.js';

export const BUILTIN_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

const NS = resourceByKind('Namespace');
const SA = resourceByKind('ServiceAccount');
const CM = resourceByKind('ConfigMap');
const SVC = resourceByKind('Service');

export class NamespaceController {
  private handles: WatchHandle[] = [];
  private readonly pending = new Set<string>();
  private scheduled: NodeJS.Immediate | undefined;

  constructor(
    private readonly ctx: ServerContext,
    private readonly caPem: string | undefined,
  ) {}

  /** the objects a fresh cluster has; idempotent */
  bootstrap(): void {
    for (const name of BUILTIN_NAMESPACES) {
      if (!this.ctx.store.tryGet(NS, undefined, name)) this.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
    if (!this.ctx.store.tryGet(SVC, 'default', 'kubernetes')) {
      this.create(SVC, 'default', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
        spec: { clusterIP: KUBERNETES_SERVICE_IP, ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }] },
      });
    }
    for (const ns of this.ctx.store.list(NS, undefined).items) this.ensureDefaults(ns.metadata.name!);
  }

  start(): void {
    this.handles = watchAllKinds(this.ctx.store, (rt, type, obj) => {
      if (rt.kind === 'Namespace') {
        if (type !== 'DELETED') this.enqueue(obj.metadata.name!);
        return;
      }
      if (type === 'DELETED' && rt.namespaced && obj.metadata.namespace) this.enqueue(obj.metadata.namespace);
    });
  }

  stop(): void {
    for (const h of this.handles) h.stop();
    this.handles = [];
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
  }

  // work runs after the write that triggered it has been answered and delivered to every watcher
  private enqueue(namespace: string): void {
    this.pending.add(namespace);
    this.scheduled ??= setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = undefined;
    const names = [...this.pending];
    this.pending.clear();
    for (const name of names) {
      try {
        this.reconcile(name);
      } catch (e) {
        process.stderr.write(`devcluster namespace controller: ${(e as Error).stack ?? e}\n`);
      }
    }
  }

  private reconcile(name: string): void {
    const ns = this.ctx.store.tryGet(NS, undefined, name);
    if (!ns) return;
    if (ns.metadata.deletionTimestamp || ns.status?.phase === 'Terminating') this.finalize(ns);
    else this.ensureDefaults(name);
  }

  private ensureDefaults(namespace: string): void {
    if (!this.ctx.store.tryGet(SA, namespace, 'default')) {
      this.create(SA, namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } });
    }
    if (!this.ctx.store.tryGet(CM, namespace, ROOT_CA_CONFIGMAP)) {
      this.create(CM, namespace, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: ROOT_CA_CONFIGMAP, namespace, annotations: { 'kubernetes.io/description': ROOT_CA_DESCRIPTION } },
        data: { 'ca.crt': this.caPem ?? '' },
      });
    }
  }

  /** deletes what is left in a terminating namespace; removes the namespace once nothing is left */
  private finalize(ns: KubeObject): void {
    const namespace = ns.metadata.name!;
    let left = 0;
    for (const rt of namespacedKinds()) {
      for (const item of this.ctx.store.list(rt, namespace).items) {
        left++;
        if (rt.kind === 'Pod' && item.metadata.deletionTimestamp) continue;
        try {
          deleteObject(this.ctx, rt, namespace, item.metadata.name!, {});
        } catch (e) {
          if (!(e instanceof ApiError && e.code === 404)) throw e;
        }
      }
    }
    const remaining = left === 0 ? 0 : namespacedKinds().reduce((n, rt) => n + this.ctx.store.list(rt, namespace).items.length, 0);
    if (remaining === 0) {
      try {
        this.ctx.store.remove(NS, undefined, namespace);
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
    }
  }

  private create(rt: ResourceType, namespace: string | undefined, obj: KubeObject): void {
    try {
      this.ctx.store.create(rt, namespace, prepareCreate(this.ctx, rt, namespace, obj));
    } catch (e) {
      // lost a race with a client creating the same object, or the namespace began terminating
      if (!(e instanceof ApiError && (e.code === 409 || e.code === 403 || e.code === 404))) throw e;
    }
  }
}

function namespacedKinds(): ResourceType[] {
  return RESOURCES.filter((rt) => rt.namespaced && rt.verbs.includes('list'));
}
