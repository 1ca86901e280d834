/**
 * Targets, as runs see them: where a step runs (kubeconfig, context, namespace) and what it may do
 * there (pod template, privileged). `--target NAME` picks a stored target (target-store.ts); without
 * one, a step runs where kubectl would (the current context), under the name of that context.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { resolveKubeConfig } from '../kube/config.js';
import { checkOneContainer, loadPodTemplate, PodTemplateError } from '../runtime/pod-template.js';
import { loadRunSettings } from '../runtime/settings.js';
import { checkTargetName, findTarget, readTargets, targetsFile, TargetStoreError, type Target } from './target-store.js';

/** What a run takes from its target besides the cluster. */
export interface TaskTarget {
  /** The stored target's name; absent: the current kubeconfig context's name (resolved by the run). */
  name?: string;
  /** A pod template file laid under every pod of the run (runtime/pod-template.ts). */
  podTemplate?: string;
  allowPrivileged: boolean;
}

export interface ClusterFlags {
  target?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

/**
 * The settings a run is started with (BERTH_KUBECONFIG/CONTEXT/NAMESPACE from the flags or the target)
 * and its target. Refuses an unknown target, a landed one, and a target mixed with cluster flags.
 */
export function targetForRun(flags: ClusterFlags, env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; target: TaskTarget } {
  const out: NodeJS.ProcessEnv = { ...env };
  if (flags.target === undefined) {
    if (flags.kubeconfig) out.BERTH_KUBECONFIG = flags.kubeconfig;
    if (flags.context) out.BERTH_CONTEXT = flags.context;
    if (flags.namespace) out.BERTH_NAMESPACE = flags.namespace;
    return { env: out, target: { allowPrivileged: false } };
  }
  const mixed = (['kubeconfig', 'context', 'namespace'] as const).filter((k) => flags[k] !== undefined);
  if (mixed.length)
    throw new TargetStoreError(
      `--target ${flags.target} says where the steps run: drop ${mixed.map((k) => (k === 'namespace' ? '-n' : `--${k}`)).join(', ')} (or change the target with berth task target add ${flags.target} ...)`,
    );
  const file = targetsFile(env);
  const t = findTarget(readTargets(file), flags.target, file);
  if (t.landed)
    throw new TargetStoreError(
      `target ${t.name} is landed (berth task target land): no new steps start there. Use it again with \`berth task target unland ${t.name}\`, or run elsewhere with another --target`,
    );
  if (t.kubeconfig) out.BERTH_KUBECONFIG = t.kubeconfig;
  else delete out.BERTH_KUBECONFIG;
  out.BERTH_CONTEXT = t.context;
  out.BERTH_NAMESPACE = t.namespace;
  return { env: out, target: { name: t.name, podTemplate: t.podTemplate, allowPrivileged: t.allowPrivileged } };
}

/**
 * The name of the target a run with `--target flag` (or none) uses: the flag, else the name of the
 * kubeconfig context the run resolves (what berth keys per-target state such as caches by).
 */
export function activeTargetName(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (flag !== undefined) return flag;
  const s = loadRunSettings(env);
  return resolveKubeConfig({ kubeconfig: s.kubeconfig, context: s.context, namespace: s.namespace, env }).kc.getCurrentContext();
}

export interface AddFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  podTemplate?: string;
  allowPrivileged?: boolean;
}

/**
 * A new target from `target add` flags, checked without the cluster: the kubeconfig resolves, the
 * context exists, the pod template parses. The context and namespace are pinned (a later
 * `kubectl config use-context` does not move the target); paths are made absolute.
 */
export async function newTarget(name: string, flags: AddFlags, env: NodeJS.ProcessEnv, cwd: string): Promise<Target> {
  checkTargetName(name);
  const kubeconfig = flags.kubeconfig ? path.resolve(cwd, flags.kubeconfig) : undefined;
  const resolved = resolveKubeConfig({ kubeconfig, context: flags.context, namespace: flags.namespace, env });
  let podTemplate: string | undefined;
  if (flags.podTemplate) {
    podTemplate = path.resolve(cwd, flags.podTemplate);
    if (!existsSync(podTemplate)) throw new PodTemplateError(`pod template file ${podTemplate} does not exist (--pod-template)`);
    checkOneContainer(await loadPodTemplate(podTemplate, () => Promise.reject(new Error('unreachable')), '--pod-template'));
  }
  return {
    name,
    ...(kubeconfig ? { kubeconfig } : {}),
    context: resolved.kc.getCurrentContext(),
    namespace: resolved.namespace,
    ...(podTemplate ? { podTemplate } : {}),
    allowPrivileged: Boolean(flags.allowPrivileged),
    landed: false,
  };
}

/** How to reach a stored target's cluster. */
export function connectTarget(t: Target, env: NodeJS.ProcessEnv): ReturnType<typeof resolveKubeConfig> {
  return resolveKubeConfig({ kubeconfig: t.kubeconfig, context: t.context, namespace: t.namespace, env });
}
