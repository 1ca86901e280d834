/**
 * The pod watch of one berth serve and what it notes of a container's run: its start, its exit (ports
 * closed, networks forgotten, AutoRemove once attached readers are done), a pod gone while the watch was away;
 * and the end of a pod that served a made image (--image-server), which ends the image.
 */
import { deletedByCluster, viewContainer } from '../runtime/pod-status.js';
import { LABEL_COMPONENT, LABEL_OWNER } from '../runtime/pod-rules.js';
import { LABEL_CONTAINER_ID } from '../runtime/sandbox-plan.js';
import { statusOf } from '../kube/errors.js';
import type { ContainerRecord } from './model.js';
import { podState } from './containers/pod-state.js';
import type { Pod } from './cluster.js';
import { FEED_CONTAINER } from './containers/file-feed.js';
import { IMAGE_POD_COMPONENT } from './images/image-outlet.js';
import { READERS_GRACE_MS, type EngineState, type ExecCollect, type ExitState, type Remove } from './engine-state.js';

export class PodWatch {
  private stopWatch?: () => void;

  constructor(
    private readonly s: EngineState,
    private readonly deps: { remove: Remove; execCollect: ExecCollect },
  ) {}

  startWatch(): void {
    this.stopWatch = this.s.cluster.watchPods(
      `${LABEL_OWNER}=${this.s.opts.owner}`,
      (type, pod) => this.onPod(type, pod),
      (err) => process.stderr.write(`berth serve: pod watch: ${err.message} (resuming)\n`),
      (pods, listStartedAt) => this.onSync(pods, listStartedAt),
    );
  }

  stop(): void {
    this.stopWatch?.();
  }

  /**
   * A fresh list of the pods (first, and after the watch lost its place): the state of every listed pod
   * is taken as an event, and a running container whose pod was created before the list began but is not
   * in it was deleted while the watch was away.
   */
  private onSync(pods: Pod[], listStartedAt: number): void {
    const names = new Set<string>();
    for (const pod of pods) {
      names.add(pod.metadata?.name ?? '');
      this.onPod('MODIFIED', pod);
    }
    for (const c of this.s.containers.values()) {
      if (!c.podName || names.has(c.podName) || (c.status !== 'running' && c.status !== 'created')) continue;
      if (c.podCreatedAt !== undefined && c.podCreatedAt < listStartedAt) this.setExited(c, { exitCode: 137 });
    }
    // an image is recorded after its pod was made: one recorded before the list began had its pod in it
    for (const img of [...this.s.images.values()])
      if (img.servedBy && !names.has(img.servedBy) && img.created.getTime() < listStartedAt) this.servingEnded(img.servedBy, 'was deleted');
  }

  private onPod(type: string, pod: Pod): void {
    if (this.s.peeks.onPod(type, pod)) return;
    if (pod.metadata?.labels?.[LABEL_COMPONENT] === IMAGE_POD_COMPONENT) {
      const ended = imagePodEnd(type, pod);
      if (ended) this.servingEnded(pod.metadata?.name ?? '', ended);
      return;
    }
    const shortId = pod.metadata?.labels?.[LABEL_CONTAINER_ID];
    const c = [...this.s.containers.values()].find((x) => x.id.startsWith(shortId ?? '-') && x.podName === pod.metadata?.name);
    if (!c) return;
    if (type === 'DELETED') {
      // a pod the cluster deleted with its node: exited 255, as dockerd shows a container whose machine went down
      const byCluster = deletedByCluster(pod);
      if (c.status === 'running' || c.status === 'created') this.setExited(c, byCluster ? { exitCode: 255, error: byCluster } : { exitCode: 137 });
      return;
    }
    c.podIP = pod.status?.podIP ?? c.podIP;
    if (this.s.feeds.has(c.podName!) && this.receiverFailed(c, pod)) return;
    const s = podState(pod);
    if (s.status === 'running' && c.podIP) void this.s.networks.announce(c, (o, argv) => this.deps.execCollect(o, argv));
    if (s.status === 'running' && c.status !== 'running') {
      c.status = 'running';
      c.startedAt = s.startedAt ?? new Date().toISOString();
      this.s.emit('container', 'start', c);
      this.s.changed(c);
    } else if (s.status === 'exited' && (c.status === 'running' || c.status === 'created')) {
      // A process that ended before the watch saw it run still started: docker's events have its start before its
      // die. Not one that never ran (StartError; a kubelet's startedAt is then the epoch).
      if (c.status === 'created' && !s.error && Date.parse(s.startedAt ?? '') > 0) this.s.emit('container', 'start', c);
      this.setExited(c, s);
    } else {
      this.s.changed(c);
    }
  }

