/**
 * The start path: a container's next pod planned and laid, its files fed or delivered, waited for until it
 * runs (or the start fails and what it made goes), its published ports opened, its networks told, its healthcheck begun.
 */
import { buffer } from 'node:stream/consumers';
import { ANNOTATION_CONTAINER, READY_FILE, type SandboxVolume } from '../runtime/sandbox-plan.js';
import { helperImageOf } from '../runtime/plan.js';
import type { PodTemplateSource } from '../runtime/workload.js';
import { statusOf } from '../kube/errors.js';
import { DockerError, conflict, notFound } from './http/http.js';
import { isReaperImage } from './ryuk/reaper.js';
import { PortTargetGone, type PortTarget } from './networks/port-proxy.js';
import { UserNotFound, resolveUser } from './containers/named-user.js';
import { Serial } from './serial.js';
import type { ContainerRecord, ContainerStatus } from './model.js';
import type { Pod } from './cluster.js';
import { LABEL_ANONYMOUS } from './volumes/volumes.js';
import { leftBehind } from './instance-cleanup.js';
import { runHealthcheck, wantsHealthcheck } from './containers/healthcheck.js';
import { planRunPod, runPodName } from './containers/container-pod.js';
import { planDenyPolicy } from './networks/network-isolation.js';
import { addArchives, FEED_CONTAINER, FEED_PLAN, feedMounts, needsFileFeed } from './containers/file-feed.js';
import { FEED_END_GRACE_MS, sendFeed, type FeedResult } from '../runtime/file-feed.js';
import type { ContainerView } from '../runtime/pod-status.js';
import { isTerminal } from '../runtime/pod-tracker.js';
import type { EngineState, ExecCollect, Remove } from './engine-state.js';

export interface StartDeps {
  remove: Remove;
  execCollect: ExecCollect;
  readTemplate(name: string | undefined): Promise<PodTemplateSource | undefined>;
  recordAnnotation(c: ContainerRecord): string;
  noteRecord(c: ContainerRecord, what: string): Promise<void>;
}

export class StartPath {
  private readonly starts = new Serial();

  constructor(
    private readonly s: EngineState,
    private readonly deps: StartDeps,
  ) {}

  /**
   * Starts are serialized per container (one pod whatever the concurrency): a start that waited for
   * another one of the same container finds it started and answers 304, as dockerd does.
   */
  async start(ref: string): Promise<'started' | 'already'> {
    const c = this.s.container(ref);
    const seen = c.generation;
    return this.starts.run(c.id, async () => {
      if (c.generation !== seen && (c.status === 'running' || c.status === 'exited')) return 'already';
      return this.startNow(c);
    });
  }

  private async startNow(c: ContainerRecord): Promise<'started' | 'already'> {
    if (this.s.containers.get(c.id) !== c) throw notFound(`No such container: ${c.id}`);
    if (c.status === 'running') return 'already';
    if (c.status === 'removing' || c.status === 'dead') throw conflict(`container ${c.name} is being removed (or its removal failed): remove it again`);
    if (c.plan.refused)
      throw new DockerError(
        403,
        `cannot start container ${c.name}: this berth serve's policy refuses it: ${c.plan.refused} (a berth serve that allowed it made it; inspect and remove it as any other)`,
      );
    if (isReaperImage(c.image)) return this.s.ryuk.start(c);
    if (c.namedUser && !c.podUser) await this.lookUpUser(c, c.namedUser);
    await this.s.peeks.retire(c.id);
    if (c.archivesLost) {
      // Its new pod would start without the files, where docker keeps them: refused rather than a start that looks right.
      throw conflict(
        `container ${c.name} had ${c.archivesLost} archive(s) copied into it (docker cp) under the berth serve this one took it over from, which kept them; a new pod would start without those files: create the container again and copy them into it`,
      );
    }
    if (c.podName) {
      // A stopped container starts again as a new pod: the old one keeps nothing a restart needs.
      const old = c.podName;
      await this.s.cluster.deletePod(old).catch((err: Error) => leftBehind(`pod ${old} of container ${c.name}`, err));
      // dockerd counts restarts of its restart policy only, and a start resets the count: berth has no policy.
      c.restartCount = 0;
    }
    let pod: Pod;
    try {
      pod = await this.planPod(c);
    } catch (err) {
      // nothing of this run exists yet; `docker run --rm` waits for the removal of a container whose start failed
      await this.autoRemoveFailed(c);
      throw err instanceof DockerError ? err : new DockerError(500, `failed to start container ${c.name}: ${(err as Error).message}`);
    }
    const podName = pod.metadata!.name!;
    this.resetRun(c, podName);
    const fed = pod.spec?.initContainers?.some((x) => x.name === FEED_CONTAINER) ?? false;
    // from before the pod exists, so that the watch misses no state of its receiver
    if (fed) this.s.feeds.set(podName, { state: 'pending', progress: 'starting' });
    try {
      return await this.layPod(c, pod, podName, fed);
    } finally {
      this.s.feeds.delete(podName);
    }
  }

