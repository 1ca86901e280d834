/**
 * Files copied into a container before its start, for a container whose command berth does not know
 * (no Cmd or Entrypoint given, and its image's config could not be read, e.g. podman's local images): the
 * command cannot be wrapped to wait for them (container-pod.ts), so they come through berth's one file feed
 * (runtime/file-feed.ts) into a receiving init container of the helper image instead. The kept archives go as
 * one archive, archive `k` under the folder `k/` of an emptyDir; every regular file of them is mounted into
 * the main container at its destination (a subPath mount of that one file), so the image's other files in the
 * same folders stay as they are. The main container starts with its own command, untouched.
 */
import { posix } from 'node:path';
import { Readable } from 'node:stream';
import type { Header } from 'tar-stream';
import type { V1Container, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { planFeedReceiver, type FeedPlan } from '../../runtime/feed-receiver.js';
import type { AddEntry } from '../../runtime/feed-tar.js';
import { safeEntryName } from '../../runtime/files.js';
import { drained, eachEntry } from './archive-entries.js';
import type { ContainerRecord, CopiedArchive } from '../model.js';

export const FEED_CONTAINER = 'berth-files';
const FEED_VOLUME = 'berth-files';
const FEED_ROOT = '/berth-files';

/** The receiver of a container's copied files, as the sender sees it. */
export const FEED_PLAN: FeedPlan = { container: FEED_CONTAINER, marker: '.berth-complete' };

/** Why the init container could not run (its image not pulled), naming the image and the setting that picks another. */
export function feedFailure(image: string, reason: string): string {
  return `init container ${FEED_CONTAINER} (the helper image ${image}, which delivers the files copied before start): ${reason} (start berth serve with --helper-image, or $BERTH_HELPER_IMAGE, naming an image with sh and tar that the cluster can pull)`;
}

/** Whether the files of `c` need the init container: some were copied before start and its command is unknown. */
export function needsFileFeed(c: ContainerRecord): boolean {
  return c.pendingArchives.length + c.copiedArchives.length > 0 && c.entrypoint.length + c.cmd.length === 0;
}

/** One subPath mount per regular file of the archives, at its destination (a later copy of the same path wins). */
export async function feedMounts(archives: CopiedArchive[]): Promise<Array<{ name: string; mountPath: string; subPath: string }>> {
  const byTarget = new Map<string, string>();
  for (const [k, a] of archives.entries()) {
    await eachEntry(a.tar, async (header, body) => {
      const name = safeEntryName(header.name);
      if (header.type === 'file' && name) byTarget.set(posix.join(a.path, name), `${k}/${name}`);
      await drained(body);
    });
  }
  return [...byTarget].map(([mountPath, subPath]) => ({ name: FEED_VOLUME, mountPath, subPath }));
}

/** What the pod gets for the feed: its volume, the receiving init container and the main container's file mounts. */
export function fileFeedParts(
  mounts: Array<{ name: string; mountPath: string; subPath: string }>,
  helperImage: string,
): { volume: V1Volume; init: V1Container; mainMounts: V1VolumeMount[] } {
  return {
    volume: { name: FEED_VOLUME, emptyDir: {} },
    init: planFeedReceiver({
      ...FEED_PLAN,
      image: helperImage,
      dir: FEED_ROOT,
      carries: 'file copy',
      volumeMounts: [{ name: FEED_VOLUME, mountPath: FEED_ROOT }],
      // the files are the main container's as it sees itself: sandbox-plan.ts gives the receiver its security context
      runAs: 'fed container',
    }),
    mainMounts: mounts.map((m) => ({ ...m, readOnly: false })),
  };
}

/** The feed's content: archive `k` of `archives` under `k/`, its hard links' targets too, in order. */
export async function addArchives(add: AddEntry, archives: CopiedArchive[]): Promise<void> {
  for (const [k, a] of archives.entries()) {
    await add({ name: String(k), type: 'directory', mode: 0o755 });
    await eachEntry(a.tar, async (header, body) => {
      const moved = underFolder(header, String(k));
      if (header.type === 'file' || header.type === 'contiguous-file') return add(moved, Readable.from(body));
      await drained(body);
      await add(moved);
    });
  }
}

/**
 * An entry of a kept (sanitized) archive moved under `folder`. A name or link target in its pax records would
 * override the moved one, so they go: the header carries them again, and tar-stream writes them where too long.
 */
function underFolder(header: Header, folder: string): Header & { name: string } {
  const { path: _path, linkpath: _linkpath, ...pax } = (header.pax ?? {}) as Record<string, string>;
  const name = safeEntryName(header.name);
  return {
    ...header,
    name: name ? `${folder}/${name}` : folder,
    ...(header.type === 'link' ? { linkname: `${folder}/${safeEntryName(header.linkname ?? '')}` } : {}),
    pax: Object.keys(pax).length ? pax : undefined,
  };
}
