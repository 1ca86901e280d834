/**
 * Pod templates chosen by the user: a file (a Pod, a PodTemplate or a bare template) or the name of a
 * PodTemplate object in the namespace. The template is the only thing that may loosen berth's secure
 * defaults; everything berth itself decides (command, ownership labels, deadline, restart policy) wins.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { V1Container, V1EnvVar, V1Pod, V1PodSpec, V1PodTemplate, V1ResourceRequirements } from '@kubernetes/client-node';
import YAML from 'yaml';
import type { PodTemplateSource } from './workload.js';

export class PodTemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PodTemplateError';
  }
}

/** File paths contain a `/` or end in .yaml/.yml/.json; anything else names a PodTemplate object. */
export function isPodTemplateFile(ref: string): boolean {
  return ref.includes('/') || /\.ya?ml$|\.json$/.test(ref);
}

/** `hint` says where the reference came from (a flag, a config key), for the error message. */
export async function loadPodTemplate(ref: string, readObject: (name: string) => Promise<V1PodTemplate>, hint: string): Promise<PodTemplateSource> {
  if (isPodTemplateFile(ref)) {
    if (!existsSync(ref)) throw new PodTemplateError(`pod template file ${ref} does not exist (${hint})`);
    let doc: Record<string, unknown> | null;
    try {
      doc = YAML.parse(readFileSync(ref, 'utf8')) as Record<string, unknown> | null;
    } catch (err) {
      throw new PodTemplateError(`pod template file ${ref} is not valid YAML: ${(err as Error).message} (${hint})`);
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc))
      throw new PodTemplateError(`pod template file ${ref} must hold a Pod, a PodTemplate or a template mapping (${hint})`);
    const template = doc.kind === 'PodTemplate' ? doc.template : doc.kind === 'Pod' ? { metadata: doc.metadata, spec: doc.spec } : doc;
    return { template: (template ?? {}) as PodTemplateSource['template'], origin: ref };
  }
  const pt = await readObject(ref);
  return { template: withoutDefaultedPullPolicies((pt.template ?? {}) as PodTemplateSource['template']), origin: `PodTemplate ${ref}` };
}

/**
 * The API server gives every container of a stored PodTemplate the pull policy its image implies (`Always` for an
 * untagged or `:latest` image, else `IfNotPresent`): read back, that policy is nobody's choice, and it was made for
 * the template's placeholder image, not for the image berth puts there. Such a policy is dropped; any other stays.
 */
export function withoutDefaultedPullPolicies(template: PodTemplateSource['template']): PodTemplateSource['template'] {
  const spec = template.spec as { containers?: V1Container[]; initContainers?: V1Container[] } | undefined;
  if (!spec?.containers?.length) return template;
  const containers = spec.containers.map((c) =>
    c.imagePullPolicy && c.imagePullPolicy === defaultPullPolicy(c.image) ? { ...c, imagePullPolicy: undefined } : c,
  );
  return { ...template, spec: { ...template.spec, containers } };
}

function defaultPullPolicy(image: string | undefined): string {
  const last = (image ?? '').split('/').pop() ?? '';
  if (last.includes('@')) return 'IfNotPresent';
  const tag = last.includes(':') ? last.slice(last.lastIndexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/**
 * Lays `template` under a pod berth planned (its first container is berth's main container): the
 * template's fields fill what berth left open, its security contexts may loosen berth's, its volumes,
 * init containers, env and mounts come first, and berth's own values win everywhere else. A template
 * with more than one container is refused: the pod's life is the one Docker container's life.
 * No template: the pod as berth planned it.
 */
export function layPodTemplate(pod: V1Pod, source: PodTemplateSource | undefined): V1Pod {
  if (!source) return pod;
  checkOneContainer(source);
  const template = source.template;
  const tspec = (template.spec ?? {}) as Partial<V1PodSpec>;
  const spec = pod.spec!;
  const [main, ...rest] = spec.containers;
  const merged: V1PodSpec = {
    ...tspec,
    ...spec,
    // The template is the user's deliberate choice: it may loosen what berth set, except the user the
    // client asked for by name (docker --user).
    securityContext: {
      ...(spec.securityContext ?? {}),
      ...(tspec.securityContext ?? {}),
      ...pickDefined(spec.securityContext ?? {}, ['runAsUser', 'runAsGroup']),
    },
    automountServiceAccountToken: tspec.automountServiceAccountToken ?? spec.automountServiceAccountToken,
    terminationGracePeriodSeconds: tspec.terminationGracePeriodSeconds ?? spec.terminationGracePeriodSeconds,
    // berth's deadline bounds every pod; a template may only shorten it.
    activeDeadlineSeconds: minDefined(spec.activeDeadlineSeconds, tspec.activeDeadlineSeconds),
    containers: [layContainer(main, tspec.containers?.[0]), ...rest],
  };
  const volumes = [...(tspec.volumes ?? []), ...(spec.volumes ?? [])];
  if (volumes.length) merged.volumes = volumes;
  const inits = [...(tspec.initContainers ?? []), ...(spec.initContainers ?? [])];
  if (inits.length) merged.initContainers = inits;
  if (tspec.nodeSelector || spec.nodeSelector) merged.nodeSelector = { ...(tspec.nodeSelector ?? {}), ...(spec.nodeSelector ?? {}) };
  if (tspec.hostAliases || spec.hostAliases) merged.hostAliases = [...(tspec.hostAliases ?? []), ...(spec.hostAliases ?? [])];
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      labels: { ...(template.metadata?.labels ?? {}), ...(pod.metadata?.labels ?? {}) },
      annotations: { ...(template.metadata?.annotations ?? {}), ...(pod.metadata?.annotations ?? {}) },
    },
    spec: merged,
  };
}

/** Refuses a template with more than one container (berth serve checks this when it loads a template). */
export function checkOneContainer(source: PodTemplateSource): void {
  const containers = (source.template.spec as Partial<V1PodSpec> | undefined)?.containers ?? [];
  if (containers.length > 1) {
    throw new PodTemplateError(
      `${source.origin} has ${containers.length} containers: berth uses the first as the base of every container and cannot run others beside it (use initContainers, or one container)`,
    );
  }
}

function layContainer(main: V1Container, base: V1Container | undefined): V1Container {
  if (!base) return main;
  const out: V1Container = { ...base, ...main, securityContext: { ...(main.securityContext ?? {}), ...(base.securityContext ?? {}) } };
  const env = mergeEnv(base.env, main.env);
  if (env.length) out.env = env;
  const mounts = [...(base.volumeMounts ?? []), ...(main.volumeMounts ?? [])];
  if (mounts.length) out.volumeMounts = mounts;
  const resources = mergeResources(base.resources, main.resources);
  if (resources) out.resources = resources;
  if (base.envFrom?.length) out.envFrom = base.envFrom;
  return out;
}

function pickDefined<T extends object>(from: T, keys: Array<keyof T>): Partial<T> {
  const out: Partial<T> = {};
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

function mergeEnv(base: V1EnvVar[] | undefined, own: V1EnvVar[] | undefined): V1EnvVar[] {
  const names = new Set((own ?? []).map((e) => e.name));
  return [...(base ?? []).filter((e) => !names.has(e.name)), ...(own ?? [])];
}

function mergeResources(base: V1ResourceRequirements | undefined, own: V1ResourceRequirements | undefined): V1ResourceRequirements | undefined {
  if (!base && !own) return undefined;
  const requests = { ...(base?.requests ?? {}), ...(own?.requests ?? {}) };
  const limits = { ...(base?.limits ?? {}), ...(own?.limits ?? {}) };
  return { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
}
