/**
 * `docker build`: the Dockerfile is built by buildah in a builder container of this berth serve (a privileged pod:
 * buildah runs each RUN in a chroot of its own), fed the context as a copy before its start. Its log is the build's
 * output (images/build-stream.ts); once berth-build says the image is written, berth reads it out of the pod as a
 * docker archive, pushes it by digest to the registry `--image-registry` names (as a commit's image) and removes the
 * builder container, whatever the outcome. A build leaves nothing behind but the image.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { readImageArchive } from '../../registry/image-archive.js';
import type { ContainerConfig } from '../../registry/oci-image.js';
import type { HeldTar } from '../../runtime/files.js';
import type { ContainerRecord, CreateBody } from '../model.js';
import { readEntry } from '../containers/archive-entries.js';
import type { MadeBase } from './build-bases.js';
import { builderArgs, type BuildRequest } from './build-request.js';
import type { BuildStream } from './build-stream.js';
import type { ImageOutlet } from './image-outlet.js';
import { madeFrom, type MadeImage } from './made-image.js';

/** Where berth copies the context in the builder container, and where berth-build leaves the image. */
const CONTEXT_DIR = '/context';
const IMAGE_FILE = '/out/image.tar';
/** How long a builder whose log broke may take to show that it ended, before the log is opened again. */
const EXIT_GRACE_MS = 5000;
const LOG_OPENS = 4;
/** A Dockerfile larger than this is not read for berth's own bases (the builder still builds it). */
const MAX_DOCKERFILE_BYTES = 1024 * 1024;

export const NO_BUILDER =
  'berth serve builds images in a builder pod: start it with --builder-image IMAGE (or $BERTH_BUILDER_IMAGE), an image with buildah and berth-build (scripts/build-images.sh builds localhost/berth/builder:1)';
export const NO_BUILD_TARGET =
  "berth serve keeps a built image where the cluster's nodes pull it: start berth serve with --image-registry REGISTRY/PREFIX (the dev cluster's: http://10.244.0.1:5115/PREFIX), or --image-server IMAGE (the berth image) to serve it from a pod";

export interface BuildDeps {
  /** Where the built image goes (--image-registry or --image-server); undefined: builds are refused, saying so. */
  outlet: ImageOutlet | undefined;
  builderImage: string | undefined;
  /** Registries the builder pulls base images from over plain http (berth serve's --insecure-registry). */
  insecure: readonly string[];
  /** The images berth made that the Dockerfile's FROMs name (images/build-bases.ts). */
  basesFor(dockerfile: string, buildArgs: Record<string, string>): MadeBase[];
  createBuilder(body: CreateBody): Promise<ContainerRecord>;
  putArchive(c: ContainerRecord, path: string, archive: Promise<HeldTar>): Promise<void>;
  start(c: ContainerRecord): Promise<void>;
  /** The builder's log, followed from its first byte. */
  followLog(c: ContainerRecord): Promise<Readable>;
  /** Its exit code once it ended, or undefined when it still runs after `ms`. */
  exitCode(c: ContainerRecord, ms: number): Promise<number | undefined>;
  execStream(c: ContainerRecord, argv: string[], io: { stdout: Writable; stderr: Writable }): Promise<number>;
  remove(c: ContainerRecord): Promise<void>;
}

