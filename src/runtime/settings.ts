/**
 * The settings of a run started by the docker shim or by `berth fn`. kustomize and kpt pass no flags
 * to `docker`, so everything the old kustomize proposal put in flags comes from the environment
 * (BERTH_*) or a YAML file (BERTH_CONFIG, else ~/.config/berth/config.yaml). The environment wins over
 * the file. See docs/shim.md. Both faces read them here, apply them to a Workload and connect with them.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import type { ClusterClient } from '../kube/client.js';
import type { KubeCluster } from '../kube/cluster.js';
import { INHERIT_ENV, readInheritedSettings, withInherited } from './inherit-pod.js';
import { loadPodTemplate } from './pod-template.js';
import type { RunCluster } from './run.js';
import { sizeToBytes } from './size.js';
import type { Workload, WorkloadResources } from './workload.js';

export interface RunSettings {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  /** A PodTemplate name in the namespace, or a path to a YAML file (PodTemplate, Pod, or a template). */
  podTemplate?: string;
  startTimeoutSeconds: number;
  /** Objects expire (activeDeadlineSeconds, berth gc) after this. */
  ttlSeconds: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  serviceAccount?: string;
  resources?: WorkloadResources;
  keepFailedPods: boolean;
  helperImage?: string;
  stdinMode: 'auto' | 'attach' | 'file';
  /** Upper bound on the bytes of all mounts of one run. */
  mountLimitBytes?: number;
  verbose: boolean;
  /** Written to the berth.dev/owner label. */
  owner: string;
  /** Pods take the node selector, tolerations and pull secrets of the pod berth runs in (inherit-pod.ts). */
  inheritPodSettings: boolean;
  /** Which file was read, if any (for verbose output). */
  file?: string;
}

export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

export function loadRunSettings(env: NodeJS.ProcessEnv, homeDir = env.HOME ?? os.homedir()): RunSettings {
  const file = env.BERTH_CONFIG || path.join(env.XDG_CONFIG_HOME || path.join(homeDir, '.config'), 'berth', 'config.yaml');
  let doc: Record<string, unknown> = {};
  let used: string | undefined;
  if (existsSync(file)) {
    try {
      doc = (YAML.parse(readFileSync(file, 'utf8')) ?? {}) as Record<string, unknown>;
    } catch (e) {
      throw new SettingsError(`cannot read berth config ${file}: ${(e as Error).message}`);
    }
    if (typeof doc !== 'object' || Array.isArray(doc)) throw new SettingsError(`berth config ${file} must be a YAML mapping`);
    used = file;
  } else if (env.BERTH_CONFIG) {
    throw new SettingsError(`BERTH_CONFIG=${env.BERTH_CONFIG} does not exist`);
  }
  const str = (envName: string, key: string): string | undefined => {
    const v = env[envName];
    if (v) return v;
    const f = doc[key];
    if (f === undefined || f === null) return undefined;
    if (typeof f !== 'string' && typeof f !== 'number' && typeof f !== 'boolean') throw new SettingsError(`${key} in ${file} must be a string`);
    return String(f);
  };
  const map = (envName: string, key: string): Record<string, string> => {
    const out: Record<string, string> = {};
    const f = doc[key];
    if (f && typeof f === 'object' && !Array.isArray(f)) for (const [k, v] of Object.entries(f)) out[k] = String(v);
    else if (f !== undefined) throw new SettingsError(`${key} in ${file} must be a mapping`);
    for (const pair of (env[envName] ?? '').split(',').filter(Boolean)) {
      const eq = pair.indexOf('=');
      out[eq < 0 ? pair : pair.slice(0, eq)] = eq < 0 ? '' : pair.slice(eq + 1);
    }
    return out;
  };
  const bool = (envName: string, key: string): boolean => {
    const v = str(envName, key);
    return v !== undefined && /^(1|true|yes|on)$/i.test(v);
  };

  const resourcesDoc = (doc.resources ?? {}) as Record<string, unknown>;
  const memory = env.BERTH_MEMORY || (resourcesDoc.memory !== undefined ? String(resourcesDoc.memory) : undefined);
  const cpus = env.BERTH_CPUS || (resourcesDoc.cpus !== undefined ? String(resourcesDoc.cpus) : undefined);
  const stdinMode = str('BERTH_STDIN_MODE', 'stdinMode') ?? 'auto';
  if (stdinMode !== 'auto' && stdinMode !== 'attach' && stdinMode !== 'file')
    throw new SettingsError(`stdinMode must be auto, attach or file, not ${stdinMode}`);
  const mountLimit = str('BERTH_MOUNT_LIMIT', 'mountLimit');

  const config: RunSettings = {
    kubeconfig: str('BERTH_KUBECONFIG', 'kubeconfig'),
    context: str('BERTH_CONTEXT', 'context'),
    namespace: str('BERTH_NAMESPACE', 'namespace'),
    podTemplate: str('BERTH_POD_TEMPLATE', 'podTemplate'),
    startTimeoutSeconds: parseDuration(str('BERTH_START_TIMEOUT', 'startTimeout') ?? '60s', 'startTimeout'),
    ttlSeconds: parseDuration(str('BERTH_TTL', 'ttl') ?? '1h', 'ttl'),
    labels: map('BERTH_LABELS', 'labels'),
    annotations: map('BERTH_ANNOTATIONS', 'annotations'),
    serviceAccount: str('BERTH_SERVICE_ACCOUNT', 'serviceAccount'),
    keepFailedPods: bool('BERTH_KEEP_FAILED_PODS', 'keepFailedPods'),
    helperImage: str('BERTH_HELPER_IMAGE', 'helperImage'),
    inheritPodSettings: bool(INHERIT_ENV, 'inheritPodSettings'),
    stdinMode,
    verbose: bool('BERTH_VERBOSE', 'verbose'),
    owner:
      str('BERTH_OWNER', 'owner') ??
      `shim-${os
        .hostname()
        .toLowerCase()
        .replace(/[^a-z0-9.-]/g, '-')
        .slice(0, 50)}`,
    file: used,
  };
  if (memory || cpus) config.resources = { ...(memory ? { memory } : {}), ...(cpus ? { cpus } : {}) };
  if (mountLimit) config.mountLimitBytes = parseSize(mountLimit);
  return config;
}

