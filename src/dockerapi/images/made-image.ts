/**
 * An image berth made and pushed (`docker commit`, images/commit.ts; `docker build`, images/build.ts), as the engine
 * records it: one shape for both, so that an image inspects the same whichever way it was made.
 */
import type { ContainerConfig } from '../../registry/oci-image.js';
import type { OwnImage } from '../../registry/push-target.js';

export interface MadeImage {
  /** The config's digest, as dockerd's image ids are. */
  id: string;
  /** The pushed digest the nodes pull. */
  pullRef: string;
  config: ContainerConfig;
  created: string;
  architecture: string;
  os: string;
  /** The pod serving it (--image-server): the image is gone when that pod is. */
  servedBy?: string;
  /** Deletes the pushed manifest or the serving pod (`docker rmi`, berth stopping). */
  release(): Promise<void>;
}

/** What a made image takes of where its outlet put it. */
export function madeFrom(put: OwnImage): Pick<MadeImage, 'pullRef' | 'servedBy' | 'release'> {
  return { pullRef: put.reference, ...(put.pod ? { servedBy: put.pod } : {}), release: put.release };
}
