/**
 * A task → its pod and its params Secret. Pure, so every security default is unit-tested.
 *
 * The pod has one emptyDir, mounted at the working directory in three containers:
 * - `inputs` (init, helper image with sh and tar): unpacks the tar of the inputs berth streams into it,
 *   refuses to finish unless the archive's last entry (a marker) arrived, creates the outputs empty;
 * - `task`: the task's image and run.path, started in run.dir; its exit code is the container's
 *   terminated state, its output the container's log;
 * - `outputs` (helper image, only when the task has outputs): holds the pod open after the task ended,
 *   so berth can read the outputs back with `tar -c` through exec, as often as it takes.
 * Params reach the task as env vars read from a Secret (secretKeyRef), never as values in the spec.
 */
import type { V1Container, V1EnvVar, V1Pod, V1Secret } from '@kubernetes/client-node';
import { LABEL_RUN, rfc3339 } from '../runtime/plan.js';
import { planFeedReceiver, type FeedPlan } from '../runtime/feed-receiver.js';
import { ANNOTATION_EXPIRES_AT, lockedDownContainer, lockedDownPod, ownershipLabels } from '../runtime/pod-rules.js';
import type { TaskConfig } from './config.js';
import type { Layout } from './layout.js';
import { fetchScript, serveCommand } from './artifact-stream.js';
import { TAG_LABEL_PREFIX } from './plan-config.js';

export const INPUTS_CONTAINER = 'inputs';
export const TASK_CONTAINER = 'task';
export const OUTPUTS_CONTAINER = 'outputs';
export const INPUTS_MARKER = '.berth-inputs-complete';
/** The `inputs` container as the file feed's sender sees it (runtime/file-feed.ts). */
export const inputsFeed: FeedPlan = { container: INPUTS_CONTAINER, marker: INPUTS_MARKER };
/** The `inputs` container's exit code when the inputs arrived but the folders could not be laid out. */
export const INPUTS_LAYOUT_FAILED = 3;
const WORK_VOLUME = 'work';

export interface TaskPodContext {
  namespace: string;
  owner: string;
  runId: string;
  now: Date;
  ttlSeconds: number;
  image: string;
  helperImage: string;
  pullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** The step's identity: the task file's name, or the plan step's (label berth.dev/step, whole in an annotation). */
  step?: string;
  /** The target's name (label berth.dev/target). */
  target?: string;
  /** The task container runs privileged (only on a target that allows it). */
  privileged?: boolean;
  /** The task's caches: each claim mounted at its path below the working directory (caches.ts). */
  caches?: Array<{ path: string; claim: string }>;
  /** Direct artifacts: the `outputs` container serves the outputs to the pods of later steps, to this token. */
  artifactToken?: string;
  /** Worker tags: the pod runs on a node labeled `tags.berth.dev/TAG=true` for each, as Concourse picks a worker. */
  tags?: string[];
}

export const LABEL_STEP = 'berth.dev/step';
export const LABEL_TARGET = 'berth.dev/target';

/** Any text as a label value: at most 63 of [A-Za-z0-9._-], starting and ending with a letter or digit. */
export function labelValue(text: string): string {
  return text
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
}

export function taskPodName(runId: string): string {
  return `task-${runId}`;
}

export function paramsSecretName(runId: string): string {
  return `task-${runId}-params`;
}

function ownership(ctx: TaskPodContext): Record<string, string> {
  const labels: Record<string, string> = { ...ownershipLabels(ctx.owner), [LABEL_RUN]: ctx.runId, 'app.kubernetes.io/component': 'task' };
  if (ctx.step && labelValue(ctx.step)) labels[LABEL_STEP] = labelValue(ctx.step);
  if (ctx.target && labelValue(ctx.target)) labels[LABEL_TARGET] = labelValue(ctx.target);
  return labels;
}

/** The expiry, and the step's identity as it was written (a label value cannot hold every name). */
function annotations(ctx: TaskPodContext): Record<string, string> {
  return { [ANNOTATION_EXPIRES_AT]: rfc3339(new Date(ctx.now.getTime() + ctx.ttlSeconds * 1000)), ...(ctx.step ? { [LABEL_STEP]: ctx.step } : {}) };
}

/**
 * Whether the pod needs its `inputs` container: not when there is nothing to put in place (no inputs, no
 * outputs, no run.dir), as the emptyDir is created open to every user (0777), and no params: the params
 * Secret is created after the pod, and the `inputs` container (waiting for berth's stream) is what holds
 * the task back until it exists; and no caches: it opens the caches' folders to the task's user. One
 * container start less for such a step.
 */
export function needsInputsContainer(layout: Layout, params: Record<string, string>, caches = 0): boolean {
  return layout.inputs.length > 0 || layout.outputs.length > 0 || layout.cwd !== layout.workDir || Object.keys(params).length > 0 || caches > 0;
}