/** Throws what failed, in words for the build's errorDetail; the stream has shown the build's output meanwhile. */
export async function buildImage(deps: BuildDeps, req: BuildRequest, context: Promise<HeldTar>, stream: BuildStream, signal?: AbortSignal): Promise<MadeImage> {
  if (!deps.builderImage) throw new Error(NO_BUILDER);
  const outlet = deps.outlet;
  if (!outlet) throw new Error(NO_BUILD_TARGET);
  // a context that cannot be read fails here, before anything exists in the cluster
  const dockerfile = await readEntry(await context, req.dockerfile, MAX_DOCKERFILE_BYTES);
  const bases = dockerfile ? deps.basesFor(dockerfile.toString(), req.buildArgs) : [];
  const insecure = [...new Set([...deps.insecure, ...outlet.insecureHosts(bases.map((b) => b.ref))])];
  const work = await mkdtemp(join(tmpdir(), 'berth-build-'));
  const builder = await deps
    .createBuilder({
      Image: deps.builderImage,
      Cmd: ['berth-build', ...builderArgs(req, CONTEXT_DIR)],
      Env: [`BERTH_BUILD_INSECURE=${insecure.join(',')}`, `BERTH_BUILD_BASES=${bases.map((b) => `${b.name}=${b.ref}`).join(',')}`],
      HostConfig: { Privileged: true },
    })
    .catch(async (err: unknown) => {
      await rm(work, { recursive: true, force: true });
      throw err;
    });
  // a client that goes away cancels the build, as dockerd's: the builder's removal ends its log and its exec
  const cancel = (): void => void deps.remove(builder).catch(() => undefined);
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    await deps.putArchive(builder, CONTEXT_DIR, context);
    await deps.start(builder).catch((err: Error) => {
      throw new Error(startFailure(err.message, deps.builderImage!));
    });
    const exit = await followBuild(deps, builder, stream);
    if (!stream.ready) {
      const why = stream.errorText || 'no error was printed';
      throw new Error(`the build failed: ${why} (the builder exited ${exit ?? 'without an exit code'})`);
    }
    return await keepImage({ ...deps, outlet }, req, builder, work, signal);
  } finally {
    signal?.removeEventListener('abort', cancel);
    await deps.remove(builder).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

const CANCELLED = 'the build was cancelled: its client went away';

/** The built image read out of the builder, put where the nodes pull it by digest; what berth records of it. */
async function keepImage(
  deps: BuildDeps & { outlet: ImageOutlet },
  req: BuildRequest,
  builder: ContainerRecord,
  work: string,
  signal?: AbortSignal,
): Promise<MadeImage> {
  if (signal?.aborted) throw new Error(CANCELLED);
  const file = join(work, 'image.tar');
  await copyImageOut(deps, builder, file);
  const image = await readImageArchive(file, work);
  if (signal?.aborted) throw new Error(CANCELLED);
  const pushed = await deps.outlet.put(repositoryNameOf(req), image).catch((err: Error) => {
    throw new Error(`could not put the built image in ${deps.outlet.where}: ${err.message}`);
  });
  const config = JSON.parse(image.config.bytes.toString()) as { config?: ContainerConfig; created?: string; architecture?: string; os?: string };
  return {
    id: image.config.digest,
    ...madeFrom(pushed),
    config: config.config ?? {},
    created: config.created ?? new Date().toISOString(),
    architecture: config.architecture ?? 'amd64',
    os: config.os ?? 'linux',
  };
}

/** The repository a build's image is pushed to is named after its first tag (`localhost/app:1` → app). */
function repositoryNameOf(req: BuildRequest): string {
  return (
    req.tags[0]
      ?.replace(/:[^/:]*$/, '')
      .split('/')
      .pop() ?? 'build'
  );
}

/**
 * Shows the builder's log until berth-build says the image is ready or the builder ends. The log is read again
 * after a break (continuing after the bytes already shown) and once more after the end, so that what a builder
 * wrote between a break and its end is shown too.
 */
async function followBuild(deps: BuildDeps, c: ContainerRecord, stream: BuildStream): Promise<number | undefined> {
  let shown = 0;
  let exit: number | undefined;
  for (let open = 0; open < LOG_OPENS; open++) {
    const log = await deps.followLog(c);
    let skip = shown;
    for await (const chunk of log as AsyncIterable<Buffer>) {
      const rest = chunk.subarray(Math.min(skip, chunk.length));
      skip -= chunk.length - rest.length;
      shown += rest.length;
      stream.write(rest);
      if (stream.ready) break;
    }
    log.destroy();
    // berth-build's failure is its last line, and a log read once the builder had ended is its whole log
    if (stream.ready || stream.failedExit !== undefined || exit !== undefined) break;
    exit = await deps.exitCode(c, EXIT_GRACE_MS);
  }
  stream.end();
  return stream.ready ? undefined : (stream.failedExit ?? exit);
}

/** /out/image.tar through exec into `file`. */
async function copyImageOut(deps: BuildDeps, c: ContainerRecord, file: string): Promise<void> {
  const stdout = new PassThrough();
  let errors = '';
  const stderr = new PassThrough().on('data', (d: Buffer) => (errors = (errors + d.toString()).slice(-2000)));
  const [code] = await Promise.all([
    deps.execStream(c, ['cat', IMAGE_FILE], { stdout, stderr }).finally(() => stdout.end()),
    pipeline(stdout, createWriteStream(file)),
  ]);
  if (code !== 0) throw new Error(`could not read the built image out of the builder (cat exit ${code}): ${errors.trim() || 'no message'}`);
}

/** A builder that did not start: the privilege a namespace refuses, or an image the nodes cannot pull, named with the fix. */
function startFailure(message: string, builderImage: string): string {
  if (/PodSecurity|privileged/i.test(message))
    return `the build needs a privileged pod (buildah runs the Dockerfile's RUN steps in chroots of its own), which the cluster refused: ${message}; allow privileged pods in the namespace (label it pod-security.kubernetes.io/enforce=privileged) or build elsewhere`;
  if (/ImagePull|ErrImage|pull/i.test(message))
    return `the builder image ${builderImage} could not be pulled: ${message}; give --builder-image an image the cluster's nodes can pull`;
  return `the builder pod did not start: ${message}`;
}
