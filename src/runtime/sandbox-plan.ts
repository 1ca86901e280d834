/**
 * A Docker-API container → the pod that runs it. Pure, so every translation is unit-tested.
 *
 * Files copied before start: when the container has archives waiting, its entrypoint is wrapped in
 * `sh -c` that waits for berth's marker file; berth unpacks the archives with exec into the running
 * container, then writes the marker, and only then the real process starts (`exec "$@"`). So the
 * files are in place when the process starts, at any path, with the image's own content around them.
 * The wrap needs /bin/sh in the image and the entrypoint given (or none in the image).
 */
import type { V1Container, V1Pod, V1PodSpec, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { rfc3339, splitLabels } from './plan.js';
import { ANNOTATION_EXPIRES_AT, lockedDownContainer, lockedDownPod, ownershipLabels } from './pod-rules.js';
import { layPodTemplate } from './pod-template.js';
import type { PodSettings } from './sandbox-settings.js';
import type { PodTemplateSource } from './workload.js';

export const SANDBOX_CONTAINER = 'main';
/**
 * The kubelet's grace when it ends a Docker container's pod. berth serve gives `docker stop`'s grace itself (the stop
 * signal through exec, then its timeout) and ends the pod only for the kill that follows, as `docker kill` and
 * `rm -f` do: with the 10 s of other pods, each of them waited 10 s more for a process that ignores SIGTERM (a shell
 * as PID 1). The kubelet gives at least 2 s whatever is asked.
 */
export const KILL_GRACE_SECONDS = 1;
export const LABEL_CONTAINER_ID = 'berth.dev/container';
export const ANNOTATION_CONTAINER = 'berth.dev/docker-container';
export const READY_DIR = '/.berth';
export const READY_FILE = `${READY_DIR}/ready`;

export interface SandboxVolume {
  /** PersistentVolumeClaim name, or undefined for an emptyDir (tmpfs). */
  claim?: string;
  /** A folder inside the claim mounted instead of its root (Docker's VolumeOptions.Subpath); the kubelet makes it. */
  subPath?: string;
  target: string;
  readOnly: boolean;
  memory?: boolean;
  /** an emptyDir's size limit (a quantity: `10Mi`) */
  sizeLimit?: string;
}

export interface SandboxSpec {
  podName: string;
  /** 12-hex short id: the Service selector. */
  shortId: string;
  image: string;
  entrypoint?: string[];
  cmd?: string[];
  env?: string[];
  workingDir?: string;
  /** Numeric `uid[:gid]`; '' or undefined = the image's user. */
  user?: string;
  hostname?: string;
  tty?: boolean;
  openStdin?: boolean;
  stdinOnce?: boolean;
  labels?: Record<string, string>;
  ports?: number[];
  volumes?: SandboxVolume[];
  /** bytes */
  memory?: number;
  nanoCpus?: number;
  hostAliases?: Array<{ ip: string; hostnames: string[] }>;
  /** Hold the process until berth has unpacked the queued archives. */
  waitForFiles?: boolean;
  pullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Capabilities given back after dropping ALL (Docker images expect dockerd's defaults). */
  capabilities?: string[];
  /** HostConfig.Privileged on a berth started with --allow-privileged. */
  privileged?: boolean;
  /** HostConfig.ReadonlyRootfs. */
  readOnlyRootFilesystem?: boolean;
  /** HostConfig.GroupAdd (numeric gids). */
  supplementalGroups?: number[];
  /** Serialised container record kept on the pod, so a restarted berth can recover it. */
  record?: string;
  /** Operator's and container's `berth.dev/…` settings; `memory`/`nanoCpus` (HostConfig) still set the limits they name. */
  settings?: PodSettings;
  /** The operator's (`--pod-template`) or the container's (`berth.dev/pod-template`) template, laid under the pod. */
  template?: PodTemplateSource;
  /** The pod's dnsConfig, replacing a template's; servers of its own need dnsPolicy None (Kubernetes requires it). */
  dns?: SandboxDns;
  /** The node's network and IPC namespace (granted only by an operator's flag). */
  hostNetwork?: boolean;
  hostIPC?: boolean;
  /** Node labels the pod needs besides the settings' (a platform's), winning over theirs. */
  nodeSelector?: Record<string, string>;
  /**
   * Init containers, after the template's. One given without a securityContext runs with the main container's
   * as laid on the template: it prepares the main container's files, as its user.
   */
  initContainers?: V1Container[];
  /** Volumes besides `volumes` (an init container's emptyDir), and the main container's mounts of them. */
  extraVolumes?: V1Volume[];
  extraMounts?: V1VolumeMount[];
  /**
   * The label that carries `shortId`: `berth.dev/container`, which Services and recovery select, unless the pod
   * is not the container's own (a pod that only reads its files).
   */
  idLabel?: string;
}

export interface SandboxDns {
  nameservers: string[];
  searches: string[];
  options: Array<{ name: string; value?: string }>;
}

export interface SandboxContext {
  namespace: string;
  owner: string;
  now: Date;
  ttlSeconds: number;
}

export class SandboxPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxPlanError';
  }
}

