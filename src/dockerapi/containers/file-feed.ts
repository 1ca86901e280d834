/**
 * Files copied into a container before its start, for a container whose command berth does not know
 * (no Cmd or Entrypoint given, and its image's config could not be read, e.g. podman's local images): the
 * command cannot be wrapped to wait for them (container-pod.ts), so they come through an init container
 * of the helper image instead. It waits on an emptyDir; berth unpacks each archive into it through exec,
 * then marks it ready and the init container ends; every regular file of the archives is mounted into
 * the main container at its destination (a subPath mount of that one file), so the image's other files
 * in the same folders stay as they are. The main container starts with its own command, untouched.
 */
import { posix } from 'node:path';
import { extract } from 'tar-stream';
import type { V1Container, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { once } from 'node:events';
import { tarPieces, type KeptTar } from './archive-spill.js';
import type { ContainerRecord, CopiedArchive } from '../model.js';

export const FEED_CONTAINER = 'berth-files';
const FEED_VOLUME = 'berth-files';
const FEED_ROOT = '/berth-files';
const FEED_READY = `${FEED_ROOT}/.berth-ready`;

/** Why the init container could not run (its image not pulled), naming the image and the setting that picks another. */
export function feedFailure(image: string, reason: string): string {
  return `init container ${FEED_CONTAINER} (the helper image ${image}, which delivers the files copied before start): ${reason} (start berth serve with --helper-image, or $BERTH_HELPER_IMAGE, naming an image with sh and tar that the cluster can pull)`;
}

/** Whether the files of `c` need the init container: some were copied before start and its command is unknown. */
export function needsFileFeed(c: ContainerRecord): boolean {
  return c.pendingArchives.length + c.copiedArchives.length > 0 && c.entrypoint.length + c.cmd.length === 0;
}

/** Where archive `k` is unpacked in the init container's volume. */
export function feedFolder(k: number): string {
  return `${FEED_ROOT}/${k}`;
}

export const FEED_READY_ARGV = ['/bin/sh', '-c', `: > ${FEED_READY}`];

/** One subPath mount per regular file of the archives, at its destination (a later copy of the same path wins). */
export async function feedMounts(archives: CopiedArchive[]): Promise<Array<{ name: string; mountPath: string; subPath: string }>> {
  const byTarget = new Map<string, string>();
  for (const [k, a] of archives.entries()) {
    for (const name of await regularFiles(a.tar)) byTarget.set(posix.join(a.path, name), `${k}/${name}`);
  }
  return [...byTarget].map(([mountPath, subPath]) => ({ name: FEED_VOLUME, mountPath, subPath }));
}

/** What the pod gets for the feed: its volume, the waiting init container (as the main container's user) and the main container's file mounts. */
export function fileFeedParts(
  mounts: Array<{ name: string; mountPath: string; subPath: string }>,
  helperImage: string,
): { volume: V1Volume; init: V1Container; mainMounts: V1VolumeMount[] } {
  return {
    volume: { name: FEED_VOLUME, emptyDir: {} },
    // no securityContext: sandbox-plan.ts gives it the main container's
    init: {
      name: FEED_CONTAINER,
      image: helperImage,
      imagePullPolicy: 'IfNotPresent',
      command: ['/bin/sh', '-c', `while [ ! -e ${FEED_READY} ]; do sleep 0.05; done`],
      volumeMounts: [{ name: FEED_VOLUME, mountPath: FEED_ROOT }],
    },
    mainMounts: mounts.map((m) => ({ ...m, readOnly: false })),
  };
}

/** The names of the regular files in a (sanitized) archive, without a leading `./`. */
async function regularFiles(tar: KeptTar): Promise<string[]> {
  const ex = extract();
  const names: string[] = [];
  ex.on('entry', (header, stream, next) => {
    const name = header.name.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    if (header.type === 'file' && name) names.push(name);
    stream.on('end', next);
    stream.resume();
  });
  const done = new Promise<void>((resolve, reject) => {
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  done.catch(() => undefined); // awaited below; an error while writing ends the loop first
  for await (const piece of tarPieces(tar)) if (!ex.write(piece)) await once(ex, 'drain');
  ex.end(Buffer.alloc(0));
  await done;
  return names;
}
