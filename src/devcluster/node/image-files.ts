// What a path is in an image's filesystem. runc creates a container's missing working directory; podman 4
// refuses one that `--workdir` names unless the image has it, so the node must know beforehand.
import { lstatSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { PodmanCli } from './podman-cli.js';

export type PathKind = 'directory' | 'missing' | 'other';

/** symlinks followed before giving up, as the kernel's limit */
const MAX_LINKS = 40;

export interface FileOps {
  lstat(path: string): { isDirectory(): boolean; isSymbolicLink(): boolean } | undefined;
  readlink(path: string): string;
}

const hostFiles: FileOps = {
  lstat: (path) => lstatSync(path, { throwIfNoEntry: false }),
  readlink: (path) => readlinkSync(path),
};

/**
 * `path` as the container sees it below `root`: symlinks, absolute or relative, are followed inside the root,
 * and `..` never leaves it. 'other' is a file, a link loop, or anything that is not a directory.
 */
export function pathKindInRoot(root: string, path: string, files: FileOps = hostFiles): PathKind {
  const resolved: string[] = [];
  const pending = path.split('/').filter((p) => p !== '' && p !== '.');
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '..') {
      resolved.pop();
      continue;
    }
    const here = join(root, ...resolved, part);
    const stat = files.lstat(here);
    if (!stat) return 'missing';
    if (stat.isSymbolicLink()) {
      if (++links > MAX_LINKS) return 'other';
      const target = files.readlink(here);
      if (target.startsWith('/')) resolved.length = 0;
      pending.unshift(...target.split('/').filter((p) => p !== '' && p !== '.'));
      continue;
    }
    if (!stat.isDirectory() && pending.length > 0) return 'other';
    resolved.push(part);
    if (pending.length === 0) return stat.isDirectory() ? 'directory' : 'other';
  }
  return 'directory';
}

/** the kind of `path` in image `imageId`; undefined when podman cannot mount the image (rootless podman) */
export async function pathKindInImage(cli: PodmanCli, imageId: string, path: string): Promise<PathKind | undefined> {
  const mounted = await cli.run(['image', 'mount', imageId], 20_000);
  if (mounted.code !== 0) return undefined;
  try {
    return pathKindInRoot(mounted.stdout.trim(), path);
  } finally {
    await cli.run(['image', 'unmount', imageId], 20_000);
  }
}
