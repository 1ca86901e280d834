/**
 * The create path: a container judged (containers/create-plan.ts), its record made, its name taken and its volumes
 * made; and the pod template a container is laid on, which the create checks and every start and peek reads.
 */
import { checkOneContainer, loadPodTemplate } from '../runtime/pod-template.js';
import type { PodTemplateSource } from '../runtime/workload.js';
import { statusOf } from '../kube/errors.js';
import { DockerError, badRequest, conflict } from './http/http.js';
import { LABEL_POD_TEMPLATE, planCreate, templateNameOf, type CreatePlan } from './containers/create-plan.js';
import { asArgv, freshRunState, newId, type ContainerRecord, type CreateBody } from './model.js';
import { NAME_RE } from './networks/networks.js';
import type { Platform } from './containers/platform.js';
import { LABEL_ANONYMOUS } from './volumes/volumes.js';
import { generatedName } from './containers/names.js';
import type { EngineState } from './engine-state.js';

export class CreatePath {
  constructor(private readonly s: EngineState) {}

  /** The template a create with these labels would be laid on (create checks it: a missing one is a 400 then, not at start). */
  podTemplateFor(labels: Record<string, string> | null | undefined): Promise<PodTemplateSource | undefined> {
    return this.readTemplate(templateNameOf(labels));
  }

  /**
   * The template of a container's pod: the PodTemplate object its label `berth.dev/pod-template` names (read
   * at every start, so edits apply), else the operator's `--pod-template`. Never a file: API clients must not
   * read files on berth's machine.
   */
  async readTemplate(name: string | undefined): Promise<PodTemplateSource | undefined> {
    if (!name) return this.s.opts.podTemplate;
    if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name))
      throw badRequest(
        `${LABEL_POD_TEMPLATE}="${name}" must name a PodTemplate object in namespace ${this.s.cluster.namespace} (files are for the operator's --pod-template)`,
      );
    try {
      const template = await loadPodTemplate(name, (n) => this.s.cluster.readPodTemplate(n), `label ${LABEL_POD_TEMPLATE}`);
      checkOneContainer(template);
      return template;
    } catch (err) {
      if (statusOf(err).code === 404 || /not found/i.test((err as Error).message)) {
        throw badRequest(
          `${LABEL_POD_TEMPLATE}: PodTemplate ${name} not found in namespace ${this.s.cluster.namespace} (create it with kubectl apply, or drop the label)`,
        );
      }
      throw err;
    }
  }

  /**
   * A container as dockerd makes it: every check first (bad input changes nothing; containers/create-plan.ts judges the
   * request once, and the record keeps the plan), then its name taken and its volumes made (named and
   * anonymous: `docker volume ls` lists them right after create), then its create event.
   */
  async create(name: string | null, request: CreateBody, platform?: Platform, opts: { builder?: boolean } = {}): Promise<ContainerRecord> {
    if (!request.Image || typeof request.Image !== 'string') throw badRequest('config is missing the Image');
    if (name !== null && name !== '' && !NAME_RE.test(name.replace(/^\//, '')))
      throw badRequest(`Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
    // a build's builder (images/build.ts) is berth's own: its image is no image of the store, its privilege berth's choice
    const img = opts.builder ? undefined : this.s.images.find(request.Image);
    const planned = planCreate(request, img?.info?.config, opts.builder ? { ...this.s.policy, allowPrivileged: true } : this.s.policy);
    const id = newId();
    const clean = name ? name.replace(/^\//, '') : generatedName(id);
    for (const c of this.s.containers.values()) {
      if (c.name === clean)
        throw conflict(
          `Conflict. The container name "/${clean}" is already in use by container "${c.id}". You have to remove (or rename) that container to be able to reuse that name.`,
        );
    }
    const c = this.newRecord(id, clean, planned, platform, img?.pullRef);
    this.s.containers.set(id, c);
    try {
      await this.s.volumes.ensureAll([...planned.namedVolumes, ...planned.anonymousVolumes.map((a) => ({ name: a.name, labels: { [LABEL_ANONYMOUS]: '' } }))]);
    } catch (err) {
      this.s.containers.delete(id);
      throw new DockerError(500, `failed to create container ${clean}: could not make its volumes: ${(err as Error).message}`);
    }
    this.s.emit('container', 'create', c);
    return c;
  }

  private newRecord(id: string, name: string, planned: CreatePlan, platform: Platform | undefined, pullRef: string | undefined): ContainerRecord {
    const { body, plan, anonymousVolumes, namedUser } = planned;
    return {
      id,
      name,
      created: new Date(),
      image: body.Image!,
      ...(pullRef ? { pullRef } : {}),
      body,
      plan,
      cmd: asArgv(body.Cmd),
      entrypoint: asArgv(body.Entrypoint),
      ...freshRunState(),
      networks: this.memberships(planned.networks),
      warnings: planned.warnings,
      ...(anonymousVolumes.length ? { anonymousVolumes } : {}),
      ...(platform ? { platform } : {}),
      ...(namedUser ? { namedUser } : {}),
    };
  }

  /** network id → aliases, for the networks a create names. */
  private memberships(networks: CreatePlan['networks']): Map<string, string[]> {
    const byId = new Map<string, string[]>();
    for (const { name, aliases } of networks) {
      const n = this.s.networks.find(name);
      byId.set(n.id, [...(byId.get(n.id) ?? []), ...aliases]);
    }
    return byId;
  }
}
