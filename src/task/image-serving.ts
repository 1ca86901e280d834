/**
 * A step's image served from a pod of its own (image-pod.ts) instead of a registry: the pod is created, the image
 * streamed into it as an OCI layout through the file feed, and once its server answers, the reference to pull is
 * the pod's address and the image's digest. Whatever fails on the way deletes the pod: nothing is left half made.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { writeOciLayout } from '../registry/layout-entries.js';
import type { AssembledImage } from '../registry/oci-image.js';
import { repositoryComponent, type OwnImage } from '../registry/push-target.js';
import { FEED_END_GRACE_MS, sendFeed } from '../runtime/file-feed.js';
import { viewContainer, type ContainerView } from '../runtime/pod-status.js';
import { isTerminal, PodTracker, settledOrRunning } from '../runtime/pod-tracker.js';
import { noTrace } from '../runtime/trace.js';
import {
  IMAGE_FEED_CONTAINER,
  IMAGE_SERVER_CONTAINER,
  imageFeed,
  imagePodName,
  planImagePod,
  servedImageReference,
  type ImagePodContext,
} from './image-pod.js';
import type { Ledger } from './ledger.js';
import type { TaskCluster } from './task-cluster.js';

export const IMAGE_SERVER_ENV = 'BERTH_TASK_IMAGE_SERVER';

export interface ImageServing {
  cluster: TaskCluster;
  image: AssembledImage;
  pod: ImagePodContext;
  startTimeoutSeconds: number;
  ledger?: Ledger;
  signal?: AbortSignal;
}

/** The image served from its pod, and how to delete that pod. Rejects with the reason, the pod deleted. */
export async function serveStepImage(o: ImageServing): Promise<OwnImage> {
  const { cluster } = o;
  const name = imagePodName(o.pod.runId);
  const release = async (): Promise<void> => {
    o.ledger?.deleting(cluster.namespace, 'pod', name);
    await cluster.deletePod(name);
    o.ledger?.remove(cluster.namespace, 'pod', name);
  };
  const watching = new AbortController();
  const stopWatch = (): void => watching.abort();
  o.signal?.addEventListener('abort', stopWatch, { once: true });
  try {
    o.ledger?.add(cluster.namespace, 'pod', name);
    await cluster.createPod(planImagePod(o.pod));
    const tracker = new PodTracker(cluster, name, watching.signal, noTrace);
    const deadline = Date.now() + o.startTimeoutSeconds * 1000;
    await feedImage(o, tracker, name, deadline);
    const ready = await tracker.until(
      (q) => isReady(q) || isTerminal(viewContainer(q, IMAGE_SERVER_CONTAINER)),
      deadline,
      `the image server (${o.pod.serverImage}) did not answer`,
    );
    if (!isReady(ready)) throw new Error(await serverFailure(o, name, viewContainer(ready, IMAGE_SERVER_CONTAINER)));
    const ip = ready.status?.podIP;
    if (!ip) throw new Error(`pod ${name} is ready but has no address`);
    const digest = o.image.manifest.digest;
    return { reference: servedImageReference(ip, `berth/${repositoryComponent(o.pod.artifact)}`, digest), digest, release };
  } catch (err) {
    await release().catch(() => undefined);
    throw err;
  } finally {
    o.signal?.removeEventListener('abort', stopWatch);
    stopWatch();
  }
}

/** The layout streamed into the pod's receiver; rejects saying why it did not arrive. */
async function feedImage(o: ImageServing, tracker: PodTracker, name: string, deadline: number): Promise<void> {
  const receiver = (q: V1Pod): ContainerView => viewContainer(q, IMAGE_FEED_CONTAINER, true);
  const started = receiver(
    await tracker.until((q) => settledOrRunning(receiver(q), () => undefined), deadline, `the image pod's receiver (${o.pod.helperImage}) did not start`),
  );
  if (started.state === 'failed')
    throw new Error(`${started.message} (the helper image copies the image into its pod: set BERTH_HELPER_IMAGE to an image with sh and tar)`);
  if (started.state !== 'running') throw new Error(`pod ${name}: the image's receiver ended before the image was sent`);
  const result = await sendFeed({
    cluster: o.cluster,
    pod: name,
    plan: imageFeed,
    content: (add) => writeOciLayout(o.image, add),
    ended: async () => receiver(await tracker.until((q) => isTerminal(receiver(q)), deadline + FEED_END_GRACE_MS, 'the copy of the image did not finish')),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  if (!result.delivered) throw new Error(`the image could not be copied into pod ${name}: ${result.why}`);
}

async function serverFailure(o: ImageServing, name: string, view: ContainerView): Promise<string> {
  const log = await o.cluster.readPodLog(name, IMAGE_SERVER_CONTAINER, { tailLines: 3 }).catch(() => Buffer.alloc(0));
  const said = log.toString('utf8').trim().split('\n').filter(Boolean).join('; ');
  const why = view.state === 'failed' ? view.message : view.state === 'terminated' ? `it exited ${view.exitCode}` : `it is ${view.state}`;
  return `the image server in pod ${name} did not start: ${why}${said ? ` (${said})` : ''}; --image-server names the berth image, whose \`berth image-serve\` serves the image`;
}

function isReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}
