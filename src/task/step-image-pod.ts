/**
 * A step's `image: ARTIFACT` served from a pod of the berth image (`--image-server`, runtime/image-serving.ts): the
 * pod is one of berth task's (its component, step and target labels, so `target gc` and `retire` find it), and the
 * run's ledger knows it.
 */
import { servedLayout } from '../registry/layout-entries.js';
import type { AssembledImage } from '../registry/oci-image.js';
import { repositoryComponent, type OwnImage } from '../registry/push-target.js';
import { serveImage, type CertificateIssuer, type ImageServingCluster } from '../runtime/image-serving.js';
import type { ImagePodContext } from '../runtime/image-pod.js';
import { LABEL_COMPONENT } from '../runtime/pod-rules.js';
import type { PodTemplateSource } from '../runtime/workload.js';
import type { Ledger } from './ledger.js';
import { LABEL_STEP, LABEL_TARGET, labelValue } from './pod-plan.js';

export const IMAGE_SERVER_ENV = 'BERTH_TASK_IMAGE_SERVER';
export const IMAGE_SERVER_CA_ENV = 'BERTH_TASK_IMAGE_SERVER_CA';

export interface StepImagePod {
  cluster: ImageServingCluster;
  image: AssembledImage;
  pod: Omit<ImagePodContext, 'labels' | 'annotations'>;
  step: string;
  artifact: string;
  target?: string;
  startTimeoutSeconds: number;
  /** The target's pod template, as under the step's own pod. */
  template?: PodTemplateSource;
  /** --image-server-ca: the pod's certificate, issued for its address. */
  certificate?: CertificateIssuer;
  ledger?: Ledger;
  signal?: AbortSignal;
}

export function serveStepImage(o: StepImagePod): Promise<OwnImage> {
  const labels: Record<string, string> = { [LABEL_COMPONENT]: 'task' };
  if (labelValue(o.step)) labels[LABEL_STEP] = labelValue(o.step);
  if (o.target && labelValue(o.target)) labels[LABEL_TARGET] = labelValue(o.target);
  const ns = o.cluster.namespace;
  return serveImage({
    cluster: o.cluster,
    pod: { ...o.pod, labels, annotations: { [LABEL_STEP]: o.step, 'berth.dev/artifact': o.artifact } },
    repository: `berth/${repositoryComponent(o.artifact)}`,
    ...servedLayout(o.image),
    startTimeoutSeconds: o.startTimeoutSeconds,
    ...(o.template ? { template: o.template } : {}),
    ...(o.certificate ? { certificate: o.certificate } : {}),
    ...(o.ledger
      ? {
          book: {
            created: (n) => o.ledger!.add(ns, 'pod', n),
            deleting: (n) => o.ledger!.deleting(ns, 'pod', n),
            deleted: (n) => o.ledger!.remove(ns, 'pod', n),
          },
        }
      : {}),
    ...(o.signal ? { signal: o.signal } : {}),
  });
}