  /** The planned pod made (its deny policy and alias Services first), its ports opened, its files given, waited for until it runs. */
  private async layPod(c: ContainerRecord, pod: Pod, podName: string, fed: boolean): Promise<'started'> {
    try {
      if (c.plan.hostConfig.denyNetwork) await this.ensureDenyPolicy(c);
      await this.s.networks.ensureAliasServices(c);
      await this.s.cluster.createPod(pod);
      c.podCreatedAt = Date.now();
      // A rename or network change while the pod was made found no pod to note it on: the pod carries the plan's record.
      if (pod.metadata?.annotations?.[ANNOTATION_CONTAINER] !== this.deps.recordAnnotation(c)) await this.deps.noteRecord(c, 'what changed while it started');
    } catch (err) {
      return this.startFailed(c, podName, `could not create its pod ${podName}: ${(err as Error).message}`);
    }
    if (this.removedMeanwhile(c)) {
      await this.s.cluster.deletePod(podName).catch((err: Error) => leftBehind(`pod ${podName} of removed container ${c.name}`, err));
      await this.s.networks.deleteAliasServices(c);
      throw conflict(`container ${c.name} was removed while it started`);
    }
    try {
      await this.s.ports.open(c);
    } catch (err) {
      return this.startFailed(c, podName, `could not publish its ports: ${(err as Error).message}`);
    }
    if (fed) await this.feedArchives(c, podName);
    await this.untilRuns(c, podName);
    // Read afresh: the pod watch changed it while this waited.
    const status = (): ContainerStatus => c.status;
    if (this.removedMeanwhile(c)) throw conflict(`container ${c.name} was removed while it started`);
    if (status() === 'exited' && c.error) throw new DockerError(500, `failed to start container ${c.name}: ${c.error}`);
    if (!fed && c.pendingArchives.length + c.copiedArchives.length > 0 && status() === 'running') await this.deliverArchives(c, podName);
    // As on dockerd, the members started before it resolve it once start answers.
    if (status() === 'running') await this.s.networks.announce(c, (o, argv) => this.deps.execCollect(o, argv));
    if (wantsHealthcheck(c))
      runHealthcheck(c, c.generation, {
        exec: (x, argv) => this.deps.execCollect(x, argv),
        changed: (x) => this.s.changed(x),
        statusChanged: (x, health) => this.s.emit('container', `health_status: ${health}`, x),
      });
    return 'started';
  }

  /**
   * A `User` given by name becomes numbers from the image's /etc/passwd and /etc/group, read through the
   * container's peek pod (one pod start more, once: restarts keep them). A name the image lacks fails the
   * start with dockerd's words, before any pod of the container exists.
   */
  private async lookUpUser(c: ContainerRecord, user: string): Promise<void> {
    try {
      const files = await this.s.files.userDatabase(c);
      c.podUser = resolveUser(user, files.passwd, files.group);
    } catch (err) {
      const why =
        err instanceof UserNotFound
          ? err.message
          : `berth reads /etc/passwd and /etc/group of the image to run user ${user} (pods take numbers only), which failed: ${(err as Error).message}; give a numeric uid[:gid]`;
      await this.autoRemoveFailed(c);
      throw new DockerError(500, `failed to start container ${c.name}: ${why}`);
    }
  }

  /** NetworkMode=none: the deny-all policy, made before the pod (networks/network-isolation.ts); kept across restarts. */
  private async ensureDenyPolicy(c: ContainerRecord): Promise<void> {
    try {
      await this.s.cluster.createNetworkPolicy(planDenyPolicy(c, this.s.opts.owner, this.s.opts.ttlSeconds));
    } catch (err) {
      if (statusOf(err).code !== 409) throw err;
    }
  }

  /** The next generation's pod, from the container's plan (its volumes ensured, its template read). */
  private async planPod(c: ContainerRecord): Promise<Pod> {
    const volumes = await this.podVolumes(c);
    c.generation++;
    const template = await this.deps.readTemplate(c.plan.templateName);
    const podName = runPodName(c, c.generation);
    const helperImage = helperImageOf(this.s.opts.helperImage);
    const fileFeed = needsFileFeed(c) ? { helperImage, mounts: await feedMounts([...c.copiedArchives, ...c.pendingArchives]) } : undefined;
    const isolationImage = c.plan.hostConfig.denyNetwork ? helperImage : undefined;
    return planRunPod(
      c,
      {
        podName,
        volumes,
        ports: this.containerPorts(c),
        hostAliases: this.s.networks.hostAliasesFor(c),
        template,
        record: this.deps.recordAnnotation(c),
        fileFeed,
        isolationImage,
      },
      this.s.podContext,
    );
  }

