/**
 * `docker commit`: a running container's filesystem becomes an image its next containers run. berth has no layers of
 * the container's image, so the image is one layer of the whole filesystem (read with tar through exec, the
 * kernel's /proc, /sys and /dev left out), its config the container's (as dockerd takes it) with the `--change`
 * instructions applied. It is pushed by digest to the registry `berth serve --image-registry` names, where the nodes
 * pull it, and recorded under the name given; its manifest is deleted when the image is removed or berth stops.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { writeLayerBlob } from '../../registry/layer-blob.js';
import { appendLayer, assembleImage, emptyImage, hostPlatform, type ContainerConfig } from '../../registry/oci-image.js';
import { conflict, DockerError } from '../http/http.js';
import type { ContainerRecord } from '../model.js';
import { applyChanges } from './commit-changes.js';
import type { ImageConfig } from './image-config.js';
import type { ImageOutlet } from './image-outlet.js';
import { madeFrom, type MadeImage } from './made-image.js';

export const NO_PUSH_TARGET =
  "berth serve commits an image by putting it where the cluster's nodes pull it: start berth serve with --image-registry REGISTRY/PREFIX (the dev cluster's: http://10.244.0.1:5115/PREFIX), or --image-server IMAGE (the berth image) to serve it from a pod";

/** The whole filesystem but the kernel's: top-level names only, so any tar (busybox's too) can read it. */
const FILESYSTEM_TAR = ['/bin/sh', '-c', 'cd / && exec tar -c -f - $(ls -A / | grep -v -x -e proc -e sys -e dev)'];

export interface CommitRequest {
  repo?: string;
  tag?: string;
  comment?: string;
  author?: string;
  changes: string[];
}

export interface CommitDeps {
  /** Where the committed image goes (--image-registry or --image-server); undefined: commits are refused, saying so. */
  outlet: ImageOutlet | undefined;
  execStream(c: ContainerRecord, argv: string[], io: { stdout: Writable; stderr: Writable }): Promise<number>;
  /** The config of the container's image, as far as berth read it. */
  imageConfig(c: ContainerRecord): ImageConfig | undefined;
}

export async function commitContainer(deps: CommitDeps, c: ContainerRecord, req: CommitRequest): Promise<MadeImage> {
  const outlet = deps.outlet;
  if (!outlet) throw new DockerError(501, NO_PUSH_TARGET);
  if (c.status !== 'running' || !c.podName)
    throw conflict(`cannot commit container ${c.name}: berth commits a running container (its files live in its pod, which ends with it); start it first`);
  const config = applyChanges(containerConfig(c, deps.imageConfig(c)), req.changes);
  const work = await mkdtemp(join(tmpdir(), 'berth-commit-'));
  try {
    const layer = await readFilesystem(deps, c, work);
    const created = new Date().toISOString();
    const platform = hostPlatform();
    const image = appendLayer(
      emptyImage(platform, config, created),
      { descriptor: layer, diffId: layer.diffId, file: layer.file },
      { created, created_by: `berth commit ${c.name}`, ...(req.comment ? { comment: req.comment } : {}), ...(req.author ? { author: req.author } : {}) },
    );
    const assembled = assembleImage(image);
    const pushed = await outlet.put(req.repo?.split('/').pop() ?? `commit-${c.name}`, assembled).catch((err: Error) => {
      throw new DockerError(500, `could not put the committed image of ${c.name} in ${outlet.where}: ${err.message}`);
    });
    return { id: assembled.config.digest, ...madeFrom(pushed), config, created, ...platform };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The container's own settings over its image's, as dockerd commits them. */
function containerConfig(c: ContainerRecord, image: ImageConfig | undefined): ContainerConfig {
  const b = c.body;
  const defined = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;
  return {
    ...(b.User || image?.User ? { User: b.User || image?.User } : {}),
    Env: b.Env ?? image?.Env ?? [],
    ...(c.entrypoint.length ? { Entrypoint: c.entrypoint } : {}),
    ...(c.cmd.length ? { Cmd: c.cmd } : {}),
    ...(b.WorkingDir || image?.WorkingDir ? { WorkingDir: b.WorkingDir || image?.WorkingDir } : {}),
    ...(defined(b.ExposedPorts) || defined(image?.ExposedPorts)
      ? { ExposedPorts: { ...(image?.ExposedPorts ?? {}), ...((b.ExposedPorts ?? {}) as Record<string, object>) } }
      : {}),
    ...(defined(b.Labels) || defined(image?.Labels) ? { Labels: { ...(image?.Labels ?? {}), ...(b.Labels ?? {}) } } : {}),
    ...(b.StopSignal || image?.StopSignal ? { StopSignal: b.StopSignal || image?.StopSignal } : {}),
    ...(b.Healthcheck || image?.Healthcheck ? { Healthcheck: b.Healthcheck ?? image?.Healthcheck } : {}),
  };
}

/** The container's filesystem as one gzipped layer in `dir`, streamed from tar in its pod. */
async function readFilesystem(deps: CommitDeps, c: ContainerRecord, dir: string): Promise<Awaited<ReturnType<typeof writeLayerBlob>>> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let errors = '';
  stderr.on('data', (d: Buffer) => (errors = (errors + d.toString()).slice(-2000)));
  const [code, blob] = await Promise.all([
    deps.execStream(c, FILESYSTEM_TAR, { stdout, stderr }).finally(() => stdout.end()),
    writeLayerBlob(stdout as Readable, dir),
  ]);
  if (code !== 0)
    throw new DockerError(
      500,
      `could not read the files of container ${c.name} (tar exit ${code}): ${errors.trim() || 'no message'}; its image needs sh and tar`,
    );
  return blob;
}
