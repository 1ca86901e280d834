/**
 * Reading a watched pod: is the container running, finished, or stuck for a reason the user must
 * hear about now rather than after the start timeout.
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

/** Waiting reasons that will not resolve by waiting longer. */
export const FATAL_WAITING: ReadonlySet<string> = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

/**
 * What the scheduler says while a claim the pod mounts is still being provisioned (a dynamic provisioner makes the
 * volume a moment after the claim), or once it is bound to a volume the scheduler has not seen yet (its cache learns
 * of the new PersistentVolume a moment after the claim names it): it schedules the pod once it has both, so this is
 * no failure; the start timeout still bounds the wait.
 */
const CLAIMS_BINDING = /pod has unbound immediate PersistentVolumeClaims|persistentvolume "[^"]+" not found/;

export type ContainerView =
  | { state: 'pending'; progress: string }
  | { state: 'running' }
  | { state: 'terminated'; exitCode: number; reason?: string; message?: string }
  | { state: 'failed'; message: string; exitCode: number };

export function viewContainer(pod: V1Pod, container: string, init = false): ContainerView {
  const statuses = (init ? pod.status?.initContainerStatuses : pod.status?.containerStatuses) ?? [];
  const cs: V1ContainerStatus | undefined = statuses.find((s) => s.name === container);
  const image = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find((c) => c.name === container)?.image ?? '';

  const unschedulable = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable');
  if (unschedulable && CLAIMS_BINDING.test(unschedulable.message ?? '')) return { state: 'pending', progress: 'waiting for its volume claims to bind' };
  if (unschedulable) {
    const selector = Object.entries(pod.spec?.nodeSelector ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(', ');
    const its = selector ? `its nodeSelector: ${selector}; ` : '';
    return {
      state: 'failed',
      exitCode: 125,
      message: `pod ${pod.metadata?.name} cannot be scheduled: ${unschedulable.message ?? 'Unschedulable'} (${its}check resources, nodeSelector and tolerations of the pod template)`,
    };
  }

  const stuckInit = init ? undefined : stuckInitContainer(pod);
  if (stuckInit) return { state: 'failed', exitCode: 125, message: stuckInit };
  const waiting = cs?.state?.waiting;
  if (waiting?.reason && FATAL_WAITING.has(waiting.reason))
    return { state: 'failed', exitCode: 125, message: describeWaiting(waiting.reason, waiting.message, image) };
  const term = cs?.state?.terminated;
  const lost = lostNode(pod, container);
  if (lost) return { state: 'failed', exitCode: 125, message: lost };
  if (cs?.state?.running) return { state: 'running' };
  if (term) {
    const startFailure = startFailureExitCode(term.reason, term.message);
    if (startFailure !== undefined) return { state: 'failed', exitCode: startFailure, message: `cannot start ${image}: ${term.message ?? term.reason}` };
    return { state: 'terminated', exitCode: term.exitCode, reason: term.reason, message: term.message };
  }
  if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') {
    // The pod ended without this container ever running: deadline, eviction, failed init container.
    const initFailure = failedInitContainer(pod, container);
    if (initFailure) return { state: 'failed', exitCode: 125, message: initFailure };
    return {
      state: 'failed',
      exitCode: 125,
      message: `pod ${pod.metadata?.name} ended (${pod.status.reason ?? pod.status.phase}) before ${container} ran${pod.status.message ? `: ${pod.status.message}` : ''}`,
    };
  }
  if (!pod.spec?.nodeName && !pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'True'))
    return { state: 'pending', progress: 'scheduling' };
  if (waiting?.reason === 'ContainerCreating' || waiting?.reason === 'PodInitializing')
    return { state: 'pending', progress: waiting.reason === 'PodInitializing' ? 'running init containers' : 'pulling image / creating container' };
  return { state: 'pending', progress: 'starting' };
}

/**
 * Why a started pod's node is lost, or undefined; also undefined when `container` had ended before (its exit code
 * stands). When a node stops reporting (its kubelet's heartbeats are older than
 * the cluster's node-monitor-grace-period, 40 s by default), the node lifecycle controller marks each of its pods not
 * Ready while their containers still count as ready: the last the API server heard of them. From then on nobody can
 * say whether the container runs, ended or wrote more, and no exit code will come until the node returns. berth's
 * pods have no readiness gates, so this pair of conditions means only that.
 */