  /** The plan's volumes, each named volume as its claim (made again if it went), and the anonymous ones. */
  private async podVolumes(c: ContainerRecord): Promise<SandboxVolume[]> {
    const volumes: SandboxVolume[] = [];
    for (const v of c.plan.volumes) volumes.push(v.claim ? { ...v, claim: (await this.s.volumes.ensure(v.claim)).claim } : v);
    for (const a of c.anonymousVolumes ?? [])
      volumes.push({ claim: (await this.s.volumes.ensure(a.name, { [LABEL_ANONYMOUS]: '' })).claim, target: a.target, readOnly: a.readOnly === true });
    return volumes;
  }

  private resetRun(c: ContainerRecord, podName: string): void {
    c.podName = podName;
    c.podCreatedAt = undefined;
    c.status = 'created';
    c.startedAt = undefined;
    c.finishedAt = undefined;
    c.exitCode = 0;
    c.error = '';
    c.outputError = undefined;
    c.podIP = undefined;
  }

  /** Why a pod has not run, when the scheduler found no node for it (a --platform no node has, a nodeSelector). */
  private async unscheduled(podName: string): Promise<string> {
    const pod = await this.s.cluster.readPod(podName).catch(() => undefined);
    const pending = pod?.status?.conditions?.find((x) => x.type === 'PodScheduled' && x.status === 'False');
    if (!pending) return '';
    return `: no node takes it (${pending.message ?? pending.reason ?? 'Unschedulable'}; its nodeSelector: ${JSON.stringify(pod?.spec?.nodeSelector ?? {})})`;
  }

  /** Waits for the pod to run (or fail); past --start-timeout the start fails. */
  private async untilRuns(c: ContainerRecord, podName: string): Promise<void> {
    const deadline = Date.now() + this.s.opts.startTimeoutMs;
    const status = (): string => c.status;
    while (status() === 'created' && c.podName === podName) {
      if (Date.now() > deadline)
        return this.startFailed(
          c,
          podName,
          `its pod ${podName} did not run within ${this.s.opts.startTimeoutMs / 1000} s${await this.unscheduled(podName)} (raise --start-timeout, or see kubectl describe pod ${podName})`,
        );
      await this.s.nextChange(c, deadline - Date.now());
    }
  }

  /** Files copied before start, unpacked before the real process starts (the pod waits for READY_FILE). */
  private async deliverArchives(c: ContainerRecord, podName: string): Promise<void> {
    // A restart is a new pod: what was copied into the old one is copied again, as docker keeps it.
    const archives = [...c.copiedArchives, ...c.pendingArchives];
    c.copiedArchives = archives;
    c.pendingArchives = [];
    for (const a of archives) await this.s.files.extractInPod(podName, a.path, a.tar);
    const r = await this.deps.execCollect(c, ['/bin/sh', '-c', `: > ${READY_FILE}`]);
    if (r.exitCode !== 0) throw new DockerError(500, `could not release container ${c.name} after copying files: ${r.stderr}`);
  }

  /**
   * Files for the receiving init container (containers/file-feed.ts): once it runs, every kept archive goes to it in
   * one feed (runtime/file-feed.ts), whose marker tells a whole feed from a cut one; the main container then starts
   * with them mounted. A feed that did not arrive whole fails the start, its pod deleted.
   */
  private async feedArchives(c: ContainerRecord, podName: string): Promise<void> {
    const deadline = Date.now() + this.s.opts.startTimeoutMs;
    const receiver = (): ContainerView | undefined => this.s.feeds.get(podName);
    while (receiver()?.state !== 'running' && receiver()?.state !== 'terminated' && c.status === 'created' && c.podName === podName) {
      if (Date.now() > deadline)
        return this.startFailed(
          c,
          podName,
          `the init container ${FEED_CONTAINER} of its pod ${podName} (image ${helperImageOf(this.s.opts.helperImage)}, which delivers the files copied before start) did not run within ${this.s.opts.startTimeoutMs / 1000} s (see kubectl describe pod ${podName}; --helper-image names an image with sh and tar the cluster can pull)`,
        );
      await this.s.nextChange(c, deadline - Date.now());
    }
    // A receiver that cannot run (its image not pulled) ended the container: the start answers with its words (pod-state.ts).
    if (c.status !== 'created' || c.podName !== podName) return;
    // A restart is a new pod: what was copied into the old one is copied again, as docker keeps it.
    const archives = [...c.copiedArchives, ...c.pendingArchives];
    c.copiedArchives = archives;
    c.pendingArchives = [];
    const result = await sendFeed({
      cluster: this.s.cluster,
      pod: podName,
      plan: FEED_PLAN,
      content: (add) => addArchives(add, archives),
      ended: () => this.receiverEnd(c, podName, deadline + FEED_END_GRACE_MS),
      logTail: () => this.logTail(podName),
    }).catch((err: unknown): FeedResult => ({ delivered: false, why: (err as Error).message }));
    if (result.delivered) return;
    if (this.removedMeanwhile(c)) throw conflict(`container ${c.name} was removed while it started`);
    const tar = result.exitCode === undefined ? '' : ` (tar exit ${result.exitCode})`;
    return this.startFailed(
      c,
      podName,
      `the files copied into it before start (docker cp) did not all arrive in its pod ${podName}${tar}: ${result.why} (start it again: berth keeps the files copied into it)`,
    );
  }

