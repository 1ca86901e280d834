// Server-side defaulting, as the real API server's SetDefaults_* functions and the default admission
// plugins (DefaultTolerationSeconds, ServiceAccount) fill in an object before it is stored.
import { defaultRbac } from './rbac-rules.js';
import { externallyAccessible } from './node-ports.js';
import type { KubeObject, ResourceType } from '../types.js';

export interface DefaultsContext {
  /** a free address from the service range, for a Service that does not bring its own */
  allocateClusterIp: () => string;
}

/** Always for `:latest` or an untagged image (a digest counts as a tag), else IfNotPresent */
export function defaultPullPolicy(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  if (colon < 0) return 'Always';
  return lastSegment.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: any): void {
  if (!c || typeof c !== 'object') return;
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  if (typeof c.image === 'string' && c.image) c.imagePullPolicy ??= defaultPullPolicy(c.image);
  c.resources ??= {};
  // requests default to limits (SetDefaults_Pod)
  const limits = c.resources.limits as Record<string, unknown> | undefined;
  if (limits && Object.keys(limits).length) {
    c.resources.requests ??= {};
    for (const [k, v] of Object.entries(limits)) c.resources.requests[k] ??= v;
  }
  for (const p of c.ports ?? []) if (p && typeof p === 'object') p.protocol ??= 'TCP';
  for (const e of c.env ?? []) {
    if (e?.valueFrom?.fieldRef) e.valueFrom.fieldRef.apiVersion ??= 'v1';
  }
}

/** the QoS class the real server computes: BestEffort, Guaranteed or Burstable */
export function qosClass(spec: any): string {
  const containers: any[] = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const req = c?.resources?.requests ?? {};
    const lim = c?.resources?.limits ?? {};
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const r of ['cpu', 'memory']) {
      if (lim[r] === undefined || (req[r] !== undefined && String(req[r]) !== String(lim[r]))) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const NOT_READY_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

export function defaultPodSpec(spec: any): void {
  if (!spec || typeof spec !== 'object') return;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  spec.schedulerName ??= 'default-scheduler';
  spec.enableServiceLinks ??= true;
  spec.serviceAccountName ??= spec.serviceAccount ?? 'default';
  spec.serviceAccount ??= spec.serviceAccountName;
  spec.priority ??= 0;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  for (const c of spec.containers ?? []) defaultContainer(c);
  for (const c of spec.initContainers ?? []) defaultContainer(c);
  for (const v of spec.volumes ?? []) {
    if (v?.configMap) v.configMap.defaultMode ??= 420;
    if (v?.secret) v.secret.defaultMode ??= 420;
    if (v?.projected && typeof v.projected === 'object') {
      v.projected.defaultMode ??= 420;
      for (const src of Array.isArray(v.projected.sources) ? v.projected.sources : []) {
        // SetDefaults_ServiceAccountTokenProjection: an hour
        if (src?.serviceAccountToken && typeof src.serviceAccountToken === 'object') src.serviceAccountToken.expirationSeconds ??= 3600;
      }
    }
  }
}

function defaultPod(pod: KubeObject): void {
  pod.spec ??= {};
  defaultPodSpec(pod.spec);
  // DefaultTolerationSeconds admission
  const tolerations: any[] = (pod.spec.tolerations ??= []);
  for (const t of NOT_READY_TOLERATIONS) {
    if (!tolerations.some((x) => x?.key === t.key && (x.effect === t.effect || !x.effect))) tolerations.push({ ...t });
  }
}

function defaultService(svc: KubeObject, ctx: DefaultsContext): void {
  const spec = (svc.spec ??= {});
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  if (spec.type !== 'ExternalName') {
    if (!spec.clusterIP) spec.clusterIP = spec.clusterIPs?.[0] ?? ctx.allocateClusterIp();
    spec.clusterIPs ??= [spec.clusterIP];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
    spec.internalTrafficPolicy ??= 'Cluster';
  }
  for (const p of spec.ports ?? []) {
    if (!p || typeof p !== 'object') continue;
    p.protocol ??= 'TCP';
    p.targetPort ??= p.port;
  }
  if (externallyAccessible(spec) && !spec.externalTrafficPolicy) spec.externalTrafficPolicy = 'Cluster';
  if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
  svc.status ??= { loadBalancer: {} };
}

/** fills in what the real server fills in on create; mutates obj */
export function applyCreateDefaults(rt: ResourceType, obj: KubeObject, ctx: DefaultsContext): void {
  defaultRbac(obj);
  switch (rt.kind) {
    case 'Pod':
      defaultPod(obj);
      obj.status = { phase: 'Pending', qosClass: qosClass(obj.spec) };
      break;
    case 'Service':
      defaultService(obj, ctx);
      break;
    case 'Namespace':
      obj.spec = { finalizers: ['kubernetes'], ...(obj.spec ?? {}) };
      obj.status = { phase: 'Active' };
      if (obj.metadata.name) obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': obj.metadata.name };
      break;
    case 'Secret':
      obj.type ??= 'Opaque';
      break;
    case 'PodTemplate':
      if (obj.template?.spec) defaultPodSpec(obj.template.spec);
      break;
    case 'PersistentVolumeClaim':
      obj.spec = { volumeMode: 'Filesystem', ...(obj.spec ?? {}) };
      obj.status = { phase: 'Pending' };
      // the StorageObjectInUseProtection admission plugin: a claim a pod uses is not removed under it
      obj.metadata.finalizers = [...new Set([...(obj.metadata.finalizers ?? []), 'kubernetes.io/pvc-protection'])];
      break;
  }
}

/** defaults on update: the same fill-ins, with allocated values carried over from the stored object */
export function applyUpdateDefaults(rt: ResourceType, old: KubeObject, obj: KubeObject): void {
  defaultRbac(obj);
  switch (rt.kind) {
    case 'Pod':
      obj.spec ??= {};
      defaultPodSpec(obj.spec);
      break;
    case 'Service': {
      const spec = (obj.spec ??= {});
      if (!spec.clusterIP && old.spec?.clusterIP) {
        spec.clusterIP = old.spec.clusterIP;
        spec.clusterIPs ??= old.spec.clusterIPs;
      }
      defaultService(obj, { allocateClusterIp: () => old.spec?.clusterIP ?? 'None' });
      break;
    }
    case 'Namespace':
      obj.spec ??= old.spec;
      if (obj.metadata.name) obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': obj.metadata.name };
      break;
    case 'Secret':
      obj.type ??= old.type ?? 'Opaque';
      break;
    case 'PodTemplate':
      if (obj.template?.spec) defaultPodSpec(obj.template.spec);
      break;
  }
}

/** Secrets' stringData is write-only: merged into data (base64) before storing */
export function foldStringData(obj: KubeObject): void {
  if (obj.kind !== 'Secret' || !obj.stringData) return;
  obj.data ??= {};
  for (const [k, v] of Object.entries(obj.stringData as Record<string, string>)) obj.data[k] = Buffer.from(String(v)).toString('base64');
  delete obj.stringData;
}

/** a random free address in 10.96.0.0/16; .0.1 is the kubernetes Service, .0.10 is kept for DNS */
export function allocateClusterIp(used: Set<string>): string {
  for (let attempt = 0; attempt < 100000; attempt++) {
    const n = 2 + Math.floor(Math.random() * (65534 - 2));
    const ip = `10.96.${n >> 8}.${n & 255}`;
    if (ip !== '10.96.0.10' && !used.has(ip)) return ip;
  }
  throw new Error('service IP range 10.96.0.0/16 is full');
}
