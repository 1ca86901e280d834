/**
 * A Docker create, judged once: the request merged with its image's config and judged under berth serve's
 * policy (`--allow-privileged`, `--capabilities`, the operator's `berth.dev/…` settings). The part of the plan
 * later phases need is kept on the container record: each start lays its pod from it (container-pod.ts), peek
 * pods and removal read it, and nothing is judged again, so no later judgement can leave a container that
 * exists unremovable. A berth serve taking a container over (recovery.ts) judges its saved config again under
 * its own policy, leniently: a container it refuses stays, to inspect and remove, and only its start is
 * refused. Pure: planning touches no cluster.
 */
import { DockerError, badRequest } from '../http/http.js';
import type { CapabilityPolicy } from './capabilities.js';
import { checkPublishAll } from './create-checks.js';
import { blankHostConfigPlan, HostConfigRefused, judgeHostConfig, type HostConfigPlan } from './host-config.js';
import type { ImageConfig } from '../images/image-config.js';
import { mergeImageConfig } from '../images/image-merge.js';
import type { AnonymousVolume, ContainerPlan, CreateBody } from '../model.js';
import { planMounts, type MountPlan } from './mounts.js';
import { isNamedUser, isValidUser } from './named-user.js';
import { checkAliases } from '../networks/networks.js';
import { isReaperImage } from '../ryuk/reaper.js';
import { LABEL_RYUK } from '../ryuk/ryuk.js';
import { anonymousVolumesOf, mountVolumeLabels } from '../volumes/volumes.js';
import { SandboxPlanError } from '../../runtime/sandbox-plan.js';
import { podSettingsFrom, SETTINGS_PREFIX, type PodSettings } from '../../runtime/sandbox-settings.js';

/** A container label naming the PodTemplate object its pod is laid on. */
export const LABEL_POD_TEMPLATE = `${SETTINGS_PREFIX}pod-template`;

/** What a berth serve allows its containers (its flags). */
export interface CreatePolicy extends CapabilityPolicy {
  /** The operator's `berth.dev/…` settings; a container's labels of the same key win. */
  podDefaults?: Record<string, string>;
}

/** What a create makes: the kept plan, and what only the create itself uses. */
export interface CreatePlan {
  /** The request with its image's config merged in: the container's config from now on. */
  body: CreateBody;
  plan: ContainerPlan;
  /** Fields ignored and options not applied (the create answer's `Warnings`). */
  warnings: string[];
  /** `-v /path` and volume mounts without a source, named as dockerd names them. */
  anonymousVolumes: AnonymousVolume[];
  /** The named volumes its mounts name (made when missing), with the labels its mounts give them. */
  namedVolumes: Array<{ name: string; labels: Record<string, string> }>;
  /** The networks it joins, by name (its NetworkMode first), with their aliases. */
  networks: Array<{ name: string; aliases: string[] }>;
  /** A `User` the request gave by name (not the image's own USER, which the kubelet runs itself): looked up at the first start. */
  namedUser?: string;
}

/** Judges a create; throws the 400 (403 for Privileged) that names what cannot be honoured. */
export function planCreate(request: CreateBody, image: ImageConfig | undefined, policy: CreatePolicy): CreatePlan {
  if (isReaperImage(request.Image ?? '')) return planReaper(request, image, policy);
  const body = mergedConfig(request, image);
  const { plan, mounts } = judgeContainer(body, policy);
  const volumeLabels = mountVolumeLabels(body);
  return {
    body,
    plan,
    warnings: [...plan.hostConfig.warnings, ...mounts.warnings],
    anonymousVolumes: anonymousVolumesOf(body, mounts),
    namedVolumes: mounts.volumes.flatMap((v) => (v.claim ? [{ name: v.claim, labels: volumeLabels.get(v.claim) ?? {} }] : [])),
    networks: requestedNetworks(body),
    ...namedUserOf(request, image),
  };
}

/**
 * The Ryuk container is played by berth (ryuk/ryuk.ts) and never gets a pod: nothing of its HostConfig or mounts
 * applies, Privileged included (testcontainers-java asks for a privileged Ryuk by default), and it carries the Ryuk
 * image's own LABEL (berth never reads that image), by which testcontainers finds a running reaper to reuse.
 */
function planReaper(request: CreateBody, image: ImageConfig | undefined, policy: CreatePolicy): CreatePlan {
  const merged = mergedConfig(request, image);
  const body = { ...merged, Labels: { [LABEL_RYUK]: 'true', ...(merged.Labels ?? {}) } };
  const plan: ContainerPlan = { hostConfig: blankHostConfigPlan(policy), volumes: [], settings: {} };
  return { body, plan, warnings: [], anonymousVolumes: [], namedVolumes: [], networks: requestedNetworks(body), ...namedUserOf(request, image) };
}

