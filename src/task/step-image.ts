/**
 * A task step's `image:` naming an artifact of the plan, as Concourse runs it: the artifact holds an image (what
 * registry-image and docker-image resources fetch), and the task runs in it. A pod's image is a reference its node
 * pulls, so berth reads the artifact as an OCI image and either pushes it by digest to the registry the user named
 * (`--image-registry`) or serves it from a pod of its own (`--image-server`, step-image-pod.ts); the step's pod names
 * that digest, and the image is deleted when the plan ends. Two formats, as the resources write them: `rootfs/` beside `metadata.json` (format: rootfs), and an image
 * tarball `image.tar` (format: oci, a docker save archive or an OCI layout); an OCI layout folder is taken too.
 */
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImageArtifactError } from '../registry/artifact-error.js';
import { readImageArchive } from '../registry/image-archive.js';
import { assembleImage, type AssembledImage } from '../registry/oci-image.js';
import { readRootfsArtifact } from '../registry/rootfs-artifact.js';
import { parsePushTarget, pushToOwnRepository, type OwnImage, type OwnPushOptions, type PushTarget } from '../registry/push-target.js';
import { artifactTar, type Artifact } from './artifacts.js';
import { TaskUsageError } from './layout.js';
import { unpackTar } from './unpack.js';

export const IMAGE_REGISTRY_ENV = 'BERTH_TASK_IMAGE_REGISTRY';

/** `--image-registry REGISTRY/PREFIX`: where step images are pushed, under PREFIX/ARTIFACT-RANDOM. */
export type ImageRegistry = PushTarget;

/** The flag's value, refused in berth task's words (exit 2) when it is not REGISTRY/PREFIX. */
export function parseImageRegistry(value: string, source: string): ImageRegistry {
  try {
    return parsePushTarget(value, source);
  } catch (err) {
    throw new TaskUsageError((err as Error).message);
  }
}

/**
 * The artifact as an image in `registry`, in a repository named after the artifact; released when the plan ends, or
 * collected by `berth gc --image-registry` once it expired, when berth could not release it. A step's image is pushed
 * for that step's pod alone, created next with BERTH_TTL as its activeDeadlineSeconds and expiry annotation: given
 * `{ ttlSeconds: BERTH_TTL }`, the image expires as the pod would. The pod pulls it as it starts (within
 * BERTH_START_TIMEOUT, far less), and no later pod names it, since each step pushes its own.
 */
export function pushStepImage(artifact: Artifact, name: string, registry: ImageRegistry, lifetime: OwnPushOptions, signal?: AbortSignal): Promise<OwnImage> {
  return withStepImage(artifact, signal, (image) => pushToOwnRepository(registry, name, image, lifetime));
}

/** The artifact read as an image, its blobs on disk while `use` runs (a push, or a feed into the pod that serves it). */
export async function withStepImage<T>(artifact: Artifact, signal: AbortSignal | undefined, use: (image: AssembledImage) => Promise<T>): Promise<T> {
  const work = await mkdtemp(join(tmpdir(), 'berth-step-image-'));
  try {
    const folder = 'dir' in artifact ? artifact.dir : join(work, 'artifact');
    if (!('dir' in artifact)) await unpackTar(await artifactTar(artifact, signal), folder);
    const blobs = join(work, 'blobs');
    await mkdir(blobs);
    return await use(await imageInFolder(folder, blobs));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Which of the image resources' formats the folder holds, read as an image ready to push. */
export async function imageInFolder(folder: string, blobs: string): Promise<AssembledImage> {
  const has = async (entry: string): Promise<boolean> => Boolean(await stat(join(folder, entry)).catch(() => undefined));
  if (await has('metadata.json')) return assembleImage((await readRootfsArtifact(folder, blobs)).image);
  if (await has('image.tar')) return readImageArchive(join(folder, 'image.tar'), blobs);
  if (await has('oci-layout')) return readImageArchive(folder, blobs);
  throw new ImageArtifactError(
    folder,
    'holds no image: an image artifact has rootfs/ beside metadata.json (format: rootfs) or image.tar (format: oci), as registry-image writes them',
  );
}