  /**
   * Notes the receiver of a start that feeds files for the start path (engine-start.ts), which waits on it. One that
   * ran and failed failed the pod before the container ran: the start words that and removes the pod (startFailed),
   * not the watch, whose AutoRemove would take the start's answer with it.
   */
  private receiverFailed(c: ContainerRecord, pod: Pod): boolean {
    const receiver = viewContainer(pod, FEED_CONTAINER, true);
    this.s.feeds.set(c.podName!, receiver);
    if (receiver.state !== 'terminated' || receiver.exitCode === 0) return false;
    this.s.changed(c);
    return true;
  }

  /** Whether the pod's main container has ended (or the pod is gone): a follow of its log that ended is whole. */
  async podEnded(podName: string): Promise<boolean> {
    try {
      return podState(await this.s.cluster.readPod(podName)).status === 'exited';
    } catch (err) {
      return statusOf(err).code === 404;
    }
  }

  private servingEnded(pod: string, how: string): void {
    const names = this.s.images.servingEnded(pod);
    if (names.length === 0) return;
    process.stderr.write(
      `berth serve: image ${names.join(', ')} is gone: its pod ${pod} ${how}, and no node can pull it now; build or commit it again (image pods end after --ttl)\n`,
    );
  }

  /** An attached client got a short output: the run's `wait` answers with this error (docker run exits 125). */
  outputIncomplete(c: ContainerRecord, message: string): void {
    c.outputError = `the output of container ${c.name} is incomplete: ${message}`;
    process.stderr.write(`berth serve: ${c.outputError}\n`);
    this.s.changed(c);
  }

  setExited(c: ContainerRecord, s: ExitState): void {
    c.status = 'exited';
    c.exitCode = s.exitCode ?? 0;
    c.error = s.error ?? '';
    c.oomKilled = Boolean(s.oomKilled);
    c.startedAt ??= s.startedAt;
    c.finishedAt = s.finishedAt ?? new Date().toISOString();
    this.s.ports.close(c);
    this.s.networks.forget(c);
    this.s.emit('container', 'die', c, { exitCode: String(c.exitCode) });
    this.s.changed(c);
    if (c.body.HostConfig?.AutoRemove) void this.autoRemove(c);
  }

  private async autoRemove(c: ContainerRecord): Promise<void> {
    // Attached clients read the output from the pod log: let them finish before the pod goes.
    const until = Date.now() + READERS_GRACE_MS;
    while (c.readers > 0 && Date.now() < until) await this.s.nextChange(c, until - Date.now());
    await this.deps.remove(c.id, true, true).catch((err: Error) => process.stderr.write(`berth serve: auto-remove of ${c.name}: ${err.message}\n`));
  }

  /** A reader of the container's output is done (AutoRemove may be waiting for it). */
  releaseReader(c: ContainerRecord): void {
    c.readers--;
    this.s.changed(c);
  }
}

/** How a pod serving an image ended (deleted, or its server stopped: the --ttl deadline, an eviction), or undefined while it serves. */
export function imagePodEnd(type: string, pod: Pod): string | undefined {
  if (type === 'DELETED') return 'was deleted';
  const phase = pod.status?.phase;
  if (phase !== 'Succeeded' && phase !== 'Failed') return undefined;
  const why = [pod.status?.reason, pod.status?.message].filter(Boolean).join(': ');
  return `ended${why ? ` (${why})` : ''}`;
}
