/**
 * What `berth task target check|gc|retire` do in a target's cluster. Everything berth task creates
 * carries app.kubernetes.io/managed-by=berth and app.kubernetes.io/component=task: gc and retire find
 * it by those labels in the target's namespace and touch nothing else (not berth serve's, not the
 * shim's). Pods are deleted; the params Secrets they own follow through the garbage collector.
 */
import { labeledObjects, type LabeledKind } from '../kube/labeled-objects.js';
import { collectGarbage, type CollectedObject } from '../runtime/gc.js';
import { loadPodTemplate } from '../runtime/pod-template.js';
import { ClusterClient } from '../kube/client.js';
import { CACHE_COMPONENT, LABEL_TARGET, labelValue } from './caches.js';
import { randomBytes } from 'node:crypto';
import { servedLayout } from '../registry/layout-entries.js';
import { certificateIssuer, type ImageCa } from '../registry/image-ca.js';
import { PROBE_FILE, withProbeImage } from '../registry/probe-image.js';
import { LABEL_COMPONENT } from '../runtime/pod-rules.js';
import { probeSeconds, probeServedImages, type ProbeResult } from '../runtime/image-probe.js';
import { helperImageOf } from '../runtime/plan.js';
import { loadRunSettings } from '../runtime/settings.js';
import { permissionReport, shippedRoleRules, TASK_NEEDS, type PermissionAnswer } from './target-check.js';
import type { Target } from './target-store.js';
import { connectTarget } from './targets.js';

export const TASK_COMPONENT_SELECTOR = 'app.kubernetes.io/component=task';
/** The kinds berth task creates that gc and retire delete themselves (Secrets go with their pods). */
export const TASK_OBJECT_KINDS: LabeledKind[] = ['pods'];

export interface CheckOutcome {
  lines: string[];
  problems: string[];
}

/**
 * Reachability, the pod template, then every permission, each asked with a SelfSubjectAccessReview; with
 * `imageServer`, whether the nodes pull a step image served from a pod of it (runtime/image-probe.ts).
 */
export async function checkTarget(t: Target, env: NodeJS.ProcessEnv, o: { imageServer?: string; imageServerCa?: ImageCa } = {}): Promise<CheckOutcome> {
  const { kc, namespace } = connectTarget(t, env);
  const kube = new ClusterClient(kc, namespace);
  const lines = [`target ${t.name}: context ${t.context}, namespace ${namespace}, server ${kube.server}${t.landed ? ' (landed)' : ''}`];
  try {
    const v = await kube.serverVersion();
    lines.push(`reachable: Kubernetes ${v.major}.${v.minor}`);
  } catch (err) {
    return { lines, problems: [`the cluster cannot be reached: ${(err as Error).message}`] };
  }
  const problems: string[] = [];
  if (t.podTemplate) {
    try {
      await loadPodTemplate(t.podTemplate, () => Promise.reject(new Error('a target names a file')), `target ${t.name}`);
      lines.push(`pod template: ${t.podTemplate}`);
    } catch (err) {
      problems.push(`${(err as Error).message}: fix the file or add the target again with another --pod-template`);
    }
  }
  let answers: PermissionAnswer[];
  try {
    answers = await Promise.all(
      TASK_NEEDS.map(async (need) => {
        const [resource, sub] = need.resource.split('/');
        return { need, allowed: await kube.reviewAccess(need.verb, resource, sub, need.group) };
      }),
    );
  } catch (err) {
    return { lines, problems: [...problems, `the permissions cannot be checked: ${(err as Error).message}`] };
  }
  const { rules, file } = shippedRoleRules();
  const report = permissionReport(answers, rules, file, namespace);
  lines.push(...report.lines);
  problems.push(...report.problems);
  if (o.imageServer && report.problems.length) lines.push(`step images served from pods of ${o.imageServer}: not checked (the permissions above first)`);
  else if (o.imageServer) {
    const probe = await probeImageServing(kube, o.imageServer, o.imageServerCa, t, env).catch((err: Error): ProbeResult => ({
      pulled: false,
      why: `the step image probe failed: ${err.message}`,
    }));
    if (probe.pulled) lines.push(`step images served from pods of ${o.imageServer}: node ${probe.node} pulled one`);
    else problems.push(probe.why);
  }
  return { lines, problems };
}

async function probeImageServing(kube: ClusterClient, serverImage: string, ca: ImageCa | undefined, t: Target, env: NodeJS.ProcessEnv): Promise<ProbeResult> {
  const settings = loadRunSettings(env);
  const labels = { [LABEL_COMPONENT]: 'task', [LABEL_TARGET]: labelValue(t.name) };
  const template = t.podTemplate ? await loadPodTemplate(t.podTemplate, (n) => kube.readPodTemplate(n), `target ${t.name}`) : undefined;
  return withProbeImage((image) =>
    probeServedImages({
      cluster: kube,
      pod: {
        namespace: kube.namespace,
        owner: settings.owner,
        runId: randomBytes(4).toString('hex'),
        now: new Date(),
        ttlSeconds: probeSeconds(settings.startTimeoutSeconds),
        serverImage,
        helperImage: helperImageOf(settings.helperImage),
        labels,
        annotations: {},
      },
      image: servedLayout(image),
      command: PROBE_FILE,
      startTimeoutSeconds: settings.startTimeoutSeconds,
      ...(template ? { template } : {}),
      ...(ca ? { certificate: certificateIssuer(ca, probeSeconds(settings.startTimeoutSeconds)) } : {}),
    }),
  );
}

/**
 * berth task's objects in the target's namespace: the expired ones (gc), or all of them (retire). Pods
 * first, then the target's caches (claims a pod may still hold wait for it: pvc-protection).
 */
export async function collectTaskObjects(t: Target, env: NodeJS.ProcessEnv, all: boolean): Promise<CollectedObject[]> {
  const { kc, namespace } = connectTarget(t, env);
  const collect = (kinds: LabeledKind[], labelSelector: string) =>
    collectGarbage({ objects: labeledObjects(kc), namespace, allNamespaces: false, includeUnexpired: all, dryRun: false, kinds, labelSelector });
  const pods = await collect(TASK_OBJECT_KINDS, TASK_COMPONENT_SELECTOR);
  const caches = await collect(['persistentvolumeclaims'], `app.kubernetes.io/component=${CACHE_COMPONENT},${LABEL_TARGET}=${labelValue(t.name)}`);
  return [...pods, ...caches];
}