export function planSandboxPod(s: SandboxSpec, ctx: SandboxContext): V1Pod {
  const expiresAt = rfc3339(new Date(ctx.now.getTime() + ctx.ttlSeconds * 1000));
  const settings = s.settings ?? {};
  const { labels: userLabels, annotations: overflow } = splitLabels({ ...(s.labels ?? {}), ...(settings.labels ?? {}) });
  // berth's own labels and annotations come last: settings cannot take a pod away from its owner.
  delete userLabels[LABEL_CONTAINER_ID];
  const labels = { ...userLabels, ...ownershipLabels(ctx.owner), [s.idLabel ?? LABEL_CONTAINER_ID]: s.shortId };
  const annotations: Record<string, string> = { ...overflow, ...(settings.annotations ?? {}), [ANNOTATION_EXPIRES_AT]: expiresAt };
  if (s.record) annotations[ANNOTATION_CONTAINER] = s.record;

  const user = parseUser(s.user);
  const volumes: V1Volume[] = [];
  const mounts: V1VolumeMount[] = [];
  (s.volumes ?? []).forEach((v, i) => {
    const name = `v${i}`;
    volumes.push(
      v.claim
        ? { name, persistentVolumeClaim: { claimName: v.claim } }
        : { name, emptyDir: { ...(v.memory ? { medium: 'Memory' } : {}), ...(v.sizeLimit ? { sizeLimit: v.sizeLimit } : {}) } },
    );
    mounts.push({ name, mountPath: v.target, readOnly: v.readOnly, ...(v.subPath ? { subPath: v.subPath } : {}) });
  });

  const main: V1Container = {
    name: SANDBOX_CONTAINER,
    image: s.image,
    imagePullPolicy: settings.pullPolicy ?? s.pullPolicy ?? templateMain(s.template)?.imagePullPolicy ?? 'IfNotPresent',
    stdin: Boolean(s.openStdin),
    stdinOnce: Boolean(s.openStdin && s.stdinOnce),
    tty: Boolean(s.tty),
    ...lockedDownContainer({ addCapabilities: s.capabilities, privileged: s.privileged, readOnlyRootFilesystem: s.readOnlyRootFilesystem }),
  };
  if (s.waitForFiles) {
    const argv = [...(s.entrypoint ?? []), ...(s.cmd ?? [])];
    if (argv.length === 0)
      throw new SandboxPlanError(`files were copied into a container of ${s.image} before start, which needs its command: give Cmd or Entrypoint`);
    volumes.push({ name: 'berth-ready', emptyDir: {} });
    mounts.push({ name: 'berth-ready', mountPath: READY_DIR });
    main.command = ['/bin/sh', '-c', `while [ ! -e ${READY_FILE} ]; do sleep 0.05; done; exec "$@"`, 'berth-wait', ...argv];
  } else {
    if (s.entrypoint && s.entrypoint.length > 0) main.command = s.entrypoint;
    if (s.cmd && s.cmd.length > 0) main.args = s.cmd;
  }
  if (s.env?.length) {
    main.env = s.env.map((kv) => {
      const eq = kv.indexOf('=');
      return eq < 0 ? { name: kv, value: '' } : { name: kv.slice(0, eq), value: kv.slice(eq + 1) };
    });
  }
  if (s.workingDir) main.workingDir = s.workingDir;
  if (s.ports?.length) main.ports = [...new Set(s.ports)].map((p) => ({ containerPort: p, protocol: 'TCP' }));
  volumes.push(...(s.extraVolumes ?? []));
  mounts.push(...(s.extraMounts ?? []));
  if (mounts.length) main.volumeMounts = mounts;
  const limits: Record<string, string> = { ...(settings.limits ?? {}) };
  if (s.memory) limits.memory = String(s.memory);
  if (s.nanoCpus) limits.cpu = `${Math.max(1, Math.round(s.nanoCpus / 1e6))}m`;
  const requests: Record<string, string> = { ...(settings.requests ?? {}) };
  if (Object.keys(limits).length || Object.keys(requests).length) {
    main.resources = { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
  }

  const pod: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: s.podName, namespace: ctx.namespace, labels, annotations },
    spec: {
      ...lockedDownPod({ deadlineSeconds: ctx.ttlSeconds, user, supplementalGroups: s.supplementalGroups, graceSeconds: KILL_GRACE_SECONDS }),
      containers: [main],
    },
  };
  if (volumes.length) pod.spec!.volumes = volumes;
  setPodFields(pod.spec!, s, settings);
  return withInitContainers(layPodTemplate(pod, s.template), s.initContainers ?? []);
}

