/**
 * An image berth made and pushed (`docker commit`, images/commit.ts; `docker build`, images/build.ts), as the engine
 * records it: one shape for both, so that an image inspects the same whichever way it was made.
 */
import type { ContainerConfig } from '../../registry/oci-image.js';

export interface MadeImage {
  /** The config's digest, as dockerd's image ids are. */
  id: string;
  /** The pushed digest the nodes pull. */
  pullRef: string;
  config: ContainerConfig;
  created: string;
  architecture: string;
  os: string;
  /** Deletes the pushed manifest (`docker rmi`, berth stopping). */
  release(): Promise<void>;
}
