// The environment of a container as the kubelet builds it: the `kubernetes` Service's variables, then envFrom,
// then env (later names win), valueFrom resolved from the store and the pod, and $(VAR) references expanded.
import type { KubeObject, ObjectStore } from '../types.js';
import { resourceByKind } from '../api/resources.js';
import { ConfigError } from './config-error.js';
import { parseQuantity } from './quantity.js';

export interface EnvContext {
  store: ObjectStore;
  pod: KubeObject;
  nodeName: string;
  hostIP: string;
  podIP?: string;
  /** allocatable cpu cores and memory bytes: the value of resourceFieldRef when no limit is set */
  nodeCpu: number;
  nodeMemory: number;
  /** where pods reach the API server: the source of KUBERNETES_SERVICE_HOST and the rest */
  apiServer?: ApiServerAddress;
}

export interface ApiServerAddress {
  host: string;
  port: number;
}

/**
 * The variables the kubelet gives every container for the `kubernetes` Service in `default` (whatever
 * enableServiceLinks says), with the address where the dev cluster's pods reach the API server.
 */
export function kubernetesServiceEnv(api: ApiServerAddress): [string, string][] {
  const { host, port } = api;
  const url = `tcp://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return [
    ['KUBERNETES_SERVICE_HOST', host],
    ['KUBERNETES_SERVICE_PORT', String(port)],
    ['KUBERNETES_SERVICE_PORT_HTTPS', String(port)],
    ['KUBERNETES_PORT', url],
    [`KUBERNETES_PORT_${port}_TCP`, url],
    [`KUBERNETES_PORT_${port}_TCP_PROTO`, 'tcp'],
    [`KUBERNETES_PORT_${port}_TCP_PORT`, String(port)],
    [`KUBERNETES_PORT_${port}_TCP_ADDR`, host],
  ];
}

export function resolveEnv(container: any, ctx: EnvContext): [string, string][] {
  const ns = ctx.pod.metadata.namespace ?? 'default';
  // the container's own variables override these and may refer to them
  const env = new Map<string, string>(ctx.apiServer ? kubernetesServiceEnv(ctx.apiServer) : []);
  for (const src of container.envFrom ?? []) {
    const prefix: string = src.prefix ?? '';
    if (src.configMapRef) {
      const data = configMapData(ctx.store, ns, src.configMapRef.name, src.configMapRef.optional);
      for (const [k, v] of Object.entries(data ?? {})) env.set(prefix + k, v);
    } else if (src.secretRef) {
      const data = secretData(ctx.store, ns, src.secretRef.name, src.secretRef.optional);
      for (const [k, v] of Object.entries(data ?? {})) env.set(prefix + k, v.toString('utf8'));
    }
  }
  for (const e of container.env ?? []) {
    if (e.valueFrom) {
      const v = valueFrom(e.valueFrom, container, ctx, ns);
      if (v !== undefined) env.set(e.name, v);
    } else {
      env.set(e.name, expandVars(e.value ?? '', env));
    }
  }
  return [...env.entries()];
}

function valueFrom(from: any, container: any, ctx: EnvContext, ns: string): string | undefined {
  if (from.configMapKeyRef) {
    const { name, key, optional } = from.configMapKeyRef;
    const data = configMapData(ctx.store, ns, name, optional);
    if (data === undefined) return undefined;
    if (!(key in data)) {
      if (optional) return undefined;
      throw new ConfigError(`couldn't find key ${key} in ConfigMap ${ns}/${name}`);
    }
    return data[key];
  }
  if (from.secretKeyRef) {
    const { name, key, optional } = from.secretKeyRef;
    const data = secretData(ctx.store, ns, name, optional);
    if (data === undefined) return undefined;
    if (!(key in data)) {
      if (optional) return undefined;
      throw new ConfigError(`couldn't find key ${key} in Secret ${ns}/${name}`);
    }
    return data[key]!.toString('utf8');
  }
  if (from.fieldRef) return fieldValue(from.fieldRef.fieldPath, ctx);
  if (from.resourceFieldRef) return resourceValue(from.resourceFieldRef, container, ctx);
  return undefined;
}

