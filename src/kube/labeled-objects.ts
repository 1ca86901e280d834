/**
 * berth's objects found by label, in one namespace or in all: what `berth gc` lists and deletes.
 * Failures come back as the server gave them (runtime/gc.ts decides what a 403 or a 404 means);
 * transient ones are retried first, as every call berth makes (retry.ts).
 */
import { CoordinationV1Api, CoreV1Api, NetworkingV1Api, type KubeConfig } from './client-node.js';
import { withRetry } from './retry.js';

/** The kinds berth creates, by the plural name a Role grants `list` on. */
export const LABELED_KINDS = ['pods', 'configmaps', 'networkpolicies', 'services', 'persistentvolumeclaims', 'leases'] as const;
export type LabeledKind = (typeof LABELED_KINDS)[number];

export interface ListedObject {
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
}

export interface LabeledObjects {
  /** The server's URL, for error sentences. */
  readonly server?: string;
  /** Objects of `kind` matching `labelSelector` in `namespace`, or in every namespace when it is undefined. */
  list(kind: LabeledKind, namespace: string | undefined, labelSelector: string): Promise<ListedObject[]>;
  remove(kind: LabeledKind, namespace: string, name: string): Promise<void>;
}

interface KindCalls {
  inNamespace(namespace: string, labelSelector: string): Promise<{ items: ListedObject[] }>;
  everywhere(labelSelector: string): Promise<{ items: ListedObject[] }>;
  remove(namespace: string, name: string): Promise<unknown>;
}

export function labeledObjects(kc: KubeConfig): LabeledObjects {
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const coordination = kc.makeApiClient(CoordinationV1Api);
  const calls: Record<LabeledKind, KindCalls> = {
    pods: {
      inNamespace: (namespace, labelSelector) => core.listNamespacedPod({ namespace, labelSelector }),
      everywhere: (labelSelector) => core.listPodForAllNamespaces({ labelSelector }),
      remove: (namespace, name) => core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 }),
    },
    configmaps: {
      inNamespace: (namespace, labelSelector) => core.listNamespacedConfigMap({ namespace, labelSelector }),
      everywhere: (labelSelector) => core.listConfigMapForAllNamespaces({ labelSelector }),
      remove: (namespace, name) => core.deleteNamespacedConfigMap({ namespace, name }),
    },
    networkpolicies: {
      inNamespace: (namespace, labelSelector) => net.listNamespacedNetworkPolicy({ namespace, labelSelector }),
      everywhere: (labelSelector) => net.listNetworkPolicyForAllNamespaces({ labelSelector }),
      remove: (namespace, name) => net.deleteNamespacedNetworkPolicy({ namespace, name }),
    },
    services: {
      inNamespace: (namespace, labelSelector) => core.listNamespacedService({ namespace, labelSelector }),
      everywhere: (labelSelector) => core.listServiceForAllNamespaces({ labelSelector }),
      remove: (namespace, name) => core.deleteNamespacedService({ namespace, name }),
    },
    persistentvolumeclaims: {
      inNamespace: (namespace, labelSelector) => core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector }),
      everywhere: (labelSelector) => core.listPersistentVolumeClaimForAllNamespaces({ labelSelector }),
      remove: (namespace, name) => core.deleteNamespacedPersistentVolumeClaim({ namespace, name }),
    },
    leases: {
      inNamespace: (namespace, labelSelector) => coordination.listNamespacedLease({ namespace, labelSelector }),
      everywhere: (labelSelector) => coordination.listLeaseForAllNamespaces({ labelSelector }),
      remove: (namespace, name) => coordination.deleteNamespacedLease({ namespace, name }),
    },
  };
  return {
    server: kc.getCurrentCluster()?.server,
    list: async (kind, namespace, labelSelector) =>
      (await withRetry(() => (namespace ? calls[kind].inNamespace(namespace, labelSelector) : calls[kind].everywhere(labelSelector)))).items,
    remove: async (kind, namespace, name) => {
      await withRetry(() => calls[kind].remove(namespace, name));
    },
  };
}