  /** The receiver once it ended (or its pod, or the container's start, with it); rejects at `until`. */
  private async receiverEnd(c: ContainerRecord, podName: string, until: number): Promise<ContainerView> {
    for (;;) {
      const view = this.s.feeds.get(podName);
      if (view && isTerminal(view)) return view;
      if (c.status !== 'created' || c.podName !== podName)
        return { state: 'failed', exitCode: 125, message: c.error || `its pod ${podName} ended before the files arrived` };
      if (Date.now() > until)
        throw new Error(`the init container ${FEED_CONTAINER} did not finish unpacking them ${FEED_END_GRACE_MS / 1000} s past --start-timeout`);
      await this.s.nextChange(c, until - Date.now());
    }
  }

  /** The receiver's last log lines, for a failure whose words did not come through the attach. */
  private async logTail(podName: string): Promise<string> {
    const log = await buffer(await this.s.cluster.openLog(podName, FEED_CONTAINER, { tailLines: 3 }));
    return log.toString('utf8').trim().split('\n').join('; ');
  }

  private removedMeanwhile(c: ContainerRecord): boolean {
    return this.s.containers.get(c.id) !== c || c.status === 'removing' || c.status === 'dead';
  }

  /**
   * A start that failed before its container ran: what it created goes (left to expiry and `berth gc`
   * when that fails too, and said so), the container is `created` again (dockerd's semantics; an
   * AutoRemove container is removed, so `docker run --rm` ends), and the caller gets a 500 naming why.
   */
  private async startFailed(c: ContainerRecord, podName: string, why: string): Promise<never> {
    this.s.ports.close(c);
    const leftovers: string[] = [];
    await this.s.cluster.deletePod(podName).catch((err: Error) => leftovers.push(`pod ${podName} (${err.message})`));
    leftovers.push(...(await this.s.networks.deleteAliasServices(c)));
    if (c.podName === podName) {
      c.podName = undefined;
      c.podCreatedAt = undefined;
      c.status = 'created';
      this.s.changed(c);
    }
    const left = leftovers.length ? `; left behind until their expiry and \`berth gc\`: ${leftovers.join(', ')}` : '';
    // dockerd removes an AutoRemove container whose start failed; `docker run --rm` waits for that removal
    // before it exits. Nothing ran, so there is no output for attached clients to wait for: removed at once
    // (an attach still waiting for the run ends when its container goes).
    await this.autoRemoveFailed(c);
    throw new DockerError(500, `failed to start container ${c.name}: ${why}${left}`);
  }

  /** An AutoRemove container whose start failed is removed, as dockerd does (`docker run --rm` waits for it). */
  private async autoRemoveFailed(c: ContainerRecord): Promise<void> {
    if (c.body.HostConfig?.AutoRemove && this.s.containers.get(c.id) === c) {
      await this.deps.remove(c.id, true, true).catch((err: Error) => process.stderr.write(`berth serve: auto-remove of ${c.name}: ${err.message}\n`));
    }
  }

  containerPorts(c: ContainerRecord): number[] {
    const keys = new Set([...Object.keys(c.body.ExposedPorts ?? {}), ...Object.keys(c.body.HostConfig?.PortBindings ?? {})]);
    return [...keys].map((k) => parseInt(k, 10)).filter((p) => Number.isInteger(p) && p > 0);
  }

  /** Asked on every connection attempt: a connection made while the container starts (or restarts) waits for its pod. */
  async portTarget(c: ContainerRecord): Promise<PortTarget> {
    const deadline = Date.now() + this.s.opts.startTimeoutMs;
    while (c.status === 'created' && Date.now() < deadline) await this.s.nextChange(c, deadline - Date.now());
    if (c.status !== 'running' || !c.podName) throw new PortTargetGone(`container ${c.name} is ${c.status}`);
    return { podName: c.podName, podIP: c.podIP };
  }
}
