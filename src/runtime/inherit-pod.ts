/**
 * `--inherit-pod-settings` / BERTH_INHERIT_POD_SETTINGS=1: the pods berth starts take the node selector,
 * tolerations and image pull secrets of the pod berth itself runs in. A CI pod's constraints (a node pool,
 * the taint that keeps CI off other nodes, the registry credentials) usually apply to the containers it
 * starts as well. berth reads its own pod through the API, as kubectl would: by name (POD_NAME from the
 * downward API, else HOSTNAME, which Kubernetes sets to the pod's name) in its own namespace (POD_NAMESPACE,
 * else the service account's namespace file). The settings travel as a pod template laid under the user's
 * own template, so the user's choices win.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { V1LocalObjectReference, V1Pod, V1PodSpec, V1Toleration } from '@kubernetes/client-node';
import { SERVICE_ACCOUNT_DIR } from '../kube/service-account-dir.js';
import type { PodTemplateSource } from './workload.js';

export const INHERIT_ENV = 'BERTH_INHERIT_POD_SETTINGS';

export interface InheritedPodSettings {
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
  imagePullSecrets?: V1LocalObjectReference[];
  /** `pod NS/NAME`, for messages and the template's origin. */
  origin: string;
  /** Why something was not inherited (e.g. pull secrets of another namespace), for the operator's log. */
  notes: string[];
}

export class InheritPodError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InheritPodError';
  }
}

/** Whether the environment turns inheritance on (`1`, `true`, `yes`, `on`). */
export function inheritRequested(env: NodeJS.ProcessEnv): boolean {
  return /^(1|true|yes|on)$/i.test(env[INHERIT_ENV] ?? '');
}

/** The pod berth runs in, as the downward API or the kubelet describe it; undefined outside a pod. */
export function ownPodRef(env: NodeJS.ProcessEnv, serviceAccountDir = SERVICE_ACCOUNT_DIR): { namespace: string; name: string } | undefined {
  const name = env.POD_NAME || env.HOSTNAME;
  let namespace = env.POD_NAMESPACE;
  if (!namespace) {
    try {
      namespace = readFileSync(path.join(serviceAccountDir, 'namespace'), 'utf8').trim();
    } catch {
      namespace = undefined;
    }
  }
  return name && namespace ? { namespace, name } : undefined;
}

/**
 * What a pod passes on to the pods berth starts in `targetNamespace`. Pull secrets are names of Secrets in the
 * pod's own namespace: in another namespace they would name nothing (or something else), so they stay behind.
 */
export function inheritedFrom(pod: V1Pod, targetNamespace: string): InheritedPodSettings {
  const spec: Partial<V1PodSpec> = pod.spec ?? {};
  const namespace = pod.metadata?.namespace ?? targetNamespace;
  const out: InheritedPodSettings = { origin: `pod ${namespace}/${pod.metadata?.name ?? '?'}`, notes: [] };
  if (spec.nodeSelector && Object.keys(spec.nodeSelector).length) out.nodeSelector = { ...spec.nodeSelector };
  // The tolerations every pod gets from the DefaultTolerationSeconds admission (not-ready/unreachable for
  // 300 s) are added to berth's pods by the same admission: copying them would only duplicate them.
  const tolerations = (spec.tolerations ?? []).filter((t) => !isDefaultToleration(t));
  if (tolerations.length) out.tolerations = tolerations;
  const secrets = (spec.imagePullSecrets ?? []).filter((s) => s.name);
  if (secrets.length && namespace === targetNamespace) out.imagePullSecrets = secrets;
  else if (secrets.length)
    out.notes.push(
      `image pull secrets ${secrets.map((s) => s.name).join(', ')} of ${out.origin} are not inherited: they are Secrets of namespace ${namespace}, and berth's pods run in ${targetNamespace}`,
    );
  return out;
}

function isDefaultToleration(t: V1Toleration): boolean {
  return (
    (t.key === 'node.kubernetes.io/not-ready' || t.key === 'node.kubernetes.io/unreachable') &&
    t.operator === 'Exists' &&
    t.effect === 'NoExecute' &&
    t.tolerationSeconds === 300
  );
}

/** What an inherited setting adds to a list, without repeating what the template already has. */
function union<T>(first: T[] | undefined, second: T[] | undefined): T[] | undefined {
  const out: T[] = [...(first ?? [])];
  for (const item of second ?? []) if (!out.some((o) => JSON.stringify(o) === JSON.stringify(item))) out.push(item);
  return out.length ? out : undefined;
}

/**
 * The user's template (if any) with the inherited settings underneath: the template's node selector keys win,
 * tolerations and pull secrets are the union of both.
 */
export function withInherited(template: PodTemplateSource | undefined, inherited: InheritedPodSettings): PodTemplateSource {
  const base = template?.template ?? {};
  const spec = { ...((base.spec ?? {}) as Partial<V1PodSpec>) };
  if (inherited.nodeSelector || spec.nodeSelector) spec.nodeSelector = { ...(inherited.nodeSelector ?? {}), ...(spec.nodeSelector ?? {}) };
  const tolerations = union(spec.tolerations, inherited.tolerations);
  if (tolerations) spec.tolerations = tolerations;
  const secrets = union(spec.imagePullSecrets, inherited.imagePullSecrets);
  if (secrets) spec.imagePullSecrets = secrets;
  return {
    template: { ...base, spec: spec as Record<string, unknown> },
    origin: template ? `${template.origin} (with the settings of ${inherited.origin})` : `the settings of ${inherited.origin}`,
  };
}

/**
 * Reads berth's own pod with `readPod` (a GET in its namespace) and returns what it passes on. Fails with a
 * sentence when berth is not in a pod or may not read it: asked for, inheritance must not silently do nothing.
 */
export async function readInheritedSettings(
  readPod: (namespace: string, name: string) => Promise<V1Pod>,
  targetNamespace: string,
  env: NodeJS.ProcessEnv,
  serviceAccountDir = SERVICE_ACCOUNT_DIR,
): Promise<InheritedPodSettings> {
  const ref = ownPodRef(env, serviceAccountDir);
  if (!ref) {
    throw new InheritPodError(
      `--inherit-pod-settings / ${INHERIT_ENV}: berth does not know its pod (set POD_NAME and POD_NAMESPACE from the downward API, or run it in a pod with its service account)`,
    );
  }
  let pod: V1Pod;
  try {
    pod = await readPod(ref.namespace, ref.name);
  } catch (err) {
    throw new InheritPodError(
      `--inherit-pod-settings / ${INHERIT_ENV}: cannot read berth's own pod ${ref.namespace}/${ref.name} (grant get on pods in namespace ${ref.namespace}): ${(err as Error).message}`,
    );
  }
  return inheritedFrom(pod, targetNamespace);
}
