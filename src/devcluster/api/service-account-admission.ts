// The ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount) on pod create: the pod's
// ServiceAccount must exist; unless the pod or its ServiceAccount opts out, every container and init
// container mounts a projected `kube-api-access-*` volume (a bound token, the cluster CA, the namespace) at
// /var/run/secrets/kubernetes.io/serviceaccount; the ServiceAccount's imagePullSecrets become the pod's.
import type { KubeObject, ObjectStore } from '../types.js';
import { ApiError } from './errors.js';
import { resourceByKind } from './resources.js';
import { generateName } from './store.js';

export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
/** serviceaccount.WarnOnlyBoundTokenExpirationSeconds: one hour and seven seconds */
export const PROJECTED_TOKEN_EXPIRATION_SECONDS = 3607;

/** TokenVolumeSource(): what the plugin writes, defaults included, as a real server stores it */
export function tokenVolumeSource(): Record<string, unknown> {
  return {
    defaultMode: 420,
    sources: [
      { serviceAccountToken: { expirationSeconds: PROJECTED_TOKEN_EXPIRATION_SECONDS, path: 'token' } },
      { configMap: { name: ROOT_CA_CONFIGMAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  };
}

/** the pod's preference wins, then the ServiceAccount's, else true */
function shouldAutomount(sa: KubeObject, spec: any): boolean {
  if (typeof spec.automountServiceAccountToken === 'boolean') return spec.automountServiceAccountToken;
  if (typeof sa.automountServiceAccountToken === 'boolean') return sa.automountServiceAccountToken;
  return true;
}

function forbiddenPod(pod: KubeObject, why: string): ApiError {
  const name = pod.metadata.name;
  const subject = name ? `pods "${name}"` : 'pods';
  const details: Record<string, string> = { kind: 'pods' };
  if (name) details.name = name;
  return new ApiError(403, 'Forbidden', `${subject} is forbidden: ${why}`, details);
}

/** mutates the pod as the plugin's Admit does on create; throws 403 when its ServiceAccount does not exist */
export function admitPodServiceAccount(store: ObjectStore, namespace: string, pod: KubeObject): void {
  // mirror pods (static pods of a kubelet) are left alone; the dev cluster's node makes none, but a client may send one
  if (pod.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) return;
  const spec = (pod.spec ??= {});
  if (!spec.serviceAccountName) spec.serviceAccountName = 'default';
  spec.serviceAccount ??= spec.serviceAccountName;
  const saName: string = spec.serviceAccountName;
  const sa = store.tryGet(resourceByKind('ServiceAccount'), namespace, saName);
  if (!sa) throw forbiddenPod(pod, `error looking up service account ${namespace}/${saName}: serviceaccount "${saName}" not found`);
  if (shouldAutomount(sa, spec)) mountToken(spec);
  if (!Array.isArray(spec.imagePullSecrets) || spec.imagePullSecrets.length === 0) {
    const fromSa = (sa.imagePullSecrets ?? []).map((s: any) => ({ name: s?.name }));
    if (fromSa.length > 0) spec.imagePullSecrets = fromSa;
  }
}

function mountToken(spec: any): void {
  const volumes: any[] = Array.isArray(spec.volumes) ? spec.volumes : [];
  // a pod that already has a kube-api-access-* volume (a copy of another pod, `kubectl debug --copy-to`) keeps it
  const existing = volumes.find((v) => typeof v?.name === 'string' && v.name.startsWith(TOKEN_VOLUME_PREFIX));
  const volumeName: string = existing?.name ?? generateName(TOKEN_VOLUME_PREFIX);
  let needed = false;
  for (const list of [spec.initContainers, spec.containers]) {
    for (const c of Array.isArray(list) ? list : []) {
      if (!c || typeof c !== 'object') continue;
      const mounts: any[] = Array.isArray(c.volumeMounts) ? c.volumeMounts : [];
      // a container with its own mount at the path keeps it
      if (mounts.some((m) => m?.mountPath === TOKEN_MOUNT_PATH)) continue;
      c.volumeMounts = [...mounts, { name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
      needed = true;
    }
  }
  if (!existing && needed) spec.volumes = [...volumes, { name: volumeName, projected: tokenVolumeSource() }];
}
