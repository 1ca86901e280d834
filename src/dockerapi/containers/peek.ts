/**
 * Peek pods: reading the files of a container that was created but never started. Docker reads them from
 * the container's filesystem (`docker create img && docker cp c:/etc/x .` is the usual way to get a file
 * out of an image); in Kubernetes there is nothing to read until a pod runs. So berth runs a short-lived
 * pod of the same image kept alive by `sleep`, unpacks the archives already queued for the container into
 * it, and reads through exec. One per container at a time; kept for a few seconds after the last read so
 * `docker cp` (HEAD then GET or PUT) and follow-up copies reuse it (files copied in meanwhile are unpacked
 * into it too); gone on start, rm and shutdown. The engine's pod watch tells this module when a peek pod runs or fails.
 */
import type { Pod as V1Pod, ServeCluster } from '../cluster.js';
import { DockerError } from '../http/http.js';
import { podState } from './pod-state.js';

/** On a peek pod: the short id of the container it shows. */
export const LABEL_PEEK = 'berth.dev/peek-of';

export interface PeekOptions {
  cluster: ServeCluster;
  /** How long an unused peek pod is kept for the next read. */
  idleMs: number;
  startTimeoutMs: number;
}

/** What a read holds while it uses a peek pod. */
export interface PeekLease {
  pod: string;
  release(): void;
}

/** What the engine knows of the container a peek pod shows. */
export interface PeekSource {
  name: string;
  image: string;
  /** A valid pod name for the n-th peek pod of this berth. */
  podName(n: number): string;
  plan(podName: string): Promise<V1Pod>;
  /** Unpacks the archives queued for the container. */
  fill(podName: string): Promise<void>;
}

interface Peek {
  pod: string;
  ready: Promise<void>;
  users: number;
  /** Detached from its container (start, rm, new files): deleted when its last reader is done. */
  retired: boolean;
  idle?: NodeJS.Timeout;
}

/** The peek pod did not run (no `sleep` in the image, a pull failure…): 409 naming why. */
export class PeekFailed extends DockerError {
  constructor(message: string) {
    super(409, message);
  }
}

interface Waiter {
  resolve(): void;
  reject(reason: string): void;
}

export class PeekPods {
  private readonly byContainer = new Map<string, Peek>();
  private readonly waiters = new Map<string, Waiter>();
  private seq = 0;

  constructor(private readonly opts: PeekOptions) {}

  /** The running peek pod of container `id`: the existing one, or a new one, filled before any reader gets it. */
  async acquire(id: string, source: PeekSource): Promise<PeekLease> {
    let peek = this.byContainer.get(id);
    if (!peek) {
      const pod = source.podName(++this.seq);
      const ready = this.start(pod, source);
      peek = { pod, ready, users: 0, retired: false };
      this.byContainer.set(id, peek);
    }
    const p = peek;
    p.users++;
    clearTimeout(p.idle);
    try {
      await p.ready;
    } catch (err) {
      p.users--;
      if (this.byContainer.get(id) === p) this.byContainer.delete(id);
      p.retired = true;
      this.settle(p);
      throw err;
    }
    let released = false;
    return {
      pod: p.pod,
      release: () => {
        if (released) return;
        released = true;
        p.users--;
        this.settle(p);
      },
    };
  }

  /**
   * A file change queued for the container (PUT archive) is applied to its current peek pod too, after
   * whatever it is doing; when that fails the peek pod is retired (the next read makes a new one).
   */
  async update(id: string, apply: (podName: string) => Promise<void>): Promise<void> {
    const p = this.byContainer.get(id);
    if (!p) return;
    p.ready = p.ready.then(() => apply(p.pod));
    await p.ready.catch(() => this.retire(id));
  }

  /** Start or rm: the container's peek pod no longer shows it. */
  async retire(id: string): Promise<void> {
    const p = this.byContainer.get(id);
    if (!p) return;
    this.byContainer.delete(id);
    p.retired = true;
    await this.settle(p);
  }

  async retireAll(): Promise<void> {
    await Promise.all([...this.byContainer.keys()].map((id) => this.retire(id)));
  }

  /** Pod watch events; true when the pod is a peek pod (the engine's containers have nothing to do with it). */
  onPod(type: string, pod: V1Pod): boolean {
    if (!pod.metadata?.labels?.[LABEL_PEEK]) return false;
    const name = pod.metadata.name ?? '';
    const waiter = this.waiters.get(name);
    const s = podState(pod);
    if (type === 'DELETED') this.forget(name);
    if (!waiter) return true;
    if (type === 'DELETED') waiter.reject('the pod was deleted');
    else if (s.status === 'running') waiter.resolve();
    else if (s.status === 'exited') waiter.reject(s.error || `its command exited with code ${s.exitCode ?? '?'}`);
    return true;
  }

  /** A peek pod that ended on its own (deadline, eviction) is not handed out again. */
  private forget(pod: string): void {
    for (const [id, p] of this.byContainer) if (p.pod === pod) this.byContainer.delete(id);
  }

  private async start(pod: string, source: PeekSource): Promise<void> {
    const body = await source.plan(pod);
    let timer: NodeJS.Timeout | undefined;
    const running = new Promise<void>((resolve, reject) => {
      const fail = (reason: string): void =>
        reject(
          new PeekFailed(
            `cannot read files of container ${source.name} before it starts: berth reads them from a short-lived pod of ${source.image} kept running by "sleep", which did not run (${reason}); the image needs a sleep command for this — start the container and copy then`,
          ),
        );
      this.waiters.set(pod, { resolve, reject: fail });
      timer = setTimeout(() => fail(`not running after ${this.opts.startTimeoutMs / 1000} s`), this.opts.startTimeoutMs);
    });
    try {
      await this.opts.cluster.createPod(body);
      await running;
      await source.fill(pod);
    } catch (err) {
      await this.opts.cluster.deletePod(pod).catch((e: Error) => leftBehind(pod, e));
      throw err;
    } finally {
      clearTimeout(timer);
      this.waiters.delete(pod);
    }
  }

  /** Deletes a retired peek pod once unused; keeps an unused current one for `idleMs`. */
  private async settle(p: Peek): Promise<void> {
    if (p.users > 0) return;
    clearTimeout(p.idle);
    if (p.retired) {
      await p.ready.catch(() => undefined);
      await this.opts.cluster.deletePod(p.pod).catch((e: Error) => leftBehind(p.pod, e));
      return;
    }
    p.idle = setTimeout(() => {
      for (const [id, q] of this.byContainer) if (q === p) void this.retire(id);
    }, this.opts.idleMs);
    p.idle.unref();
  }
}

/** A peek pod that could not be deleted (after retries) is said so; its expiry and `berth gc` end it. */
function leftBehind(pod: string, err: Error): void {
  process.stderr.write(
    `berth serve: peek pod ${pod} could not be deleted (${err.message}); it expires at its berth.dev/expires-at and \`berth gc\` removes it then\n`,
  );
}
