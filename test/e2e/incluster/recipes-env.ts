// What the in-cluster tests share: the recipes of deploy/ rendered with kustomize, split into what the dev
// cluster serves (applied for real) and what it does not (Tekton's Task, a CronJob, Argo CD's Deployment patch:
// their pod templates are turned into Pods), the berth images, and the check that the cluster gives pods a
// ServiceAccount identity (without it, berth in a pod cannot call the API).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Container, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import YAML from 'yaml';
import { kubectl, kubectlOk, repoRoot, runCommand } from '../harness/cluster.js';

export const BERTH_IMAGE = 'localhost/berth/berth:dev';
/** berth's image with kubectl and the docker CLI under /opt/tools, and a `kustomize` adapter in /opt/kustomize. */
export const TOOLS_IMAGE = 'localhost/berth/berth-tools:dev';
/** The image name the recipes give users to replace (kustomize `images:`). */
export const RECIPE_IMAGE = 'registry.example.com/berth/berth:0.1.0';

/** Kinds the dev cluster serves: applied for real. Anything else is checked through its pod template. */
export const SERVED_KINDS = new Set(['Namespace', 'ServiceAccount', 'Role', 'RoleBinding', 'ConfigMap', 'Secret', 'Pod', 'PodTemplate']);

export type Doc = Record<string, any>;

export const recipeDir = (name: string) => join(repoRoot, 'deploy', name);
export const recipeFile = (name: string, file: string) => readFileSync(join(recipeDir(name), file), 'utf8');

/** `kubectl kustomize deploy/NAME`: the documents a user's `kubectl apply -k` would send. */
export async function renderRecipe(name: string): Promise<Doc[]> {
  const r = await runCommand('kubectl', ['kustomize', recipeDir(name)]);
  if (r.code !== 0) throw new Error(`kubectl kustomize deploy/${name} failed:\n${r.stderr}`);
  return YAML.parseAllDocuments(r.stdout).map((d) => d.toJSON() as Doc);
}

export const served = (docs: Doc[]) => docs.filter((d) => SERVED_KINDS.has(d.kind));
export const notServed = (docs: Doc[]) => docs.filter((d) => !SERVED_KINDS.has(d.kind));
export const toYaml = (docs: Doc[]) => docs.map((d) => YAML.stringify(d)).join('---\n');

/** Applies documents with kubectl (field validation Strict, as kubectl does by default), in `namespace` when they name none. */
export async function apply(docs: Doc[], namespace?: string): Promise<string> {
  return kubectlOk(['apply', ...(namespace ? ['-n', namespace] : []), '-f', '-'], { input: toYaml(docs) });
}

/** Whether pods get a ServiceAccount identity (TokenRequest; the token volume follows from it). */
export async function servesServiceAccountTokens(namespace: string): Promise<boolean> {
  const r = await kubectl(['create', 'token', 'default', '-n', namespace, '--duration=10m']);
  return r.code === 0;
}

export function replaceImage<T>(doc: T, from: string, to: string): T {
  return JSON.parse(JSON.stringify(doc).split(from).join(to)) as T;
}

/** Tekton's `$(params.x)` and `$(context.taskRun.name)` in a string. */
function tektonSubstitute(text: string, params: Record<string, string>, taskRun: string): string {
  return text.replace(/\$\(params\.([a-zA-Z0-9_-]+)\)/g, (_m, p: string) => params[p] ?? _m).replace(/\$\(context\.taskRun\.name\)/g, taskRun);
}

/**
 * The pod Tekton makes of a Task (sidecars and steps side by side; a step's script run by sh), with the
 * params' defaults unless given. Tekton's own entrypoint ordering of steps is left out: this Task has one.
 */
export function podFromTask(task: Doc, o: { name: string; serviceAccount: string; params?: Record<string, string> }): V1Pod {
  const params: Record<string, string> = Object.fromEntries((task.spec.params ?? []).map((p: Doc) => [p.name, p.default ?? '']));
  Object.assign(params, o.params ?? {});
  const sub = <T>(v: T): T => JSON.parse(JSON.stringify(v), (_k, x) => (typeof x === 'string' ? tektonSubstitute(x, params, o.name) : x)) as T;
  const sidecars: V1Container[] = (task.spec.sidecars ?? []).map((s: Doc) => sub(s));
  const steps: V1Container[] = (task.spec.steps ?? []).map((s: Doc) => {
    const { script, ...rest } = sub(s) as Doc;
    return { ...rest, ...(script ? { command: ['sh', '-c', script] } : {}) } as V1Container;
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name },
    spec: { serviceAccountName: o.serviceAccount, restartPolicy: 'Never', containers: [...sidecars, ...steps] },
  };
}

/** The pod a CronJob's Job would run. */
export function podFromCronJob(cronJob: Doc, name: string): V1Pod {
  const template = cronJob.spec.jobTemplate.spec.template;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: template.metadata?.labels }, spec: template.spec as V1PodSpec };
}

/** The values of config.toml the recipe relies on (TOML arrays of strings are JSON arrays; one line each). */
export function gitlabRunnerConfig(toml: string): {
  namespace: string;
  serviceAccount: string;
  environment: string[];
  serviceImage: string;
  serviceCommand: string[];
  automountToken: boolean;
} {
  const one = (key: string): string => {
    const m = new RegExp(`^\\s*${key}\\s*=\\s*(.+?)\\s*(#.*)?$`, 'm').exec(toml);
    if (!m) throw new Error(`config.toml has no ${key}`);
    return m[1]!;
  };
  const array = (key: string): string[] => {
    const m = new RegExp(`^\\s*${key}\\s*=\\s*(\\[[^\\]]*\\])`, 'm').exec(toml);
    if (!m) throw new Error(`config.toml has no ${key} array`);
    return JSON.parse(m[1]!.replace(/,\s*\]$/, ']')) as string[];
  };
  return {
    namespace: JSON.parse(one('namespace')),
    serviceAccount: JSON.parse(one('service_account')),
    environment: array('environment'),
    serviceImage: JSON.parse(one('name')),
    serviceCommand: array('command'),
    automountToken: one('automount_service_account_token') === 'true',
  };
}

/** The pod GitLab's Kubernetes executor makes for a job: the build container and the service, side by side. */
export function podFromGitlabConfig(toml: string, o: { name: string; buildImage: string; script: string; serviceImage: string }): V1Pod {
  const c = gitlabRunnerConfig(toml);
  const env = c.environment.map((e) => ({ name: e.slice(0, e.indexOf('=')), value: e.slice(e.indexOf('=') + 1) }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name },
    spec: {
      serviceAccountName: c.serviceAccount,
      automountServiceAccountToken: c.automountToken,
      restartPolicy: 'Never',
      containers: [
        { name: 'build', image: o.buildImage, command: ['sh', '-c', o.script], env },
        { name: 'svc-0', image: o.serviceImage, args: c.serviceCommand, env },
      ],
    },
  };
}

/** A pod's container log (merged streams). */
export async function containerLog(namespace: string, pod: string, container: string): Promise<string> {
  const r = await kubectl(['logs', '-n', namespace, pod, '-c', container]);
  return r.stdout + r.stderr;
}

/** berth's objects in a namespace, as `kind/name`. */
export async function berthObjects(namespace: string): Promise<string[]> {
  const out = await kubectlOk([
    '-n',
    namespace,
    'get',
    'pods,configmaps,networkpolicies,services,persistentvolumeclaims',
    '-l',
    'app.kubernetes.io/managed-by=berth',
    '-o',
    'name',
  ]);
  return out.split('\n').filter(Boolean);
}
