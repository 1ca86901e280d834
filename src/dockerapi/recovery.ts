/**
 * What a restarted berth (same `--instance`) takes over: each pod carries its container's create
 * request, name, networks and aliases in the annotation `berth.dev/docker-container`; each claim its
 * volume's name. Peek pods of the dead berth are deleted (nobody reads through them any more), and so are its image
 * pods (`--image-server`: the images they served went with it). The
 * request is judged again under this berth's policy (containers/create-plan.ts), leniently: a container the policy
 * refuses is taken over all the same, to inspect and remove, and only its start is refused.
 */
import { IMAGE_POD_COMPONENT } from './images/image-outlet.js';
import { LABEL_COMPONENT, LABEL_OWNER } from '../runtime/pod-rules.js';
import { ANNOTATION_CONTAINER } from '../runtime/sandbox-plan.js';
import { LABEL_PEEK } from './containers/peek.js';
import { asArgv, freshRunState, type AnonymousVolume, type ContainerPlan, type ContainerRecord, type CreateBody } from './model.js';
import { podState } from './containers/pod-state.js';
import type { Platform } from './containers/platform.js';
import type { Pod, ServeCluster } from './cluster.js';
import type { Networks } from './networks/networks.js';
import type { Volumes } from './volumes/volumes.js';
import type { ImageStore } from './images/image-store.js';

/** On a pod kept for debugging after its container was removed: the time it was kept until. */
export const ANNOTATION_KEPT_FAILED = 'berth.dev/kept-failed-until';

/** What a restarted berth needs to take the container over again (kept as a pod annotation). */
export interface SavedContainer {
  id: string;
  name: string;
  created: string;
  image: string;
  body: CreateBody;
  networks: Array<{ id: string; name: string; labels: Record<string, string>; builtin: boolean; aliases: string[] }>;
  restartCount: number;
  /** A `User` given by name, as its numbers (read from the image at the first start). */
  podUser?: string;
  /** How many archives were copied into it: they live in the berth serve that copied them, not in the cluster. */
  archives?: number;
  anonymousVolumes?: AnonymousVolume[];
  platform?: Platform;
  /** The pushed digest of an image berth made (`docker commit`) that the container runs. */
  pullRef?: string;
}

export function savedRecord(c: ContainerRecord, networks: Networks): SavedContainer {
  const saved = [...c.networks].map(([id, aliases]) => {
    const n = networks.get(id);
    return { id, name: n?.name ?? id, labels: n?.labels ?? {}, builtin: n?.builtin ?? false, aliases };
  });
  const archives = c.copiedArchives.length + c.pendingArchives.length + (c.archivesLost ?? 0);
  return {
    id: c.id,
    name: c.name,
    created: c.created.toISOString(),
    image: c.image,
    body: c.body,
    networks: saved,
    restartCount: c.restartCount,
    ...(c.podUser ? { podUser: c.podUser } : {}),
    ...(archives ? { archives } : {}),
    ...(c.anonymousVolumes ? { anonymousVolumes: c.anonymousVolumes } : {}),
    ...(c.platform ? { platform: c.platform } : {}),
    ...(c.pullRef ? { pullRef: c.pullRef } : {}),
  };
}

/**
 * The container a pod of an earlier berth runs, its networks adopted, its plan from `replan`; undefined for
 * pods that are no container's.
 */
export function containerFromPod(pod: Pod, networks: Networks, replan: (body: CreateBody) => ContainerPlan): ContainerRecord | undefined {
  const raw = pod.metadata?.annotations?.[ANNOTATION_CONTAINER];
  if (!raw || pod.metadata?.deletionTimestamp || pod.metadata?.annotations?.[ANNOTATION_KEPT_FAILED]) return undefined;
  let saved: SavedContainer;
  try {
    saved = JSON.parse(raw) as SavedContainer;
  } catch {
    return undefined;
  }
  const memberships = new Map<string, string[]>();
  for (const n of saved.networks ?? []) memberships.set(networks.adopt(n).id, n.aliases);
  const c: ContainerRecord = {
    id: saved.id,
    name: saved.name,
    created: new Date(saved.created),
    image: saved.image,
    ...(saved.pullRef ? { pullRef: saved.pullRef } : {}),
    body: saved.body,
    plan: replan(saved.body),
    cmd: asArgv(saved.body.Cmd),
    entrypoint: asArgv(saved.body.Entrypoint),
    podName: pod.metadata?.name,
    podCreatedAt: 0,
    ...freshRunState(),
    generation: Number(/-(\d+)$/.exec(pod.metadata?.name ?? '')?.[1] ?? 1),
    restartCount: saved.restartCount ?? 0,
    networks: memberships,
    podIP: pod.status?.podIP,
    ...(saved.podUser ? { podUser: saved.podUser } : {}),
    ...(saved.archives ? { archivesLost: saved.archives } : {}),
    ...(saved.anonymousVolumes ? { anonymousVolumes: saved.anonymousVolumes } : {}),
    ...(saved.platform ? { platform: saved.platform } : {}),
  };
  const s = podState(pod);
  c.status = s.status;
  c.startedAt = s.startedAt;
  if (s.status === 'exited') Object.assign(c, { exitCode: s.exitCode ?? 0, error: s.error ?? '', oomKilled: Boolean(s.oomKilled), finishedAt: s.finishedAt });
  return c;
}

export interface RecoveryDeps {
  cluster: ServeCluster;
  owner: string;
  containers: Map<string, ContainerRecord>;
  networks: Networks;
  volumes: Volumes;
  images: ImageStore;
  /** Publishes the ports of a running container again. */
  openPorts(c: ContainerRecord): Promise<void>;
  /** A taken-over container's plan under this berth's policy (containers/create-plan.ts replanContainer). */
  replan(body: CreateBody): ContainerPlan;
  leftBehind(what: string, err: Error): void;
}

/** Takes over what an earlier berth with the same instance left; returns how many containers. */
export async function recover(deps: RecoveryDeps): Promise<number> {
  const selector = `${LABEL_OWNER}=${deps.owner}`;
  deps.volumes.recover(await deps.cluster.listClaims(selector));
  let count = 0;
  for (const pod of await deps.cluster.listPods(selector)) {
    // peek pods are made again when needed; an image pod served an image of the earlier berth's, which it took along
    const helper = pod.metadata?.labels?.[LABEL_PEEK] ? 'peek' : pod.metadata?.labels?.[LABEL_COMPONENT] === IMAGE_POD_COMPONENT ? 'image' : undefined;
    if (helper) {
      await deps.cluster.deletePod(pod.metadata!.name!).catch((err: Error) => deps.leftBehind(`${helper} pod ${pod.metadata!.name}`, err));
      continue;
    }
    const c = containerFromPod(pod, deps.networks, (body) => deps.replan(body));
    if (!c) continue;
    deps.containers.set(c.id, c);
    deps.images.remember(c.image);
    if (c.status === 'running') await deps.openPorts(c).catch(() => undefined);
    count++;
  }
  return count;
}
