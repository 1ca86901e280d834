/**
 * Workload → Kubernetes objects. Pure: the same inputs give the same objects, so every security
 * default and every docker-run translation is unit-tested without a cluster.
 */
import type { V1ConfigMap, V1Container, V1KeyToPath, V1NetworkPolicy, V1Pod, V1PodSpec, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { planFeedReceiver, type FeedPlan } from './feed-receiver.js';
import { isolationGate } from './isolation-gate.js';
import type { MountEntry, MountSnapshot } from './mounts.js';
import { ANNOTATION_EXPIRES_AT, lockedDownContainer, lockedDownPod, ownershipLabels } from './pod-rules.js';
import type { Workload } from './workload.js';

/** Unique per run: what the deny-all NetworkPolicy selects, and how side objects are found again. */
export const LABEL_RUN = 'berth.dev/run';

export const MAIN_CONTAINER = 'main';
export const FILES_CONTAINER = 'berth-files';
const FILES_VOLUME = 'berth-files';
const FILES_ROOT = '/berth';
/** The last entry of every file-copy archive; outside every subPath the main container mounts. */
export const FILES_COMPLETE_MARKER = '.berth-complete';
/**
 * Where the no-v5 fallback puts the caller's stdin: a file in a folder of the files volume, and that
 * folder is what the main container mounts (a subPath naming a folder works on every kubelet).
 */
export const STDIN_DIR = 'stdin';
export const STDIN_FILE = 'stdin';

/** Up to this many bytes of read-only regular files go in a ConfigMap (the API limit is 1 MiB). */
export const CONFIGMAP_MOUNT_BYTES = 512 * 1024;
export const DEFAULT_HELPER_IMAGE = 'docker.io/library/busybox:1.36';
/** The image of berth's helper containers (file copies, the --network none gate): the one configured, else busybox. */
export const helperImageOf = (configured: string | undefined): string => configured ?? DEFAULT_HELPER_IMAGE;

export interface PlanContext {
  namespace: string;
  /** The berth instance that owns the objects (berth gc only removes its own). */
  owner: string;
  now: Date;
  /** After this the objects are expired: activeDeadlineSeconds ends the pod, berth gc removes the rest. */
  ttlSeconds: number;
  /** Unique per run (lower-case alphanumerics); derived from now + owner when absent. */
  runId?: string;
  /** Contents of w.mounts, from snapshotMounts (kept out of the workload so planning stays pure). */
  mounts?: MountSnapshot[];
  /** Image with `sh`, `tar`, `wget` and `timeout` for the init containers: the one that unpacks larger mounts, and the `--network none` gate. */
  helperImage?: string;
  /**
   * The server cannot end stdin over the attach stream (no v5.channel.k8s.io): the input is shipped
   * as a file and the entrypoint runs under `sh -c 'exec "$@" < file'`. Needs w.command (the image's
   * entrypoint cannot be read from the cluster) and a shell in the image.
   */
  stdinAsFile?: boolean;
}

export interface TarEntry {
  name: string;
  type: 'file' | 'directory' | 'symlink';
  mode: number;
  data?: Buffer;
  linkname?: string;
}

export interface MountData {
  /** The receiver that must be fed a tar of `entries` (plus stdin when stdinAsFile): file-feed.ts sends it. */
  feed?: FeedPlan;
  entries: TarEntry[];
  /** Tar entry name that must carry the caller's stdin (no-v5 fallback). */
  stdinEntry?: string;
}

export interface WorkloadPlan {
  pod: V1Pod;
  configMaps: V1ConfigMap[];
  networkPolicy?: V1NetworkPolicy;
  mountData: MountData;
}

export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanError';
  }
}