/** the downward API fields a pod may read (env fieldRef and downwardAPI volume items) */
export function fieldValue(path: string, ctx: Pick<EnvContext, 'pod' | 'nodeName' | 'hostIP' | 'podIP'>): string {
  const pod = ctx.pod;
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (m) return (pod.metadata[m[1] as 'labels' | 'annotations'] ?? {})[m[2]!] ?? '';
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'metadata.labels':
      return mapLines(pod.metadata.labels);
    case 'metadata.annotations':
      return mapLines(pod.metadata.annotations);
    case 'spec.nodeName':
      return ctx.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? 'default';
    case 'status.hostIP':
    case 'status.hostIPs':
      return ctx.hostIP;
    case 'status.podIP':
    case 'status.podIPs':
      return ctx.podIP ?? '';
    default:
      throw new ConfigError(`unsupported fieldPath: ${path}`);
  }
}

function mapLines(m: Record<string, string> | undefined): string {
  return Object.entries(m ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join('\n');
}

function resourceValue(ref: any, container: any, ctx: EnvContext): string {
  const target = ref.containerName ? [...(ctx.pod.spec?.containers ?? []), ...(ctx.pod.spec?.initContainers ?? [])].find((c: any) => c.name === ref.containerName) : container;
  const [kind, res] = String(ref.resource).split('.') as [string, string];
  const given = target?.resources?.[kind === 'requests' ? 'requests' : 'limits']?.[res];
  const divisor = ref.divisor !== undefined ? parseQuantity(ref.divisor) : 1;
  let value: number;
  if (given !== undefined) value = parseQuantity(given);
  else if (kind === 'requests') value = 0;
  else value = res === 'cpu' ? ctx.nodeCpu : ctx.nodeMemory;
  return String(Math.ceil(value / (divisor || 1)));
}

/** `$(VAR)` → value of an earlier variable, `$$(VAR)` → `$(VAR)`, unknown references stay as written */
export function expandVars(text: string, env: Map<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (whole, name: string | undefined) => {
    if (whole === '$$') return '$';
    return env.has(name!) ? env.get(name!)! : whole;
  });
}

/** ConfigMap data and binaryData as text; undefined when optional and missing */
export function configMapData(store: ObjectStore, ns: string, name: string, optional?: boolean): Record<string, string> | undefined {
  const cm = store.tryGet(resourceByKind('ConfigMap'), ns, name);
  if (!cm) {
    if (optional) return undefined;
    throw new ConfigError(`configmap "${name}" not found`);
  }
  const out: Record<string, string> = { ...(cm.data ?? {}) };
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) out[k] = Buffer.from(String(v), 'base64').toString('utf8');
  return out;
}

/** Secret data (base64 in the object) as bytes; stringData too in case the store kept it */
export function secretData(store: ObjectStore, ns: string, name: string, optional?: boolean): Record<string, Buffer> | undefined {
  const s = store.tryGet(resourceByKind('Secret'), ns, name);
  if (!s) {
    if (optional) return undefined;
    throw new ConfigError(`secret "${name}" not found`);
  }
  const out: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(s.data ?? {})) out[k] = Buffer.from(String(v), 'base64');
  for (const [k, v] of Object.entries(s.stringData ?? {})) out[k] = Buffer.from(String(v), 'utf8');
  return out;
}

/** configMap binaryData as raw bytes, for volumes */
export function configMapBytes(store: ObjectStore, ns: string, name: string, optional?: boolean): Record<string, Buffer> | undefined {
  const cm = store.tryGet(resourceByKind('ConfigMap'), ns, name);
  if (!cm) {
    if (optional) return undefined;
    throw new ConfigError(`configmap "${name}" not found`);
  }
  const out: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(cm.data ?? {})) out[k] = Buffer.from(String(v), 'utf8');
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) out[k] = Buffer.from(String(v), 'base64');
  return out;
}
