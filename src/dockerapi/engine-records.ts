/**
 * A container's record on its pod: what a berth taking the container over reads back (recovery.ts), written
 * again after each change it must know (a rename, a network joined or left, files copied in), and the
 * takeover itself.
 */
import { ANNOTATION_CONTAINER } from '../runtime/sandbox-plan.js';
import { statusOf } from '../kube/errors.js';
import { badRequest, conflict } from './http/http.js';
import type { HeldTar } from '../runtime/files.js';
import { replanContainer } from './containers/create-plan.js';
import type { ContainerRecord } from './model.js';
import { NAME_RE } from './networks/networks.js';
import { recover, savedRecord } from './recovery.js';
import { leftBehind } from './instance-cleanup.js';
import type { EngineState, ExecCollect } from './engine-state.js';

export class RecordNotes {
  /** the last write of each container's record onto its pod (noteRecord) */
  private readonly recordNotes = new WeakMap<ContainerRecord, Promise<void>>();

  constructor(
    private readonly s: EngineState,
    private readonly deps: { execCollect: ExecCollect },
  ) {}

  /** Takes over what an earlier berth with the same instance left (recovery.ts). */
  recover(): Promise<number> {
    return recover({
      cluster: this.s.cluster,
      owner: this.s.opts.owner,
      containers: this.s.containers,
      networks: this.s.networks,
      volumes: this.s.volumes,
      images: this.s.images,
      openPorts: (c) => this.s.ports.open(c),
      replan: (body) => replanContainer(body, this.s.policy),
      leftBehind,
    });
  }

  async rename(ref: string, name: string): Promise<void> {
    const c = this.s.container(ref);
    const clean = name.replace(/^\//, '');
    if (!NAME_RE.test(clean)) throw badRequest(`Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
    for (const o of this.s.containers.values())
      if (o !== c && o.name === clean)
        throw conflict(
          `Conflict. The container name "/${clean}" is already in use by container "${o.id}". You have to remove (or rename) that container to be able to reuse that name.`,
        );
    const was = c.name;
    c.name = clean;
    this.s.emit('container', 'rename', c);
    await this.noteRecord(c, `its new name (a berth taking it over would call it ${was})`);
  }

  async connect(netRef: string, containerRef: string, aliases: string[]): Promise<void> {
    const n = this.s.networks.find(netRef);
    const c = this.s.container(containerRef);
    await this.s.networks.connect(n.id, c, aliases);
    await this.noteRecord(c, `its connection to ${n.name}`);
    await this.s.networks.introduce(n.id, c, (o, argv) => this.deps.execCollect(o, argv));
  }

  async disconnect(netRef: string, containerRef: string): Promise<void> {
    const n = this.s.networks.find(netRef);
    const c = this.s.container(containerRef);
    await this.s.networks.disconnect(n.id, c, (o, argv) => this.deps.execCollect(o, argv));
    await this.noteRecord(c, `its disconnection from ${n.name}`);
  }

  /** `archive` may still be arriving (containers/container-files.ts starts the copy meanwhile). */
  async putArchive(ref: string, path: string, archive: Promise<HeldTar>): Promise<void> {
    const c = this.s.container(ref);
    await this.s.files.put(c, path, archive);
    // A berth that takes this container over learns from its pod that files were copied in.
    await this.noteRecord(c, 'the copy into it (a berth taking it over would restart it without those files)');
  }

  /** What a berth taking the container over reads back from its pod (recovery.ts). */
  recordAnnotation(c: ContainerRecord): string {
    return JSON.stringify(savedRecord(c, this.s.networks));
  }

  /**
   * Writes c's record onto its pod again after a change that a berth taking the container over must know
   * (name, networks, copied files). One container's writes go one after another, each with the record as it
   * is when it goes, so the last one written is the newest. A container without a pod has nothing to note:
   * its next pod is made with the record. A pod gone meanwhile is no failure for the same reason.
   */
  noteRecord(c: ContainerRecord, what: string): Promise<void> {
    const write = async (): Promise<void> => {
      const pod = c.podName;
      if (!pod || !this.s.containers.has(c.id)) return;
      try {
        await this.s.cluster.annotatePod(pod, { [ANNOTATION_CONTAINER]: this.recordAnnotation(c) });
      } catch (err) {
        if (statusOf(err).code === 404) return;
        process.stderr.write(`berth serve: could not note ${what} on the pod ${pod} of ${c.name}: ${(err as Error).message}\n`);
      }
    };
    const next = (this.recordNotes.get(c) ?? Promise.resolve()).then(write, write);
    this.recordNotes.set(c, next);
    return next;
  }
}
