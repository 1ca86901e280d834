/**
 * The pods of a Docker container: its run pod (everything create asked for, laid on the pod template and
 * the operator's settings) and its peek pod (the same image and settings kept alive by `sleep`, to read
 * the files of a container never started). Pure: planning touches no cluster.
 */
import { LABEL_CONTAINER_ID, planSandboxPod, sandboxPodName, type SandboxVolume } from '../runtime/sandbox-plan.js';
import { podSettingsFrom } from '../runtime/sandbox-settings.js';
import type { PodTemplateSource } from '../runtime/workload.js';
import { podUser } from './image-merge.js';
import { LABEL_PEEK } from './peek.js';
import { tryNormalizeImage } from './image-ref.js';
import { addFileFeed } from './file-feed.js';
import { isolationGate } from '../runtime/isolation-gate.js';
import { DOCKER_DEFAULT_CAPABILITIES } from './capabilities.js';
import type { HostConfigPlan, PodDns } from './host-config.js';
import type { ContainerRecord } from './model.js';
import type { Pod } from './cluster.js';
import { platformSelector } from './platform.js';

export interface PodContext {
  namespace: string;
  owner: string;
  ttlSeconds: number;
  /** Operator's `berth.dev/…` settings (from flags); a container's labels of the same key win. */
  podDefaults?: Record<string, string>;
  /** Given back after dropping ALL (the operator's --capabilities); default Docker's set. */
  capabilities?: readonly string[];
}

/** What the engine knows at start beyond the container record. */
export interface RunPodInputs {
  podName: string;
  volumes: SandboxVolume[];
  ports: number[];
  hostAliases: Array<{ ip: string; hostnames: string[] }>;
  hostConfig: HostConfigPlan;
  template: PodTemplateSource | undefined;
  /** The annotation a restarted berth recovers the container from. */
  record: string;
  /** Files copied before start come through the init container of this helper image (file-feed.ts). */
  fileFeed?: { helperImage: string; mounts: Array<{ name: string; mountPath: string; subPath: string }> };
  /** NetworkMode=none: the helper image of the gate that holds the container until its deny-all policy holds. */
  isolationImage?: string;
}

/** Docker's hostname is the short id unless one was given (clients such as the Kafka module read it). */
function dockerHostname(c: ContainerRecord): string {
  return (c.body.Hostname || c.id.slice(0, 12)).toLowerCase();
}

/** The kubelet is given the canonical reference (as it would normalize `busybox` itself). */
function podImage(image: string): string {
  return tryNormalizeImage(image) ?? image;
}

export function runPodName(c: ContainerRecord, generation: number, ctx: PodContext): string {
  return sandboxPodName(c.name, `${c.id.slice(0, 12)}-${generation}`, podSettingsFrom(ctx.podDefaults, c.body.Labels).namePrefix);
}

export function peekPodName(c: ContainerRecord, n: number, ctx: PodContext): string {
  return sandboxPodName(c.name, `${c.id.slice(0, 12)}-peek${n}`, podSettingsFrom(ctx.podDefaults, c.body.Labels).namePrefix);
}

export function planRunPod(c: ContainerRecord, inputs: RunPodInputs, ctx: PodContext): Pod {
  const shortId = c.id.slice(0, 12);
  const hc = inputs.hostConfig;
  const pod = planSandboxPod(
    {
      podName: inputs.podName,
      shortId,
      image: podImage(c.image),
      entrypoint: c.entrypoint,
      cmd: c.cmd,
      env: c.body.Env ?? [],
      workingDir: c.body.WorkingDir,
      user: c.podUser ?? podUser(c.body.User),
      hostname: dockerHostname(c),
      tty: c.body.Tty,
      openStdin: c.body.OpenStdin,
      stdinOnce: c.body.StdinOnce,
      labels: c.body.Labels ?? {},
      ports: inputs.ports,
      volumes: inputs.volumes,
      memory: c.body.HostConfig?.Memory,
      nanoCpus: c.body.HostConfig?.NanoCpus,
      hostAliases: [...inputs.hostAliases, ...hc.extraHosts],
      waitForFiles: !inputs.fileFeed && c.pendingArchives.length + c.copiedArchives.length > 0,
      capabilities: hc.capabilities,
      privileged: hc.privileged,
      readOnlyRootFilesystem: hc.readOnlyRootFilesystem,
      supplementalGroups: hc.supplementalGroups,
      record: inputs.record,
      settings: podSettingsFrom(ctx.podDefaults, c.body.Labels),
      template: inputs.template,
    },
    { namespace: ctx.namespace, owner: ctx.owner, now: new Date(), ttlSeconds: ctx.ttlSeconds },
  );
  if (hc.dns) applyDns(pod, hc.dns);
  if (hc.hostNetwork) pod.spec!.hostNetwork = true;
  if (hc.hostIPC) pod.spec!.hostIPC = true;
  if (c.platform) pod.spec!.nodeSelector = { ...(pod.spec!.nodeSelector ?? {}), ...platformSelector(c.platform) };
  if (inputs.fileFeed) addFileFeed(pod, inputs.fileFeed.mounts, inputs.fileFeed.helperImage);
  if (inputs.isolationImage) pod.spec!.initContainers = [...(pod.spec!.initContainers ?? []), isolationGate(inputs.isolationImage)];
  return pod;
}

/** The create request's DNS settings win over a template's; servers of its own need dnsPolicy None. */
function applyDns(pod: Pod, dns: PodDns): void {
  const spec = pod.spec!;
  spec.dnsConfig = {
    ...(dns.nameservers.length ? { nameservers: dns.nameservers } : {}),
    ...(dns.searches.length ? { searches: dns.searches } : {}),
    ...(dns.options.length ? { options: dns.options } : {}),
  };
  if (dns.nameservers.length) spec.dnsPolicy = 'None';
}

export function planPeekPod(c: ContainerRecord, podName: string, template: PodTemplateSource | undefined, ctx: PodContext): Pod {
  const shortId = c.id.slice(0, 12);
  const pod = planSandboxPod(
    {
      podName,
      shortId,
      image: podImage(c.image),
      entrypoint: ['sleep'],
      cmd: [String(ctx.ttlSeconds)],
      env: c.body.Env ?? [],
      workingDir: c.body.WorkingDir,
      user: podUser(c.body.User),
      // the image's files as the container will have them: its /etc/hostname too
      hostname: dockerHostname(c),
      capabilities: [...(ctx.capabilities ?? DOCKER_DEFAULT_CAPABILITIES)],
      settings: podSettingsFrom(ctx.podDefaults, c.body.Labels),
      template,
    },
    { namespace: ctx.namespace, owner: ctx.owner, now: new Date(), ttlSeconds: ctx.ttlSeconds },
  );
  // Not the container's pod: its Services must not select it, and recovery must not take it for one.
  const labels = pod.metadata!.labels!;
  delete labels[LABEL_CONTAINER_ID];
  labels[LABEL_PEEK] = shortId;
  return pod;
}
