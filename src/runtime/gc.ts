/**
 * `berth gc`: what a killed berth left behind. Every object berth creates carries the managed-by
 * label and an expiry annotation; once the expiry has passed nobody can still be using the object
 * (the pod's activeDeadlineSeconds ended it at the same moment), so it is deleted.
 */
import { statusOf, toKubeError } from '../kube/errors.js';
import { LABELED_KINDS, type LabeledKind, type LabeledObjects, type ListedObject } from '../kube/labeled-objects.js';
import { ANNOTATION_EXPIRES_AT, LABEL_MANAGED_BY } from './pod-rules.js';

export interface GarbageOptions {
  /** Where berth's objects are found (kube/labeled-objects.ts; tests fake it). */
  objects: LabeledObjects;
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
  /** Narrows berth's objects further (e.g. one face's, by its component label): added to the managed-by selector. */
  labelSelector?: string;
}

/** What `berth gc` collects, by the plural name a Role grants `list` on. */
export const GC_KINDS = LABELED_KINDS;

export interface CollectedObject {
  kind: string;
  namespace: string;
  name: string;
}

const SELECTOR = `${LABEL_MANAGED_BY}=berth`;

/**
 * Pods first: a NetworkPolicy must not disappear while the pod it isolates could still run. Then
 * berth serve's network aliases, named volumes and its optional lock. `resource` is the name RBAC
 * and error sentences use.
 */
const COLLECTED: Array<{ kind: string; plural: LabeledKind; resource: string; madeBy: string }> = [
  { kind: 'Pod', plural: 'pods', resource: 'pods', madeBy: 'every face; each of their Roles in deploy/rbac lists them' },
  {
    kind: 'ConfigMap',
    plural: 'configmaps',
    resource: 'configmaps',
    madeBy: 'the docker shim and berth fn (mounted files); deploy/rbac/shim-role.yaml lists them',
  },
  {
    kind: 'NetworkPolicy',
    plural: 'networkpolicies',
    resource: 'networkpolicies.networking.k8s.io',
    madeBy: 'the docker shim and berth serve (--network none); shim-role.yaml and serve-role.yaml list them',
  },
  { kind: 'Service', plural: 'services', resource: 'services', madeBy: 'berth serve (network aliases); deploy/rbac/serve-role.yaml lists them' },
  {
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
    resource: 'persistentvolumeclaims',
    madeBy: 'berth serve (volumes) and berth task (caches); serve-role.yaml and task-role.yaml list them',
  },
  { kind: 'Lease', plural: 'leases', resource: 'leases.coordination.k8s.io', madeBy: 'berth serve --lock; deploy/rbac/serve-role.yaml lists them' },
];

export async function collectGarbage(opts: GarbageOptions): Promise<CollectedObject[]> {
  const { objects } = opts;
  const now = (opts.now ?? new Date()).getTime();
  const server = objects.server;
  const ns = opts.allNamespaces ? undefined : opts.namespace;

  const list = async ({ plural, resource, madeBy }: (typeof COLLECTED)[number]): Promise<ListedObject[]> => {
    try {
      return await objects.list(plural, ns, opts.labelSelector ? `${SELECTOR},${opts.labelSelector}` : SELECTOR);
    } catch (err) {
      // Each face's Role lists what that face creates: a kind of another face is named with the Role that has it.
      if (statusOf(err).code === 403 && opts.onSkip) {
        const where = ns ? ` in namespace ${ns}` : ' in every namespace (-A needs a ClusterRole with list and delete on them, bound by a ClusterRoleBinding)';
        const said = statusOf(err).status?.message;
        opts.onSkip(
          resource,
          `forbidden: this identity cannot list ${resource}${where}; they are made by ${madeBy}${said ? ` (the server said: ${said})` : ''}`,
        );
        return [];
      }
      throw toKubeError(err, { verb: 'list', resource, namespace: ns, server });
    }
  };

  const wanted = new Set<string>(opts.kinds ?? GC_KINDS);
  const removed: CollectedObject[] = [];
  for (const k of COLLECTED.filter((k) => wanted.has(k.plural))) {
    for (const item of await list(k)) {
      const name = item.metadata?.name;
      const namespace = item.metadata?.namespace ?? opts.namespace;
      if (!name || !(opts.includeUnexpired || isExpired(item, now))) continue;
      if (!opts.dryRun) {
        try {
          await objects.remove(k.plural, namespace, name);
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
export function isExpired(item: ListedObject, now: number): boolean {
  const at = item.metadata?.annotations?.[ANNOTATION_EXPIRES_AT];
  if (!at) return false;
  const t = Date.parse(at);
  return Number.isFinite(t) && t <= now;
}
