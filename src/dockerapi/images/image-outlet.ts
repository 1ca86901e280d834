/**
 * Where berth serve puts the images it makes (`docker build`, `docker commit`) so the cluster's nodes can pull them:
 * pushed by digest to the registry of `--image-registry`, or served from a pod of the berth image (`--image-server`,
 * runtime/image-serving.ts) when there is no registry. Either way the reference names a digest, and `release`
 * deletes the image (`docker rmi`, berth stopping); what a killed berth leaves expires with `--ttl`.
 */
import { randomBytes } from 'node:crypto';
import { servedLayout } from '../../registry/layout-entries.js';
import type { AssembledImage } from '../../registry/oci-image.js';
import { plainHttpRegistries, pushToOwnRepository, repositoryComponent, type OwnImage, type PushTarget } from '../../registry/push-target.js';
import { PROBE_FILE, withProbeImage } from '../../registry/probe-image.js';
import { probeSeconds, probeServedImages, type ProbeResult } from '../../runtime/image-probe.js';
import type { ImagePodContext } from '../../runtime/image-pod.js';
import { LABEL_COMPONENT } from '../../runtime/pod-rules.js';
import type { PodTemplateSource } from '../../runtime/workload.js';
import { serveImage, type CertificateIssuer, type ImageServingCluster } from '../../runtime/image-serving.js';

export interface ImageOutlet {
  /** Where images go, in an error's words: `registry.example.com`, `a pod of IMAGE`. */
  readonly where: string;
  put(name: string, image: AssembledImage): Promise<OwnImage>;
  /** The hosts a builder pulls from without TLS verification or over plain http, of these references to made images. */
  insecureHosts(refs: readonly string[]): string[];
  /** Whether the nodes can pull what it puts, asked of the cluster where that can be asked. */
  check?(): Promise<ProbeResult>;
}

export function registryOutlet(target: PushTarget, ttlSeconds: number): ImageOutlet {
  return {
    where: target.registry,
    put: (name, image) => pushToOwnRepository(target, name, image, { ttlSeconds }),
    insecureHosts: () => plainHttpRegistries(target),
  };
}

export interface PodOutletOptions {
  cluster: ImageServingCluster;
  /** The berth image: its `berth image-serve` serves each image. */
  serverImage: string;
  helperImage: string;
  owner: string;
  ttlSeconds: number;
  startTimeoutSeconds: number;
  /** berth serve's --pod-template (with what --inherit-pod-settings adds): laid under its image pods too. */
  template?: PodTemplateSource;
  /** --image-server-ca: each image pod's certificate, issued for its address. */
  certificate?: CertificateIssuer;
}

/** The label of berth serve's image pods: no container's, so the pod watch and recovery pass them by. */
export const IMAGE_POD_COMPONENT = 'image';

export function podOutlet(o: PodOutletOptions): ImageOutlet {
  const pod = (annotations: Record<string, string>, ttlSeconds = o.ttlSeconds): ImagePodContext => ({
    namespace: o.cluster.namespace,
    owner: o.owner,
    runId: randomBytes(4).toString('hex'),
    now: new Date(),
    ttlSeconds,
    serverImage: o.serverImage,
    helperImage: o.helperImage,
    labels: { [LABEL_COMPONENT]: IMAGE_POD_COMPONENT },
    annotations,
  });
  // as the images are served, so is the probe: under the template, with the CA's certificate
  const served = { ...(o.template ? { template: o.template } : {}), ...(o.certificate ? { certificate: o.certificate } : {}) };
  return {
    where: `a pod of ${o.serverImage}`,
    put: (name, image) =>
      serveImage({
        cluster: o.cluster,
        pod: pod({ 'berth.dev/image': name }),
        repository: `berth/${repositoryComponent(name)}`,
        ...servedLayout(image),
        startTimeoutSeconds: o.startTimeoutSeconds,
        ...served,
      }),
    // a pod's certificate is its own: its images are pulled without verifying it (by digest, which the puller checks)
    insecureHosts: (refs) => [...new Set(refs.map((ref) => ref.slice(0, ref.indexOf('/'))))],
    check: () =>
      withProbeImage((image) =>
        probeServedImages({
          cluster: o.cluster,
          pod: pod({ 'berth.dev/image': 'probe' }, probeSeconds(o.startTimeoutSeconds)),
          image: servedLayout(image),
          command: PROBE_FILE,
          startTimeoutSeconds: o.startTimeoutSeconds,
          ...served,
        }),
      ),
  };
}