/** Where the pod runs and how it reaches others: node, account, hostname, DNS, the node's namespaces. */
function setPodFields(spec: V1PodSpec, s: SandboxSpec, settings: PodSettings): void {
  if (s.hostAliases?.length) spec.hostAliases = s.hostAliases;
  const nodeSelector = { ...(settings.nodeSelector ?? {}), ...(s.nodeSelector ?? {}) };
  if (Object.keys(nodeSelector).length) spec.nodeSelector = nodeSelector;
  // The pod takes the account's identity (image pull secrets, workload identity); its API token stays unmounted.
  if (settings.serviceAccount) spec.serviceAccountName = settings.serviceAccount;
  if (s.hostname && /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(s.hostname)) spec.hostname = s.hostname;
  if (s.dns) setDns(spec, s.dns);
  if (s.hostNetwork) spec.hostNetwork = true;
  if (s.hostIPC) spec.hostIPC = true;
}

function setDns(spec: V1PodSpec, dns: SandboxDns): void {
  spec.dnsConfig = {
    ...(dns.nameservers.length ? { nameservers: dns.nameservers } : {}),
    ...(dns.searches.length ? { searches: dns.searches } : {}),
    ...(dns.options.length ? { options: dns.options } : {}),
  };
  if (dns.nameservers.length) spec.dnsPolicy = 'None';
}

/** After the template's: an init container without a securityContext of its own takes the laid main container's. */
function withInitContainers(pod: V1Pod, inits: V1Container[]): V1Pod {
  if (!inits.length) return pod;
  const spec = pod.spec!;
  const main = spec.containers[0];
  spec.initContainers = [...(spec.initContainers ?? []), ...inits.map((c) => (c.securityContext ? c : { ...c, securityContext: main.securityContext }))];
  return pod;
}

function templateMain(t: PodTemplateSource | undefined): V1Container | undefined {
  return (t?.template.spec as { containers?: V1Container[] } | undefined)?.containers?.[0];
}

function parseUser(user: string | undefined): { uid: number; gid?: number } | undefined {
  if (!user) return undefined;
  const m = /^(\d+)(?::(\d+))?$/.exec(user);
  if (!m) throw new SandboxPlanError(`user "${user}" must be numeric (uid or uid:gid): a pod cannot look names up in the image's /etc/passwd`);
  return { uid: Number(m[1]), ...(m[2] !== undefined ? { gid: Number(m[2]) } : {}) };
}

/** A valid pod name from a Docker name and the short id, after the operator's or container's prefix (at most 20 characters). */
export function sandboxPodName(name: string, shortId: string, prefix = ''): string {
  const head = prefix ? `${prefix.replace(/-+$/, '')}-` : '';
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40 - Math.min(head.length, 20))
    .replace(/-+$/, '');
  return `${head}${base || 'c'}-${shortId}`;
}
