/**
 * A container's removal and the cleanup of what it leaves (its pod unless `--keep-failed` keeps it, alias
 * Services, deny policy, anonymous volumes, spilled archives, exec records); Ryuk's reaping; and the
 * cleanup of the whole instance at shutdown.
 */
import { rfc3339 } from '../runtime/plan.js';
import { ANNOTATION_EXPIRES_AT } from '../runtime/pod-rules.js';
import { DockerError, conflict } from './http/http.js';
import type { ContainerRecord } from './model.js';
import { ANNOTATION_KEPT_FAILED } from './recovery.js';
import { reaperMatches } from './ryuk/ryuk.js';
import { leftBehind, pruneInstance } from './instance-cleanup.js';
import { denyPolicyName } from './networks/network-isolation.js';
import type { EngineState } from './engine-state.js';

export class Removals {
  private readonly removals = new Map<string, Promise<void>>();

  constructor(private readonly s: EngineState) {}

  async reap(filters: string[][], self: string): Promise<void> {
    for (const c of [...this.s.containers.values()]) {
      if (c.id !== self && reaperMatches(filters, c.body.Labels ?? {}))
        await this.remove(c.id, true, true).catch((err: Error) => process.stderr.write(`berth serve: reaper: ${err.message}\n`));
    }
    for (const n of [...this.s.networks.values()]) {
      if (n.builtin || !reaperMatches(filters, n.labels)) continue;
      try {
        this.s.networks.remove(n.id);
      } catch {
        /* still in use */
      }
    }
    for (const v of [...this.s.volumes.values()]) if (reaperMatches(filters, v.labels)) await this.s.volumes.remove(v.name, true).catch(() => undefined);
  }

  /**
   * Removes a container and its pod. A removal already under way is joined (same outcome). When the pod
   * or a Service cannot be deleted (after retries) the container is `dead`, the caller gets a 500 naming
   * what is left, `wait condition=removed` ends with that error, and the next `rm` tries again.
   */
  async remove(ref: string, force: boolean, withVolumes = false): Promise<void> {
    const c = this.s.container(ref);
    // dockerd names the container as the client did
    if (c.status === 'running' && !force)
      throw conflict(`cannot remove container "${ref}": container is running: stop the container before removing or force remove`);
    let removal = this.removals.get(c.id);
    if (!removal) {
      removal = this.removeNow(c, withVolumes).finally(() => this.removals.delete(c.id));
      this.removals.set(c.id, removal);
    }
    return removal;
  }

  private async removeNow(c: ContainerRecord, withVolumes: boolean): Promise<void> {
    await this.s.ryuk.finish(c);
    c.status = 'removing';
    this.s.changed(c);
    this.s.ports.close(c);
    await this.s.peeks.retire(c.id);
    const failed: string[] = [];
    if (c.podName) {
      const podName = c.podName;
      try {
        if (!(await this.keepIfFailed(c))) await this.s.cluster.deletePod(podName);
      } catch (err) {
        failed.push(`pod ${podName} (${(err as Error).message})`);
      }
    }
    failed.push(...(await this.s.networks.deleteAliasServices(c)));
    if (c.plan.hostConfig.denyNetwork) {
      const policy = denyPolicyName(c);
      await this.s.cluster.deleteNetworkPolicy(policy).catch((err: Error) => failed.push(`networkpolicy ${policy} (${err.message})`));
    }
    if (failed.length) {
      c.status = 'dead';
      c.removalError = `could not remove container ${c.name}: ${failed.join(', ')} could not be deleted; they expire at their berth.dev/expires-at and \`berth gc\` removes them then; \`docker rm -f ${c.name}\` tries again`;
      c.removalFailures = (c.removalFailures ?? 0) + 1;
      this.s.changed(c);
      throw new DockerError(500, c.removalError);
    }
    this.s.containers.delete(c.id);
    this.s.spill.drop([...c.copiedArchives, ...c.pendingArchives]);
    this.s.execs.forgetContainer(c.id);
    c.health = undefined;
    // before `destroy`: `docker run --rm` ends on it, and its anonymous volumes are gone by then
    if (withVolumes) await this.removeAnonymousVolumes(c);
    this.s.emit('container', 'destroy', c);
    this.s.changed(c);
  }

  /** `rm -v` and `--rm`: the container's anonymous volumes go with it (named ones stay), as with dockerd. */
  private async removeAnonymousVolumes(c: ContainerRecord): Promise<void> {
    for (const a of c.anonymousVolumes ?? []) {
      if (!this.s.volumes.has(a.name)) continue; // never started: no claim was made
      // a volume another container mounts by its name stays, as with dockerd
      await this.s.volumes.remove(a.name, false).catch((err: Error) => leftBehind(`anonymous volume ${a.name} of container ${c.name}`, err));
    }
  }

  async shutdown(): Promise<void> {
    await this.s.peeks.retireAll();
    await this.s.ryuk.finishAll();
    for (const c of this.s.containers.values()) {
      this.s.ports.close(c);
      await this.keepIfFailed(c).catch(() => false);
    }
    await this.pruneCluster();
    this.s.spill.close();
  }

  /**
   * `--keep-failed`: a container that exited non-zero (or never started) leaves its pod for debugging,
   * marked so that shutdown, `--prune-start` and recovery pass it by, and expiring when the keep ends.
   */
  async keepIfFailed(c: ContainerRecord): Promise<boolean> {
    const keep = this.s.opts.keepFailedSeconds ?? 0;
    if (keep <= 0 || !c.podName || (c.status !== 'exited' && c.status !== 'removing')) return false;
    if (c.exitCode === 0 && !c.error) return false;
    const until = rfc3339(new Date(Date.now() + keep * 1000));
    await this.s.cluster.annotatePod(c.podName, { [ANNOTATION_EXPIRES_AT]: until, [ANNOTATION_KEPT_FAILED]: until });
    return true;
  }

  /** Deletes every pod, Service and claim of this instance (shutdown, and `--prune-start` for a crashed predecessor). */
  pruneCluster(): Promise<void> {
    return pruneInstance(this.s.cluster, this.s.opts.owner);
  }
}
