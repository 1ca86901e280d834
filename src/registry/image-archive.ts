/**
 * An image tarball or OCI layout folder, whichever of the formats it is, read as the one image to push
 * (nothing is pushed from an archive that failed any check): an OCI image layout (`oci-layout` and
 * `index.json`; `docker save` of Docker 25 and later writes one too, and it is preferred), else a
 * `docker save` archive (`manifest.json`), which is also what Concourse's registry-image resource writes
 * as `image.tar`.
 */
import { ImageArtifactError } from './artifact-error.js';
import { archiveEntries } from './archive-entries.js';
import { isDockerArchive, readDockerArchive } from './docker-archive.js';
import { hostPlatform, imageFromConfig, type AssembledImage, type OciImage, type Platform } from './oci-image.js';
import { isOciLayout, readOciLayout } from './oci-layout.js';

export interface ImageArchiveOptions {
  /** The image to take from a layout holding several platforms; default this machine's. */
  platform?: Platform;
}

/** The image in `archive` (a tarball, gzipped or not, or an OCI layout folder); blobs are unpacked into `workDir`. */
export async function readImageArchive(archive: string, workDir: string, opts: ImageArchiveOptions = {}): Promise<AssembledImage> {
  const entries = await archiveEntries(archive, workDir);
  if (isOciLayout(entries)) return readOciLayout(entries, archive, opts.platform ?? hostPlatform());
  if (isDockerArchive(entries)) return readDockerArchive(entries, archive);
  throw new ImageArtifactError(archive, 'neither an OCI image layout (oci-layout, index.json) nor a docker save archive (manifest.json)');
}

/** The image of an archive as a value to grow (a layer appended, settings changed). */
export function imageOfArchive(image: AssembledImage, source: string): OciImage {
  const files = new Map(image.layers.flatMap((l) => (l.file ? [[l.descriptor.digest, l.file] as const] : [])));
  return imageFromConfig(
    image.config.bytes,
    image.layers.map((l) => l.descriptor),
    source,
    files,
  );
}
