/**
 * The pods of a Docker container: its run pod (everything create planned, create-plan.ts, laid on the pod
 * template and the operator's settings in one go) and its peek pod (the same image and settings kept alive by `sleep`, to read
 * the files of a container never started). Pure: planning touches no cluster.
 */
import { planSandboxPod, sandboxPodName, type SandboxVolume } from '../../runtime/sandbox-plan.js';
import type { PodTemplateSource } from '../../runtime/workload.js';
import { podUser } from '../images/image-merge.js';
import { LABEL_PEEK } from './peek.js';
import { tryNormalizeImage } from '../images/image-ref.js';
import { fileFeedParts } from './file-feed.js';
import { isolationGate } from '../../runtime/isolation-gate.js';
import { DOCKER_DEFAULT_CAPABILITIES } from './capabilities.js';
import type { ContainerRecord } from '../model.js';
import type { Pod } from '../cluster.js';
import { platformSelector } from './platform.js';

export interface PodContext {
  namespace: string;
  owner: string;
  ttlSeconds: number;
  /** Given back after dropping ALL (the operator's --capabilities); default Docker's set. */
  capabilities?: readonly string[];
}

/** What the engine knows at start beyond the container record and its plan. */
export interface RunPodInputs {
  podName: string;
  /** The plan's volumes with their claims, and the anonymous ones. */
  volumes: SandboxVolume[];
  ports: number[];
  hostAliases: Array<{ ip: string; hostnames: string[] }>;
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

export function runPodName(c: ContainerRecord, generation: number): string {
  return sandboxPodName(c.name, `${c.id.slice(0, 12)}-${generation}`, c.plan.settings.namePrefix);
}

export function peekPodName(c: ContainerRecord, n: number): string {
  return sandboxPodName(c.name, `${c.id.slice(0, 12)}-peek${n}`, c.plan.settings.namePrefix);
}

/** The container's pod of this run, laid from its plan in one go. */
export function planRunPod(c: ContainerRecord, inputs: RunPodInputs, ctx: PodContext): Pod {
  const hc = c.plan.hostConfig;
  const feed = inputs.fileFeed && fileFeedParts(inputs.fileFeed.mounts, inputs.fileFeed.helperImage);
  return planSandboxPod(
    {
      podName: inputs.podName,
      shortId: c.id.slice(0, 12),
      image: c.pullRef ?? podImage(c.image),
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
      waitForFiles: !feed && c.pendingArchives.length + c.copiedArchives.length > 0,
      capabilities: hc.capabilities,
      privileged: hc.privileged,
      readOnlyRootFilesystem: hc.readOnlyRootFilesystem,
      supplementalGroups: hc.supplementalGroups,
      record: inputs.record,
      settings: c.plan.settings,
      template: inputs.template,
      dns: hc.dns,
      hostNetwork: hc.hostNetwork,
      hostIPC: hc.hostIPC,
      ...(c.platform ? { nodeSelector: platformSelector(c.platform) } : {}),
      initContainers: [...(feed ? [feed.init] : []), ...(inputs.isolationImage ? [isolationGate(inputs.isolationImage)] : [])],
      ...(feed ? { extraVolumes: [feed.volume], extraMounts: feed.mainMounts } : {}),
    },
    { namespace: ctx.namespace, owner: ctx.owner, now: new Date(), ttlSeconds: ctx.ttlSeconds },
  );
}

/** Not the container's pod: labelled so that its Services do not select it and recovery does not take it for one. */
export function planPeekPod(c: ContainerRecord, podName: string, template: PodTemplateSource | undefined, ctx: PodContext): Pod {
  return planSandboxPod(
    {
      podName,
      shortId: c.id.slice(0, 12),
      idLabel: LABEL_PEEK,
      image: c.pullRef ?? podImage(c.image),
      entrypoint: ['sleep'],
      cmd: [String(ctx.ttlSeconds)],
      env: c.body.Env ?? [],
      workingDir: c.body.WorkingDir,
      user: podUser(c.body.User),
      // the image's files as the container will have them: its /etc/hostname too
      hostname: dockerHostname(c),
      capabilities: [...(ctx.capabilities ?? DOCKER_DEFAULT_CAPABILITIES)],
      settings: c.plan.settings,
      template,
    },
    { namespace: ctx.namespace, owner: ctx.owner, now: new Date(), ttlSeconds: ctx.ttlSeconds },
  );
}
