/**
 * The pod that holds an image berth made and serves it to the cluster's nodes (pure, so its rules are unit-tested):
 * the Concourse notes' answer to "the next pod's image is an artifact", without a registry, and berth serve's for the
 * images it builds and commits. The face streams the image into it as an OCI image layout (the `image` init
 * container, a file-feed receiver), then `berth image-serve` of the berth image serves it read-only over HTTPS on
 * the pod's address, where a node pulls it by digest. It lives until its face deletes it or its deadline.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { planFeedReceiver, type FeedPlan } from './feed-receiver.js';
import { LABEL_RUN, rfc3339 } from './plan.js';
import { ANNOTATION_EXPIRES_AT, lockedDownContainer, lockedDownPod, ownershipLabels } from './pod-rules.js';

export const IMAGE_FEED_CONTAINER = 'image';
export const IMAGE_SERVER_CONTAINER = 'server';
/** The port `berth image-serve` listens on in the pod (HTTPS: containerd speaks plain HTTP only to hosts configured so). */
export const IMAGE_SERVER_PORT = 5443;
export const imageFeed: FeedPlan = { container: IMAGE_FEED_CONTAINER, marker: '.berth-image-complete' };
const IMAGE_DIR = '/image';
/**
 * Where an issued certificate and its key arrive with the image (a CA's, --image-server-ca): beside the layout, whose
 * server builds paths only from digests, so it never serves them.
 */
export const IMAGE_TLS_FILES = { dir: '.berth-tls', cert: '.berth-tls/tls.crt', key: '.berth-tls/tls.key' };
const IMAGE_VOLUME = 'image';
/** The berth image's own user (images/berth/Containerfile): the layout is unpacked as it, and served by it. */
const BERTH_USER = { uid: 65532, gid: 65532 };

export interface ImagePodContext {
  namespace: string;
  owner: string;
  runId: string;
  now: Date;
  ttlSeconds: number;
  /** The berth image (--image-server): it runs `berth image-serve`. */
  serverImage: string;
  helperImage: string;
  /** The face's own labels (its component, what the image is for) and annotations, beside berth's. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export function imagePodName(runId: string): string {
  return `image-${runId}`;
}

/** `certificateInFeed`: the server presents the certificate sent with the image, not one it makes itself. */
export function planImagePod(ctx: ImagePodContext, certificateInFeed = false): V1Pod {
  const tls = certificateInFeed ? ['--cert', `${IMAGE_DIR}/${IMAGE_TLS_FILES.cert}`, '--key', `${IMAGE_DIR}/${IMAGE_TLS_FILES.key}`] : [];
  const mount = { name: IMAGE_VOLUME, mountPath: IMAGE_DIR };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: imagePodName(ctx.runId),
      namespace: ctx.namespace,
      labels: { ...ctx.labels, ...ownershipLabels(ctx.owner), [LABEL_RUN]: ctx.runId },
      annotations: { ...ctx.annotations, [ANNOTATION_EXPIRES_AT]: rfc3339(new Date(ctx.now.getTime() + ctx.ttlSeconds * 1000)) },
    },
    spec: {
      ...lockedDownPod({ deadlineSeconds: ctx.ttlSeconds, user: BERTH_USER }),
      volumes: [{ name: IMAGE_VOLUME, emptyDir: {} }],
      initContainers: [
        planFeedReceiver({
          ...imageFeed,
          image: ctx.helperImage,
          dir: IMAGE_DIR,
          carries: 'image',
          removeMarker: true,
          runAs: 'pod',
          volumeMounts: [mount],
        }),
      ],
      containers: [
        {
          name: IMAGE_SERVER_CONTAINER,
          image: ctx.serverImage,
          imagePullPolicy: 'IfNotPresent',
          command: ['berth', 'image-serve', IMAGE_DIR, '--port', String(IMAGE_SERVER_PORT), ...tls],
          env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
          ports: [{ name: 'registry', containerPort: IMAGE_SERVER_PORT, protocol: 'TCP' }],
          // Ready once it answers: the step's pod is created only then, so its node's first pull finds it.
          readinessProbe: { httpGet: { path: '/v2/', port: IMAGE_SERVER_PORT, scheme: 'HTTPS' }, periodSeconds: 1, failureThreshold: 1 },
          ...lockedDownContainer({ readOnlyRootFilesystem: true }),
          volumeMounts: [{ ...mount, readOnly: true }],
        },
      ],
    },
  };
}

/** The reference a node pulls: the pod's address (bracketed when IPv6), the repository, the digest. */
export function servedImageReference(podIp: string, repository: string, digest: string): string {
  const host = podIp.includes(':') ? `[${podIp}]` : podIp;
  return `${host}:${IMAGE_SERVER_PORT}/${repository}@${digest}`;
}
