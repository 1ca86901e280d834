/**
 * An image served from a pod of its own (image-pod.ts) instead of a registry: the pod is created, the image streamed
 * into it as an OCI layout through the file feed, and once its server answers, the reference to pull is the pod's
 * address and the image's digest. Whatever fails on the way deletes the pod: nothing is left half made. The face
 * gives the layout's entries (registry/layout-entries.ts writes them), so this knows images only by their digest.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { FeedAttach } from './file-feed.js';
import { FEED_END_GRACE_MS, sendFeed } from './file-feed.js';
import type { FeedContent } from './feed-tar.js';
import {
  IMAGE_FEED_CONTAINER,
  IMAGE_SERVER_CONTAINER,
  IMAGE_TLS_FILES,
  imageFeed,
  imagePodName,
  planImagePod,
  servedImageReference,
  type ImagePodContext,
} from './image-pod.js';
import { viewContainer, type ContainerView } from './pod-status.js';
import { isTerminal, PodTracker, settledOrRunning } from './pod-tracker.js';
import { noTrace } from './trace.js';
import { lastLogLines } from './log-tail.js';
import { layPodTemplate } from './pod-template.js';
import type { PodTemplateSource } from './workload.js';

/** The calls serving an image makes of the cluster (kube/client.ts's ClusterClient makes them). */
export interface ImageServingCluster extends FeedAttach {
  readonly namespace: string;
  createPod(pod: V1Pod): Promise<V1Pod>;
  /** 404 is success. */
  deletePod(name: string): Promise<void>;
  watchPod(name: string, onPod: (pod: V1Pod, type: string) => boolean, signal?: AbortSignal): Promise<void>;
  readPodLog(name: string, container: string, q?: { tailLines?: number }): Promise<Buffer>;
}

/** Told of the pod as it is created and deleted (berth task's ledger names what an interrupted run leaves). */
export interface PodBook {
  created(name: string): void;
  deleting(name: string): void;
  deleted(name: string): void;
}

export interface ImageServing {
  cluster: ImageServingCluster;
  pod: ImagePodContext;
  /** The repository in the reference (any name: the server serves its one image under every name). */
  repository: string;
  /** The manifest's digest, which the reference names. */
  digest: string;
  /** The OCI layout's entries. */
  layout: FeedContent;
  startTimeoutSeconds: number;
  /** The face's pod template (a target's, berth serve's): its node selector, tolerations and pull secrets apply. */
  template?: PodTemplateSource;
  /**
   * Issues the server's certificate for the pod's addresses, once it has them (an image CA the nodes trust,
   * --image-server-ca); without it the server makes a self-signed one, for nodes that skip verification.
   */
  certificate?: CertificateIssuer;
  book?: PodBook;
  signal?: AbortSignal;
}

/** A certificate (and its key, PEM) for a server at these addresses. */
export type CertificateIssuer = (ipAddresses: string[]) => { cert: string; key: string };

export interface ServedImage {
  reference: string;
  digest: string;
  /** The pod's name: once it ends, nothing serves the image. */
  pod: string;
  release(): Promise<void>;
}

/** The image served from its pod, and how to delete that pod. Rejects with the reason, the pod deleted. */
export async function serveImage(o: ImageServing): Promise<ServedImage> {
  const { cluster } = o;
  const name = imagePodName(o.pod.runId);
  const release = async (): Promise<void> => {
    o.book?.deleting(name);
    await cluster.deletePod(name);
    o.book?.deleted(name);
  };
  const watching = new AbortController();
  const stopWatch = (): void => watching.abort();
  o.signal?.addEventListener('abort', stopWatch, { once: true });
  try {
    o.book?.created(name);
    await cluster.createPod(layPodTemplate(planImagePod(o.pod, o.certificate !== undefined), o.template));
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
    return { reference: servedImageReference(ip, o.repository, o.digest), digest: o.digest, pod: name, release };
  } catch (err) {
    // the pod's deadline ends it if this delete fails too
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
    throw new Error(
      `${started.message} (the helper image copies the image into its pod: name one with sh and tar, BERTH_HELPER_IMAGE or berth serve's --helper-image)`,
    );
  if (started.state !== 'running') throw new Error(`pod ${name}: the image's receiver ended before the image was sent`);
  const content = o.certificate ? withCertificate(o.layout, o.certificate(await podAddresses(tracker, name, deadline))) : o.layout;
  const result = await sendFeed({
    cluster: o.cluster,
    pod: name,
    plan: imageFeed,
    content,
    ended: async () => receiver(await tracker.until((q) => isTerminal(receiver(q)), deadline + FEED_END_GRACE_MS, 'the copy of the image did not finish')),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  if (!result.delivered) throw new Error(`the image could not be copied into pod ${name}: ${result.why}`);
}

/** The pod's addresses (each of a dual-stack pod's), which its certificate names. */
async function podAddresses(tracker: PodTracker, name: string, deadline: number): Promise<string[]> {
  const pod = await tracker.until((q) => Boolean(q.status?.podIP), deadline, `pod ${name} got no address`);
  const all = (pod.status?.podIPs ?? []).map((p) => p.ip).filter((ip): ip is string => Boolean(ip));
  return [...new Set([pod.status!.podIP!, ...all])];
}

/** The certificate and its key (readable by the server's user only) ahead of the layout. */
function withCertificate(layout: FeedContent, tls: { cert: string; key: string }): FeedContent {
  return async (add) => {
    await add({ name: IMAGE_TLS_FILES.dir, type: 'directory', mode: 0o700 });
    await add({ name: IMAGE_TLS_FILES.cert, mode: 0o644 }, Buffer.from(tls.cert));
    await add({ name: IMAGE_TLS_FILES.key, mode: 0o600 }, Buffer.from(tls.key));
    await layout(add);
  };
}

async function serverFailure(o: ImageServing, name: string, view: ContainerView): Promise<string> {
  const said = await lastLogLines(o.cluster, name, IMAGE_SERVER_CONTAINER);
  const why = view.state === 'failed' ? view.message : view.state === 'terminated' ? `it exited ${view.exitCode}` : `it is ${view.state}`;
  return `the image server in pod ${name} did not start: ${why}${said ? ` (${said})` : ''}; --image-server names the berth image, whose \`berth image-serve\` serves the image`;
}

function isReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}
