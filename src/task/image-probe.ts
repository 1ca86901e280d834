/**
 * `berth task target check --image-server IMAGE`: can the target's nodes pull a step image served from a pod? Asked
 * the only way that answers it: a tiny image (one file, nothing to run) is served as a step's would be, and a pod
 * names it. A pull refused (no route to the pod network, a node that will not speak HTTPS to an unknown certificate)
 * is the answer "no", with containerd's words; a container that then fails to run shows the pull went through.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { LABEL_RUN, rfc3339 } from '../runtime/plan.js';
import { viewContainer } from '../runtime/pod-status.js';
import { isTerminal, PodTracker } from '../runtime/pod-tracker.js';
import { ANNOTATION_EXPIRES_AT, lockedDownContainer, lockedDownPod, ownershipLabels } from '../runtime/pod-rules.js';
import { noTrace } from '../runtime/trace.js';
import type { ImagePodContext } from '../runtime/image-pod.js';
import { serveStepImage } from './step-image-pod.js';
import { withStepImage } from './step-image.js';
import type { TaskCluster } from './task-cluster.js';

const PROBE_CONTAINER = 'probe';
/** What a failed pull looks like in the probe's status: anything else came after the image arrived. */
const PULL_FAILED = /^(ErrImagePull|ImagePullBackOff) for /;

export interface ImageProbe {
  cluster: TaskCluster;
  pod: Omit<ImagePodContext, 'runId' | 'labels' | 'annotations'>;
  target?: string;
  startTimeoutSeconds: number;
}

/** undefined when a node pulled the served image; otherwise why not, and what to change. */
export async function probeServedImages(p: ImageProbe): Promise<string | undefined> {
  const folder = await mkdtemp(join(tmpdir(), 'berth-image-probe-'));
  try {
    await mkdir(join(folder, 'rootfs'));
    await writeFile(join(folder, 'rootfs', 'berth-probe'), 'a step image served from a pod\n');
    await writeFile(join(folder, 'metadata.json'), JSON.stringify({ env: [], user: '' }));
    const runId = randomBytes(4).toString('hex');
    return await withStepImage({ dir: folder }, undefined, async (image) => {
      const served = await serveStepImage({
        cluster: p.cluster,
        image,
        pod: { ...p.pod, runId },
        step: 'target check',
        artifact: 'probe',
        ...(p.target ? { target: p.target } : {}),
        startTimeoutSeconds: p.startTimeoutSeconds,
      });
      try {
        return await pullInPod(p, served.reference, runId);
      } finally {
        await served.release();
      }
    });
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

async function pullInPod(p: ImageProbe, reference: string, runId: string): Promise<string | undefined> {
  const name = `image-probe-${runId}`;
  const watching = new AbortController();
  try {
    await p.cluster.createPod(probePod(p, name, runId, reference));
    const tracker = new PodTracker(p.cluster, name, watching.signal, noTrace);
    const ended = await tracker.until(
      (q) => isTerminal(viewContainer(q, PROBE_CONTAINER)),
      Date.now() + p.startTimeoutSeconds * 1000,
      `the node did not pull ${reference}`,
    );
    const view = viewContainer(ended, PROBE_CONTAINER);
    if (view.state === 'failed' && PULL_FAILED.test(view.message))
      return `the nodes cannot pull a step image served from a pod: ${view.message}; --image-server needs nodes that reach pod addresses and pull from hosts without a hosts.toml of their own over HTTPS without verifying the certificate (containerd: skip_verify = true in the _default folder of the registry config_path); else use --image-registry`;
    return undefined;
  } finally {
    watching.abort();
    await p.cluster.deletePod(name).catch(() => undefined);
  }
}

function probePod(p: ImageProbe, name: string, runId: string, image: string): V1Pod {
  const deadline = p.startTimeoutSeconds + 60;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: p.pod.namespace,
      labels: { ...ownershipLabels(p.pod.owner), [LABEL_RUN]: runId, 'app.kubernetes.io/component': 'task' },
      annotations: { [ANNOTATION_EXPIRES_AT]: rfc3339(new Date(p.pod.now.getTime() + deadline * 1000)) },
    },
    spec: {
      ...lockedDownPod({ deadlineSeconds: deadline, user: { uid: 65532, gid: 65532 } }),
      // the image holds one file and nothing to run: a container that fails to start has its image
      containers: [{ name: PROBE_CONTAINER, image, imagePullPolicy: 'IfNotPresent', command: ['/berth-probe'], ...lockedDownContainer() }],
    },
  };
}