/** `60`, `60s`, `2m`, `1h30m` (Go-style durations, as the kustomize proposal's --pod-start-timeout). */
export function parseDuration(text: string, what: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  // ms before m: an alternation takes its first match, and `500ms` is not 500 minutes and an `s`.
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 's' ? n : n / 1000;
    consumed = re.lastIndex;
  }
  if (consumed !== text.length || consumed === 0 || total <= 0) throw new SettingsError(`${what} "${text}" is not a duration (examples: 60s, 2m, 1h)`);
  return Math.ceil(total);
}

function parseSize(text: string): number {
  const bytes = sizeToBytes(text);
  if (bytes === undefined) throw new SettingsError(`mountLimit "${text}" is not a size (examples: 64Mi, 1Gi)`);
  return bytes;
}

/**
 * Settings fill what the command line left open; the command line wins. With inheritPodSettings the cluster
 * must be a whole KubeCluster: berth reads its own pod through it.
 */
export async function applySettings(
  w: Workload,
  settings: RunSettings,
  cluster: Pick<KubeCluster, 'readPodTemplate'> & Partial<Pick<KubeCluster, 'kc' | 'namespace'>>,
): Promise<Workload> {
  const out: Workload = { ...w, startTimeoutSeconds: w.startTimeoutSeconds ?? settings.startTimeoutSeconds };
  out.labels = { ...settings.labels, ...(w.labels ?? {}) };
  out.annotations = { ...settings.annotations, ...(w.annotations ?? {}) };
  if (!out.serviceAccount && settings.serviceAccount) out.serviceAccount = settings.serviceAccount;
  if (settings.resources) out.resources = { ...settings.resources, ...(w.resources ?? {}) };
  if (settings.podTemplate && !out.podTemplate)
    out.podTemplate = await loadPodTemplate(settings.podTemplate, (name) => cluster.readPodTemplate(name), 'podTemplate / BERTH_POD_TEMPLATE');
  if (settings.inheritPodSettings) {
    const { kc, namespace } = cluster;
    if (!kc || !namespace) throw new SettingsError('inheritPodSettings / BERTH_INHERIT_POD_SETTINGS needs a connection to the cluster');
    out.podTemplate = withInherited(out.podTemplate, await ownPodSettings(kc, namespace));
  }
  return out;
}

// One read per process: the shim agent serves many runs from the same pod, whose settings do not change.
const ownPodCache = new Map<string, ReturnType<typeof readInheritedSettings>>();

async function ownPodSettings(kc: KubeCluster['kc'], namespace: string): ReturnType<typeof readInheritedSettings> {
  let settings = ownPodCache.get(namespace);
  if (!settings) {
    const { ClusterClient } = await import('../kube/client.js');
    settings = readInheritedSettings((ns, name) => new ClusterClient(kc, ns).readPod(name), namespace, process.env);
    settings.catch(() => ownPodCache.delete(namespace));
    ownPodCache.set(namespace, settings);
  }
  return settings;
}

/** What runWorkload needs to know of the settings. */
export function runClusterOf(settings: RunSettings, kube: KubeCluster): RunCluster {
  const { owner, ttlSeconds, helperImage, stdinMode, keepFailedPods, mountLimitBytes } = settings;
  return { kube, owner, ttlSeconds, helperImage, stdinMode, keepFailedPods, mountLimitBytes };
}

/**
 * The cluster the settings name (kubeconfig, context, namespace; BERTH_* over the file), reached through
 * kube/connect.ts as every face reaches it. client-node is loaded only here: `docker version` and
 * `image inspect`, which kpt asks first, stay fast.
 */
export async function connectWithSettings(settings: RunSettings, env: NodeJS.ProcessEnv): Promise<ClusterClient> {
  const { connect } = await import('../kube/connect.js');
  return connect({ kubeconfig: settings.kubeconfig, context: settings.context, namespace: settings.namespace, env }).client;
}