export function lostNode(pod: V1Pod, container: string): string | undefined {
  if (pod.spec?.readinessGates?.length) return undefined;
  if (pod.status?.containerStatuses?.find((s) => s.name === container)?.state?.terminated) return undefined;
  const condition = (type: string) => pod.status?.conditions?.find((c) => c.type === type);
  const ready = condition('Ready');
  if (ready?.status !== 'False' || condition('ContainersReady')?.status !== 'True') return undefined;
  const since = ready.lastTransitionTime ? ` since ${new Date(ready.lastTransitionTime).toISOString()}` : '';
  return `node ${pod.spec?.nodeName ?? '(unknown)'} stopped reporting to the API server${since} (it lost power, its network or its kubelet): the state of pod ${pod.metadata?.name} is unknown, and it gets no exit code until the node returns`;
}

/**
 * Why the cluster itself deleted a pod, from the DisruptionTarget condition it writes first (GA in 1.31), or
 * undefined. The pod garbage collector deletes the pods of a node that was deleted (DeletionByPodGC), and the taint
 * manager those of a node unreachable for their toleration, 5 minutes by default (DeletionByTaintManager): either way
 * the container's state and exit code are lost with the pod.
 */
export function deletedByCluster(pod: V1Pod): string | undefined {
  const target = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget' && c.status === 'True');
  if (!target) return undefined;
  const name = pod.metadata?.name;
  const node = pod.spec?.nodeName ?? '(unknown)';
  const said = target.message ? ` (${target.message})` : '';
  if (target.reason === 'DeletionByPodGC')
    return `node ${node} was deleted from the cluster${said}: pod ${name} was deleted with it, and the state and exit code of its container are lost`;
  if (target.reason === 'DeletionByTaintManager')
    return `node ${node} stayed unreachable past the pod's toleration${said}: the cluster deleted pod ${name}, and the state and exit code of its container are lost`;
  return `the cluster deleted pod ${name} (${target.reason ?? 'DisruptionTarget'}${target.message ? `: ${target.message}` : ''})`;
}

/** An init container that cannot start, and so holds its pod forever (its image cannot be pulled, say). */
export function stuckInit(pod: V1Pod): { name: string; image: string; reason: string; message?: string } | undefined {
  const s = pod.status?.initContainerStatuses?.find((x) => x.state?.waiting?.reason && FATAL_WAITING.has(x.state.waiting.reason));
  if (!s) return undefined;
  const image = pod.spec?.initContainers?.find((c) => c.name === s.name)?.image ?? s.image;
  return { name: s.name, image, reason: s.state!.waiting!.reason!, message: s.state!.waiting!.message };
}

/** The first init container (of those before `container`, when given) that ended with an error, in its own words. */
export function failedInit(pod: V1Pod, container?: string): { name: string; exitCode: number; message?: string } | undefined {
  for (const s of pod.status?.initContainerStatuses ?? []) {
    if (s.name === container) return undefined;
    const term = s.state?.terminated;
    if (term && term.exitCode !== 0) return { name: s.name, exitCode: term.exitCode, message: term.message?.trim() || undefined };
  }
  return undefined;
}

/** berth's own init containers (`berth-…`) name the helper image setting. */
function stuckInitContainer(pod: V1Pod): string | undefined {
  const s = stuckInit(pod);
  if (!s) return undefined;
  const hint = s.name.startsWith('berth-')
    ? " (berth's helper containers use BERTH_HELPER_IMAGE: set it to an image with sh, tar, wget and timeout that the cluster can pull)"
    : '';
  return `init container ${s.name}: ${describeWaiting(s.reason, s.message, s.image)}${hint}`;
}

function failedInitContainer(pod: V1Pod, container: string): string | undefined {
  const f = failedInit(pod, container);
  return f && `pod ${pod.metadata?.name}: its init container ${f.name} failed with exit code ${f.exitCode}${f.message ? `: ${f.message}` : ''}`;
}

/** docker run's convention: 127 when the command is missing, 126 when it cannot be executed. */
function startFailureExitCode(reason?: string, message?: string): number | undefined {
  if (reason !== 'StartError' && reason !== 'ContainerCannotRun') return undefined;
  const m = message ?? '';
  if (/no such file or directory|executable file not found|not found in \$PATH/i.test(m)) return 127;
  if (/permission denied|exec format error/i.test(m)) return 126;
  return 125;
}

function describeWaiting(reason: string, message: string | undefined, image: string): string {
  const detail = message ? ` (${message})` : '';
  switch (reason) {
    case 'ErrImageNeverPull':
      // kpt's tests expect docker's wording for a missing image with --pull never.
      return `No such image: ${image}${detail}`;
    case 'InvalidImageName':
      return `invalid image name ${image}${detail}`;
    case 'CreateContainerConfigError':
      return `CreateContainerConfigError for ${image}${detail} (check the pod template's env, secrets and config maps)`;
    default:
      return `${reason} for ${image}${detail}`;
  }
}
