/**
 * Can the cluster's nodes pull an image served from a pod (image-serving.ts)? Asked the only way that answers it: a
 * tiny image (registry/probe-image.ts: one file, nothing to run) is served as a step's or a build's would be, and a
 * pod names it. A pull refused (no route to the pod network, a node that will not speak HTTPS to an unknown
 * certificate) is the answer "no", in containerd's words; a container that then fails to run shows the pull went
 * through. `berth task target check --image-server` and `berth serve --image-server` ask it.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { FeedContent } from './feed-tar.js';
import { serveImage, type CertificateIssuer, type ImageServingCluster } from './image-serving.js';
import type { ImagePodContext } from './image-pod.js';
import { LABEL_RUN, rfc3339 } from './plan.js';
import { viewContainer } from './pod-status.js';
import { isTerminal, PodTracker } from './pod-tracker.js';
import { ANNOTATION_EXPIRES_AT, lockedDownContainer, lockedDownPod, ownershipLabels } from './pod-rules.js';
import { noTrace } from './trace.js';
import { layPodTemplate } from './pod-template.js';
import type { PodTemplateSource } from './workload.js';

const PROBE_CONTAINER = 'probe';
/** The kubelet's reasons for a container whose image it could not pull: anything else came after the image arrived. */
const PULL_FAILED: ReadonlySet<string> = new Set(['ErrImagePull', 'ImagePullBackOff']);
const NODES_NEED =
  '--image-server needs nodes that reach pod addresses and pull over HTTPS from hosts without a hosts.toml of their own, ' +
  'trusting the image CA that --image-server-ca names (containerd: ca = its tls.crt, in the _default folder of the registry config_path) ' +
  'or without verifying the certificate (skip_verify = true there); else use --image-registry';

export interface ImageProbe {
  cluster: ImageServingCluster;
  /** The image pod's context (its deadline short: a probe's); the probe pod takes its labels too. */
  pod: ImagePodContext;
  /** The probe image (registry/probe-image.ts, new bytes each time): its digest and its OCI layout's entries. */
  image: { digest: string; layout: FeedContent };
  /** The file the image holds: the probe pod's command, which cannot run. */
  command: string;
  startTimeoutSeconds: number;
  /** Laid under the image pod and the probe pod, as under the pods the probe stands for. */
  template?: PodTemplateSource;
  /** The server's certificate from the image CA, as the images the probe stands for get theirs. */
  certificate?: CertificateIssuer;
}

/** A node pulled the served image (which one), or why none did and what the nodes need. */
export type ProbeResult = { pulled: true; node: string } | { pulled: false; why: string };

/** The deadline of a probe's pods: its start timeout, and a minute to pull. */
export const probeSeconds = (startTimeoutSeconds: number): number => startTimeoutSeconds + 60;

export async function probeServedImages(p: ImageProbe): Promise<ProbeResult> {
  const served = await serveImage({
    cluster: p.cluster,
    pod: p.pod,
    repository: 'berth/probe',
    digest: p.image.digest,
    layout: p.image.layout,
    startTimeoutSeconds: p.startTimeoutSeconds,
    ...(p.template ? { template: p.template } : {}),
    ...(p.certificate ? { certificate: p.certificate } : {}),
  });
  try {
    return await pullInPod(p, served.reference);
  } finally {
    await served.release();
  }
}

async function pullInPod(p: ImageProbe, reference: string): Promise<ProbeResult> {
  const name = `image-probe-${p.pod.runId}`;
  const watching = new AbortController();
  try {
    const pod = probePod(p, name, reference);
    await p.cluster.createPod(layPodTemplate(pod, p.template));
    const tracker = new PodTracker(p.cluster, name, watching.signal, noTrace);
    const ended = await tracker.until(
      (q) => isTerminal(viewContainer(q, PROBE_CONTAINER)),
      Date.now() + p.startTimeoutSeconds * 1000,
      `the node did not pull ${reference}`,
    );
    const waiting = ended.status?.containerStatuses?.find((c) => c.name === PROBE_CONTAINER)?.state?.waiting;
    if (waiting?.reason && PULL_FAILED.has(waiting.reason))
      return {
        pulled: false,
        why: `the nodes cannot pull an image served from a pod: ${waiting.reason} for ${reference}${waiting.message ? ` (${waiting.message})` : ''}; ${NODES_NEED}`,
      };
    return { pulled: true, node: ended.spec?.nodeName ?? 'a node' };
  } finally {
    watching.abort();
    await p.cluster.deletePod(name).catch(() => undefined);
  }
}

function probePod(p: ImageProbe, name: string, image: string): V1Pod {
  const deadline = probeSeconds(p.startTimeoutSeconds);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: p.cluster.namespace,
      labels: { ...p.pod.labels, ...ownershipLabels(p.pod.owner), [LABEL_RUN]: `${p.pod.runId}-probe` },
      annotations: { [ANNOTATION_EXPIRES_AT]: rfc3339(new Date(p.pod.now.getTime() + deadline * 1000)) },
    },
    spec: {
      ...lockedDownPod({ deadlineSeconds: deadline, user: { uid: 65532, gid: 65532 } }),
      // on another node than the image pod where there is one: the pull crosses the pod network as a step's would
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { [LABEL_RUN]: p.pod.runId } }, topologyKey: 'kubernetes.io/hostname' } },
          ],
        },
      },
      // Always: a node that pulled these bytes before must pull them again (the image is new each time as well);
      // the image holds one file and nothing to run: a container that fails to start has its image
      containers: [{ name: PROBE_CONTAINER, image, imagePullPolicy: 'Always', command: [p.command], ...lockedDownContainer() }],
    },
  };
}