/**
 * The plan of a container a berth serve takes over, from its saved config (already merged with its image's):
 * judged under this berth serve's policy, or, when that refuses it, a plan that cannot start.
 */
export function replanContainer(body: CreateBody, policy: CreatePolicy): ContainerPlan {
  try {
    return judgeContainer(body, policy).plan;
  } catch (err) {
    if (!isRefusal(err)) throw err;
    return refusedPlan(body, policy, (err as Error).message);
  }
}

/** The request's own checks, then its image's config merged in; `-P` is checked on the merge (the image's EXPOSE). */
function mergedConfig(request: CreateBody, image: ImageConfig | undefined): CreateBody {
  if (request.Env && !Array.isArray(request.Env)) throw badRequest('Env must be a list of "KEY=VALUE"');
  if (request.User && !isValidUser(request.User)) throw badRequest(`invalid user "${request.User}": give user or uid, optionally :group or :gid`);
  const body = mergeImageConfig(request, image);
  checkPublishAll(body);
  return body;
}

/** The kept plan of a merged config, and its mounts (warnings, anonymous volumes). */
function judgeContainer(body: CreateBody, policy: CreatePolicy): { plan: ContainerPlan; mounts: MountPlan } {
  refusePrivileged(body, policy);
  const hostConfig = judgeHostConfigOf(body, policy);
  const mounts = planMounts(body);
  const plan: ContainerPlan = { hostConfig, volumes: mounts.volumes, settings: podSettingsFrom(policy.podDefaults, body.Labels), ...templateOf(body) };
  return { plan, mounts };
}

function refusePrivileged(body: CreateBody, policy: CreatePolicy): void {
  if (body.HostConfig?.Privileged && !policy.allowPrivileged)
    throw new DockerError(403, 'privileged containers are refused by this berth serve (start it with --allow-privileged)');
}

function judgeHostConfigOf(body: CreateBody, policy: CreatePolicy): HostConfigPlan {
  try {
    return judgeHostConfig(body.HostConfig as Record<string, unknown> | null | undefined, policy);
  } catch (err) {
    if (err instanceof HostConfigRefused) throw badRequest(err.message);
    throw err;
  }
}

/** The label's template name, as given (a bad name is refused where it is read: engine.ts). */
export function templateNameOf(labels: Record<string, string> | null | undefined): string | undefined {
  return labels?.[LABEL_POD_TEMPLATE]?.trim() || undefined;
}

function templateOf(body: CreateBody): Pick<ContainerPlan, 'templateName'> {
  const name = templateNameOf(body.Labels);
  return name ? { templateName: name } : {};
}

/** Its NetworkMode (`bridge` for the default) and the networks of EndpointsConfig, with their aliases. */
function requestedNetworks(body: CreateBody): CreatePlan['networks'] {
  const mode = body.HostConfig?.NetworkMode;
  const networks = [{ name: mode && mode !== 'default' ? mode : 'bridge', aliases: [] as string[] }];
  for (const [name, endpoint] of Object.entries(body.NetworkingConfig?.EndpointsConfig ?? {})) {
    const aliases = endpoint?.Aliases ?? [];
    checkAliases(aliases);
    networks.push({ name, aliases });
  }
  return networks;
}

function namedUserOf(request: CreateBody, image: ImageConfig | undefined): Pick<CreatePlan, 'namedUser'> {
  return isNamedUser(request.User) && request.User !== image?.User ? { namedUser: request.User } : {};
}

/** What a policy or berth itself refuses (a 4xx, a bad `berth.dev/…` setting), not a failure of berth. */
function isRefusal(err: unknown): boolean {
  return (err instanceof DockerError && err.status < 500) || err instanceof SandboxPlanError;
}

/**
 * A container this berth serve will not start: no verdicts to lay a pod with, but what its removal and its
 * peek pods read: the deny-all policy of NetworkMode=none (removal deletes it) and the settings, as far as
 * they read.
 */
function refusedPlan(body: CreateBody, policy: CreatePolicy, why: string): ContainerPlan {
  const hostConfig = { ...blankHostConfigPlan(policy), denyNetwork: body.HostConfig?.NetworkMode === 'none' };
  return { hostConfig, volumes: [], settings: settingsAsFarAsTheyRead(body, policy), ...templateOf(body), refused: why };
}

function settingsAsFarAsTheyRead(body: CreateBody, policy: CreatePolicy): PodSettings {
  try {
    return podSettingsFrom(policy.podDefaults, body.Labels);
  } catch (err) {
    if (err instanceof SandboxPlanError) return {};
    throw err;
  }
}