export function planWorkload(w: Workload, ctx: PlanContext): WorkloadPlan {
  const runId = ctx.runId ?? deriveRunId(ctx);
  const podName = podNameFor(w, runId);
  const expiresAt = new Date(ctx.now.getTime() + ctx.ttlSeconds * 1000);
  const template = w.podTemplate?.template ?? {};
  const templateSpec = (template.spec ?? {}) as unknown as Partial<V1PodSpec>;

  const ownership: Record<string, string> = { ...ownershipLabels(ctx.owner), [LABEL_RUN]: runId };
  const sideMeta = (name: string) => ({
    name,
    namespace: ctx.namespace,
    labels: { ...ownership },
    annotations: { [ANNOTATION_EXPIRES_AT]: rfc3339(expiresAt) },
  });

  const { labels: userLabels, annotations: labelOverflow } = splitLabels(w.labels ?? {});
  const labels = { ...(template.metadata?.labels ?? {}), ...userLabels, ...ownership };
  const annotations = {
    ...(template.metadata?.annotations ?? {}),
    ...labelOverflow,
    ...(w.annotations ?? {}),
    [ANNOTATION_EXPIRES_AT]: rfc3339(expiresAt),
  };

  const files = planFiles(w, ctx, podName, sideMeta);
  const templateContainer = templateSpec.containers?.[0];
  const main = mainContainer(w, ctx, templateContainer, files.mainMounts);

  const spec: V1PodSpec = {
    ...templateSpec,
    // The template is the user's deliberate choice and the only thing that may loosen the defaults.
    ...lockedDownPod({ deadlineSeconds: w.deadlineSeconds ?? ctx.ttlSeconds, user: w.user, template: templateSpec }),
    volumes: [...(templateSpec.volumes ?? []), ...files.volumes],
    initContainers: [
      ...(templateSpec.initContainers ?? []),
      ...files.initContainers,
      ...(w.network === 'none' ? [isolationGate(helperImageOf(ctx.helperImage))] : []),
    ],
    containers: [main],
  };
  if (spec.volumes?.length === 0) delete spec.volumes;
  if (spec.initContainers?.length === 0) delete spec.initContainers;
  if (w.serviceAccount) spec.serviceAccountName = w.serviceAccount;
  if (w.network === 'host') {
    spec.hostNetwork = true;
    // docker's host network uses the host's resolv.conf; ClusterFirst would not resolve like that.
    spec.dnsPolicy = templateSpec.dnsPolicy ?? 'Default';
  }

  const pod: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: podName, namespace: ctx.namespace, labels, annotations },
    spec,
  };

  const plan: WorkloadPlan = { pod, configMaps: files.configMaps, mountData: files.mountData };
  if (w.network === 'none') {
    plan.networkPolicy = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: sideMeta(`${podName}-deny`),
      // No ingress and no egress rules with both policy types: nothing in, nothing out (DNS included).
      spec: { podSelector: { matchLabels: { [LABEL_RUN]: runId } }, policyTypes: ['Ingress', 'Egress'] },
    };
  }
  return plan;
}

function mainContainer(w: Workload, ctx: PlanContext, base: V1Container | undefined, mounts: V1VolumeMount[]): V1Container {
  const c: V1Container = {
    ...(base ?? {}),
    name: MAIN_CONTAINER,
    image: w.image,
    imagePullPolicy: w.pullPolicy ?? 'IfNotPresent',
    ...lockedDownContainer({ template: base?.securityContext }),
    stdin: w.stdin ?? false,
    stdinOnce: w.stdin ?? false,
    tty: w.tty ?? false,
  };
  if (ctx.stdinAsFile && w.stdin) {
    if (!w.command || w.command.length === 0) {
      throw new PlanError(
        'this cluster cannot end stdin over attach (no v5.channel.k8s.io), so berth must redirect stdin from a file, which needs the entrypoint: pass --entrypoint (the image needs /bin/sh)',
      );
    }
    c.command = ['/bin/sh', '-c', `exec "$@" < ${FILES_ROOT}/${STDIN_FILE}`, 'berth-stdin', ...w.command];
    c.args = w.args ?? [];
    c.stdin = false;
    c.stdinOnce = false;
  } else {
    if (w.command) c.command = w.command;
    if (w.args) c.args = w.args;
  }
  if (w.env?.length)
    c.env = [...(base?.env ?? []).filter((e) => !w.env?.some((x) => x.name === e.name)), ...w.env.map((e) => ({ name: e.name, value: e.value }))];
  if (w.workingDir) c.workingDir = w.workingDir;
  if (w.resources?.memory || w.resources?.cpus) {
    const limits: Record<string, string> = { ...(base?.resources?.limits ?? {}) };
    if (w.resources.memory) limits.memory = w.resources.memory;
    if (w.resources.cpus) limits.cpu = w.resources.cpus;
    c.resources = { ...(base?.resources ?? {}), limits };
  }
  const allMounts = [...(base?.volumeMounts ?? []), ...mounts];
  if (allMounts.length > 0) c.volumeMounts = allMounts;
  return c;
}

interface FilesPlan {
  volumes: V1Volume[];
  initContainers: V1Container[];
  mainMounts: V1VolumeMount[];
  configMaps: V1ConfigMap[];
  mountData: MountData;
}

