/**
 * `berth gc`: what a killed berth left behind. Every object berth creates carries the managed-by
 * label and an expiry annotation; once the expiry has passed nobody can still be using the object
 * (the pod's activeDeadlineSeconds ended it at the same moment), so it is deleted.
 */
import { CoordinationV1Api, CoreV1Api, NetworkingV1Api, type KubeConfig } from '@kubernetes/client-node';
import { statusOf, toKubeError } from '../kube/errors.js';
import { ANNOTATION_EXPIRES_AT, LABEL_MANAGED_BY } from './plan.js';

export interface GarbageOptions {
  kc: KubeConfig;
  namespace: string;
  allNamespaces: boolean;
  /** Also objects whose expiry has not passed (still berth's only, by label). */
  includeUnexpired: boolean;
  dryRun: boolean;
  now?: Date;
  /** A kind this identity may not list (403) is passed by and named here; the others are still collected. */
  onSkip?: (resource: string, reason: string) => void;
  /** Only these kinds (GC_KINDS names); default all. */
  kinds?: string[];
}

/** What `berth gc` collects, by the plural name a Role grants `list` on. */
export const GC_KINDS = ['pods', 'configmaps', 'networkpolicies', 'services', 'persistentvolumeclaims', 'leases'] as const;

export interface CollectedObject {
  kind: string;
  namespace: string;
  name: string;
}

interface Listed {
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
}

const SELECTOR = `${LABEL_MANAGED_BY}=berth`;

export async function collectGarbage(opts: GarbageOptions): Promise<CollectedObject[]> {
  const core = opts.kc.makeApiClient(CoreV1Api);
  const net = opts.kc.makeApiClient(NetworkingV1Api);
  const coordination = opts.kc.makeApiClient(CoordinationV1Api);
  const now = (opts.now ?? new Date()).getTime();
  const server = opts.kc.getCurrentCluster()?.server;
  const ns = opts.allNamespaces ? undefined : opts.namespace;

  const list = async (resource: string, fn: () => Promise<{ items: Listed[] }>): Promise<Listed[]> => {
    try {
      return (await fn()).items;
    } catch (err) {
      // The shim's Role lists only what the shim creates; serve's kinds need serve's Role.
      if (statusOf(err).code === 403 && opts.onSkip) {
        opts.onSkip(resource, toKubeError(err, { verb: 'list', resource, namespace: ns, server }).message);
        return [];
      }
      throw toKubeError(err, { verb: 'list', resource, namespace: ns, server });
    }
  };
  const byLabel = { labelSelector: SELECTOR };
  // Pods first: a NetworkPolicy must not disappear while the pod it isolates could still run.
  const kinds: Array<{ kind: string; resource: string; items: () => Promise<Listed[]>; remove: (n: string, name: string) => Promise<unknown> }> = [
    {
      kind: 'Pod',
      resource: 'pods',
      items: () => list('pods', () => (ns ? core.listNamespacedPod({ namespace: ns, ...byLabel }) : core.listPodForAllNamespaces(byLabel))),
      remove: (namespace, name) => core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 }),
    },
    {
      kind: 'ConfigMap',
      resource: 'configmaps',
      items: () => list('configmaps', () => (ns ? core.listNamespacedConfigMap({ namespace: ns, ...byLabel }) : core.listConfigMapForAllNamespaces(byLabel))),
      remove: (namespace, name) => core.deleteNamespacedConfigMap({ namespace, name }),
    },
    {
      kind: 'NetworkPolicy',
      resource: 'networkpolicies.networking.k8s.io',
      items: () => list('networkpolicies.networking.k8s.io', () => (ns ? net.listNamespacedNetworkPolicy({ namespace: ns, ...byLabel }) : net.listNetworkPolicyForAllNamespaces(byLabel))),
      remove: (namespace, name) => net.deleteNamespacedNetworkPolicy({ namespace, name }),
    },
    // berth serve's network aliases, named volumes and its optional lock.
    {
      kind: 'Service',
      resource: 'services',
      items: () => list('services', () => (ns ? core.listNamespacedService({ namespace: ns, ...byLabel }) : core.listServiceForAllNamespaces(byLabel))),
      remove: (namespace, name) => core.deleteNamespacedService({ namespace, name }),
    },
    {
      kind: 'PersistentVolumeClaim',
      resource: 'persistentvolumeclaims',
      items: () => list('persistentvolumeclaims', () => (ns ? core.listNamespacedPersistentVolumeClaim({ namespace: ns, ...byLabel }) : core.listPersistentVolumeClaimForAllNamespaces(byLabel))),
      remove: (namespace, name) => core.deleteNamespacedPersistentVolumeClaim({ namespace, name }),
    },
    {
      kind: 'Lease',
      resource: 'leases.coordination.k8s.io',
      items: () => list('leases.coordination.k8s.io', () => (ns ? coordination.listNamespacedLease({ namespace: ns, ...byLabel }) : coordination.listLeaseForAllNamespaces(byLabel))),
      remove: (namespace, name) => coordination.deleteNamespacedLease({ namespace, name }),
    },
  ];

  const wanted = new Set(opts.kinds ?? GC_KINDS);
  const removed: CollectedObject[] = [];
  for (const k of kinds.filter((k) => wanted.has(k.resource.split('.')[0]))) {
    for (const item of await k.items()) {
      const name = item.metadata?.name;
      const namespace = item.metadata?.namespace ?? opts.namespace;
      if (!name || !(opts.includeUnexpired || isExpired(item, now))) continue;
      if (!opts.dryRun) {
        try {
          await k.remove(namespace, name);
        } catch (err) {
          // Someone (the shim itself, finishing late) removed it first: the goal is reached.
          if (statusOf(err).code !== 404) throw toKubeError(err, { verb: 'delete', resource: k.resource, namespace, name, server });
        }
      }
      removed.push({ kind: k.kind, namespace, name });
    }
  }
  return removed;
}

/** An object without a readable expiry is kept unless asked for: berth cannot tell it is unused. */
export function isExpired(item: Listed, now: number): boolean {
  const at = item.metadata?.annotations?.[ANNOTATION_EXPIRES_AT];
  if (!at) return false;
  const t = Date.parse(at);
  return Number.isFinite(t) && t <= now;
}