export function planTaskPod(config: TaskConfig, layout: Layout, params: Record<string, string>, ctx: TaskPodContext): V1Pod {
  const name = taskPodName(ctx.runId);
  const work = { name: WORK_VOLUME, mountPath: layout.workDir };
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const outputDirs = layout.outputs.map((o) => q(`${layout.workDir}/${o.path}`));
  const caches = ctx.caches ?? [];
  const cacheMounts = caches.map((c, i) => ({ name: `cache-${i}`, mountPath: `${layout.workDir}/${c.path}` }));
  const cacheDirs = cacheMounts.map((m) => q(m.mountPath));
  // Artifacts served by the pods of earlier steps (direct mode) are fetched after berth's own stream.
  const fetched = fetchScript(
    layout.workDir,
    layout.inputs.flatMap((i) => (i.from ? [{ name: i.name, path: i.path, from: i.from }] : [])),
  );
  // Directories open to every user: the task may run as another user than the copy (as Concourse's
  // volumes are writable by the task's user). Files keep the modes they had on the caller's disk.
  const prepared = [
    ...(outputDirs.length ? [`mkdir -p ${outputDirs.join(' ')}`] : []),
    `mkdir -p ${q(layout.cwd)}`,
    // A cache keeps the modes its files were left with: only its own folder is opened (best effort: on a
    // volume whose root the helper does not own, the volume's own modes decide who may write it).
    // Only folders not yet open: the working directory is the emptyDir's root, open (0777) but root's, and
    // a helper running as run.user's non-root uid may not chmod it.
    cacheDirs.length
      ? `find ${q(layout.workDir)} \\( ${cacheDirs.map((d) => `-path ${d}`).join(' -o ')} \\) -prune -o -type d ! -perm -0777 -exec chmod a+rwx {} + && { chmod a+rwx ${cacheDirs.join(' ')} 2>/dev/null || true; }`
      : `find ${q(layout.workDir)} -type d ! -perm -0777 -exec chmod a+rwx {} +`,
  ].join(' && ');
  // The inputs all arrived; what fails after is the layout's own doing (an output at the path of an input's
  // file, say), and another pod would fail it again: its own exit code tells berth not to try.
  const inputs = planFeedReceiver({
    ...inputsFeed,
    image: ctx.helperImage,
    dir: layout.workDir,
    carries: 'inputs',
    quoted: true,
    removeMarker: true,
    then: [...(fetched ? [fetched] : []), `${prepared} || exit ${INPUTS_LAYOUT_FAILED}`],
    // as the task: a target's pod template that changes the pod's user changes both
    runAs: 'pod',
    volumeMounts: [work, ...cacheMounts],
  });
  const env: V1EnvVar[] = Object.keys(params).map((k, i) => ({ name: k, valueFrom: { secretKeyRef: { name: paramsSecretName(ctx.runId), key: `p${i}` } } }));
  const task: V1Container = {
    name: TASK_CONTAINER,
    image: ctx.image,
    imagePullPolicy: ctx.pullPolicy ?? 'IfNotPresent',
    command: layout.command,
    workingDir: layout.cwd,
    ...lockedDownContainer({ privileged: ctx.privileged }),
    volumeMounts: [work, ...cacheMounts],
    ...(env.length ? { env } : {}),
  };
  // 0 is no limit to Concourse's workers (garden sets a limit only above 0): none here either, where a CPU
  // request of 0 shares would have become 1m, the least weight there is.
  const { cpu, memory } = config.containerLimits;
  if (cpu || memory) {
    // CPU shares are a relative weight, as a Kubernetes CPU request is (1024 shares = 1 CPU).
    task.resources = {
      ...(cpu ? { requests: { cpu: `${Math.max(1, Math.round((cpu * 1000) / 1024))}m` } } : {}),
      ...(memory ? { limits: { memory: String(memory) } } : {}),
    };
  }
  const containers = [task];
  if (layout.outputs.length) {
    containers.push({
      name: OUTPUTS_CONTAINER,
      image: ctx.helperImage,
      imagePullPolicy: 'IfNotPresent',
      // Stays up so berth can read the outputs with exec; in direct mode also serves them to later steps' pods.
      command: ctx.artifactToken
        ? serveCommand(layout.workDir, layout.outputs, ctx.artifactToken, ctx.ttlSeconds)
        : ['sh', '-c', `exec sleep ${ctx.ttlSeconds}`],
      ...lockedDownContainer(),
      volumeMounts: [work],
    });
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ctx.namespace, labels: ownership(ctx), annotations: annotations(ctx) },
    spec: {
      ...lockedDownPod({ deadlineSeconds: ctx.ttlSeconds, user: layout.user }),
      volumes: [{ name: WORK_VOLUME, emptyDir: {} }, ...caches.map((c, i) => ({ name: `cache-${i}`, persistentVolumeClaim: { claimName: c.claim } }))],
      ...(needsInputsContainer(layout, params, caches.length) ? { initContainers: [inputs] } : {}),
      containers,
      ...(ctx.tags?.length ? { nodeSelector: Object.fromEntries(ctx.tags.map((t) => [`${TAG_LABEL_PREFIX}${t}`, 'true'])) } : {}),
    },
  };
}

/** The params, keyed p0..pN in the order of the env list; owned by the pod, so it goes when the pod goes. */
export function planParamsSecret(params: Record<string, string>, pod: { name: string; uid: string }, ctx: TaskPodContext): V1Secret {
  const data: Record<string, string> = {};
  Object.values(params).forEach((v, i) => (data[`p${i}`] = Buffer.from(v, 'utf8').toString('base64')));
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: paramsSecretName(ctx.runId),
      namespace: ctx.namespace,
      labels: ownership(ctx),
      annotations: annotations(ctx),
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid }],
    },
    data,
  };
}
