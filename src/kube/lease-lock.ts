/**
 * A coordination.k8s.io Lease held by one process at a time, so that two berths never manage the
 * same objects (and `--prune-start` of one never deletes what the other runs). The holder renews it;
 * a holder that dies stops renewing and the lease expires after its duration, so nothing is stuck.
 * Optimistic concurrency (resourceVersion) decides between two processes taking it at once.
 */
import { hostname } from 'node:os';
import type { V1Lease } from '@kubernetes/client-node';
import { CoordinationV1Api, V1MicroTime, type KubeConfig } from './client-node.js';
import { KubeError, statusOf, toKubeError } from './errors.js';

export interface LeaseLockOptions {
  name: string;
  /** How long the lease stays valid without a renewal. */
  durationSeconds: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Annotation set to the moment the lease lapses unless renewed, so `berth gc` can tell a dead holder's lease. */
  expiryAnnotation?: string;
  /** Defaults to host-pid-random. */
  identity?: string;
}

/** Who holds a lease and until when; undefined holder = free. */
export interface LeaseHolder {
  holder?: string;
  expiresAt?: Date;
}

/** Pure: is the lease free for `identity` at `now` (free, expired, or already ours)? */
export function leaseIsFree(lease: V1Lease | undefined, identity: string, now: Date): boolean {
  const spec = lease?.spec;
  if (!spec?.holderIdentity || spec.holderIdentity === identity) return true;
  const renewed = spec.renewTime ?? spec.acquireTime;
  if (!renewed) return true;
  return new Date(renewed).getTime() + (spec.leaseDurationSeconds ?? 15) * 1000 < now.getTime();
}

export class LeaseLock {
  readonly identity: string;
  private readonly api: CoordinationV1Api;
  private renewTimer?: NodeJS.Timeout;
  private held = false;

  constructor(
    kc: KubeConfig,
    private readonly namespace: string,
    private readonly opts: LeaseLockOptions,
  ) {
    this.api = kc.makeApiClient(CoordinationV1Api);
    this.identity = opts.identity ?? `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  }

  /**
   * Takes the lease, waiting while another live holder has it; `onWait` hears who holds it (once per
   * holder). Fails after `timeoutMs` naming the holder.
   */
  async acquire(timeoutMs: number, onWait?: (holder: LeaseHolder) => void): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let announced: string | undefined;
    for (;;) {
      let current = await this.read();
      if (leaseIsFree(current, this.identity, new Date())) {
        if (await this.write(current)) {
          this.held = true;
          return;
        }
        // Another writer got there first: the holder to report is the one it wrote.
        current = (await this.read()) ?? current;
      }
      const holder = holderOf(current);
      if (holder.holder && holder.holder !== announced) {
        announced = holder.holder;
        onWait?.(holder);
      }
      if (Date.now() > deadline) {
        throw new KubeError(
          `the Lease ${this.opts.name} in namespace ${this.namespace} is held by ${holder.holder ?? 'another process'} (until ${holder.expiresAt?.toISOString() ?? '?'} unless renewed): stop that berth, wait for its lease to expire, or raise --lock-timeout`,
        );
      }
      // A free-looking lease lost to a concurrent writer is retried at once; a held one when it could expire.
      const untilExpiry = holder.expiresAt ? holder.expiresAt.getTime() - Date.now() : 0;
      await delay(Math.max(200, Math.min(2000, untilExpiry, deadline - Date.now())));
    }
  }

  /** Renews every third of the duration; `onLost` runs once if another process took the lease or renewals kept failing past it. */
  keepRenewing(onLost: (reason: string) => void): void {
    let lastRenewed = Date.now();
    const tick = async (): Promise<void> => {
      if (!this.held) return;
      try {
        const current = await this.read();
        if (current?.spec?.holderIdentity && current.spec.holderIdentity !== this.identity) {
          this.held = false;
          return onLost(`the Lease ${this.opts.name} was taken by ${current.spec.holderIdentity}`);
        }
        if (await this.write(current)) lastRenewed = Date.now();
      } catch {
        // A blip: the next tick tries again, until the lease would have expired.
      }
      if (Date.now() - lastRenewed > this.opts.durationSeconds * 1000) {
        this.held = false;
        return onLost(`the Lease ${this.opts.name} could not be renewed for ${this.opts.durationSeconds} s`);
      }
      this.renewTimer = setTimeout(() => void tick(), (this.opts.durationSeconds * 1000) / 3);
      this.renewTimer.unref();
    };
    this.renewTimer = setTimeout(() => void tick(), (this.opts.durationSeconds * 1000) / 3);
    this.renewTimer.unref();
  }

  /** Deletes the lease if it is still ours, so the next berth need not wait for it to expire. */
  async release(): Promise<void> {
    clearTimeout(this.renewTimer);
    if (!this.held) return;
    this.held = false;
    const current = await this.read().catch(() => undefined);
    if (current?.spec?.holderIdentity !== this.identity) return;
    await this.api
      .deleteNamespacedLease({
        namespace: this.namespace,
        name: this.opts.name,
        body: { preconditions: { resourceVersion: current.metadata?.resourceVersion } },
      })
      .catch(() => undefined);
  }

  private async read(): Promise<V1Lease | undefined> {
    try {
      return await this.api.readNamespacedLease({ namespace: this.namespace, name: this.opts.name });
    } catch (err) {
      if (statusOf(err).code === 404) return undefined;
      throw toKubeError(err, { verb: 'get', resource: 'leases.coordination.k8s.io', namespace: this.namespace, name: this.opts.name });
    }
  }

  /** Creates or updates the lease as ours; false when another writer got there first (409). */
  private async write(current: V1Lease | undefined): Promise<boolean> {
    const now = new V1MicroTime(Date.now());
    const ours = current?.spec?.holderIdentity === this.identity;
    const lease: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.opts.name,
        namespace: this.namespace,
        labels: { ...(current?.metadata?.labels ?? {}), ...(this.opts.labels ?? {}) },
        annotations: {
          ...(current?.metadata?.annotations ?? {}),
          ...(this.opts.annotations ?? {}),
          ...(this.opts.expiryAnnotation
            ? { [this.opts.expiryAnnotation]: new Date(now.getTime() + this.opts.durationSeconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z') }
            : {}),
        },
        ...(current?.metadata?.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
      },
      spec: {
        holderIdentity: this.identity,
        leaseDurationSeconds: this.opts.durationSeconds,
        acquireTime: ours && current?.spec?.acquireTime ? current.spec.acquireTime : now,
        renewTime: now,
        leaseTransitions: (current?.spec?.leaseTransitions ?? 0) + (ours || !current ? 0 : 1),
      },
    };
    try {
      if (current) await this.api.replaceNamespacedLease({ namespace: this.namespace, name: this.opts.name, body: lease });
      else await this.api.createNamespacedLease({ namespace: this.namespace, body: lease });
      return true;
    } catch (err) {
      if (statusOf(err).code === 409) return false;
      throw toKubeError(err, { verb: current ? 'update' : 'create', resource: 'leases.coordination.k8s.io', namespace: this.namespace, name: this.opts.name });
    }
  }
}

function holderOf(lease: V1Lease | undefined): LeaseHolder {
  const spec = lease?.spec;
  const renewed = spec?.renewTime ?? spec?.acquireTime;
  return {
    holder: spec?.holderIdentity,
    expiresAt: renewed ? new Date(new Date(renewed).getTime() + (spec?.leaseDurationSeconds ?? 15) * 1000) : undefined,
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