function planFiles(w: Workload, ctx: PlanContext, podName: string, sideMeta: (name: string) => V1ConfigMap['metadata']): FilesPlan {
  const snapshots = ctx.mounts ?? [];
  if ((w.mounts?.length ?? 0) !== snapshots.length) {
    throw new PlanError(`the workload has ${w.mounts?.length ?? 0} mounts but ${snapshots.length} were read; call snapshotMounts(w.mounts) first`);
  }
  const out: FilesPlan = { volumes: [], initContainers: [], mainMounts: [], configMaps: [], mountData: { entries: [] } };
  const configMapName = `${podName}-files`;
  const binaryData: Record<string, string> = {};
  let configMapBytes = 0;
  const tarred: number[] = [];

  snapshots.forEach((snap, i) => {
    const fitsConfigMap =
      snap.mount.readOnly &&
      configMapBytes + snap.bytes <= CONFIGMAP_MOUNT_BYTES &&
      snap.entries.every((e) => e.type === 'file' || (e.type === 'dir' && hasFileBelow(snap.entries, e.path)));
    if (!fitsConfigMap) {
      tarred.push(i);
      return;
    }
    configMapBytes += snap.bytes;
    const items: V1KeyToPath[] = [];
    snap.entries.forEach((e, j) => {
      if (e.type !== 'file' || !e.data) return;
      const key = `m${i}.f${j}`;
      binaryData[key] = e.data.toString('base64');
      items.push({ key, path: snap.mount.kind === 'file' ? 'file' : e.path, mode: e.mode & 0o777 });
    });
    const volume = `berth-m${i}`;
    out.volumes.push({ name: volume, configMap: { name: configMapName, items } });
    out.mainMounts.push({
      name: volume,
      mountPath: snap.mount.target,
      readOnly: true,
      ...(snap.mount.kind === 'file' ? { subPath: 'file' } : {}),
    });
  });
  if (Object.keys(binaryData).length > 0) {
    out.configMaps.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: sideMeta(configMapName), binaryData });
  }

  const stdinAsFile = Boolean(ctx.stdinAsFile && w.stdin);
  if (tarred.length === 0 && !stdinAsFile) return out;

  for (const i of tarred) {
    const snap = snapshots[i];
    for (const e of snap.entries) out.mountData.entries.push(tarEntry(`m${i}`, e));
    out.mainMounts.push({ name: FILES_VOLUME, mountPath: snap.mount.target, subPath: `m${i}`, readOnly: snap.mount.readOnly });
  }
  if (stdinAsFile) {
    out.mountData.stdinEntry = `${STDIN_DIR}/${STDIN_FILE}`;
    out.mainMounts.push({ name: FILES_VOLUME, mountPath: FILES_ROOT, subPath: STDIN_DIR, readOnly: true });
  }
  out.volumes.push({ name: FILES_VOLUME, emptyDir: {} });
  const feed = { container: FILES_CONTAINER, marker: FILES_COMPLETE_MARKER };
  out.mountData.feed = feed;
  out.initContainers.push(
    planFeedReceiver({
      ...feed,
      image: helperImageOf(ctx.helperImage),
      dir: FILES_ROOT,
      carries: 'file copy',
      runAs: { user: w.user },
      volumeMounts: [{ name: FILES_VOLUME, mountPath: FILES_ROOT }],
    }),
  );
  return out;
}

function hasFileBelow(entries: MountEntry[], dir: string): boolean {
  const prefix = dir === '' ? '' : `${dir}/`;
  return entries.some((e) => e.type === 'file' && e.path.startsWith(prefix));
}

function tarEntry(prefix: string, e: MountEntry): TarEntry {
  const name = e.path === '' ? prefix : `${prefix}/${e.path}`;
  if (e.type === 'dir') return { name, type: 'directory', mode: e.mode };
  if (e.type === 'symlink') return { name, type: 'symlink', mode: 0o777, linkname: e.linkTarget ?? '' };
  return { name, type: 'file', mode: e.mode, data: e.data ?? Buffer.alloc(0) };
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** docker labels whose keys Kubernetes takes neither as label nor as annotation keys (`été`, `a/b/c`), as JSON */
export const ANNOTATION_DOCKER_LABELS = 'berth.dev/docker-labels';

/**
 * docker labels are free-form: valid Kubernetes labels stay labels, a valid key with another value becomes an
 * annotation, and the labels whose keys no pod could carry go together into one annotation (they failed the
 * pod's creation at start before).
 */
export function splitLabels(input: Record<string, string>): { labels: Record<string, string>; annotations: Record<string, string> } {
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  const unkeyable: Record<string, string> = {};
  for (const [k, v] of Object.entries(input)) {
    const prefix = k.includes('/') ? k.slice(0, k.indexOf('/')) : '';
    const validKey = LABEL_KEY.test(k) && prefix.length <= 253;
    if (validKey && LABEL_VALUE.test(v)) labels[k] = v;
    else if (validKey) annotations[k] = v;
    else unkeyable[k] = v;
  }
  if (Object.keys(unkeyable).length) annotations[ANNOTATION_DOCKER_LABELS] = JSON.stringify(unkeyable);
  return { labels, annotations };
}

/** `<name or image>-<runId>`, a valid DNS label (pod names also become hostnames). */
export function podNameFor(w: Workload, runId: string): string {
  const image = w.image.replace(/@.*$/, '').replace(/:[^/:]*$/, '');
  const base = (w.name ?? image.split('/').pop() ?? 'berth')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const room = 63 - runId.length - 1;
  const prefix = base.slice(0, room).replace(/-+$/, '') || 'berth';
  return `${prefix}-${runId}`;
}

function deriveRunId(ctx: PlanContext): string {
  let h = 2166136261;
  for (const ch of `${ctx.owner}/${ctx.now.toISOString()}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return h.toString(36).padStart(7, '0').slice(0, 8);
}

export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
