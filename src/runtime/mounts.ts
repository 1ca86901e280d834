/**
 * Host files behind `--mount`/`-v`, read once into memory so planning stays pure and the pod gets
 * exactly the bytes the caller saw. A pod cannot see the caller's disk: mounts are copies.
 */
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { WorkloadMount } from './workload.js';

export interface MountEntry {
  /** Path relative to the mount root, POSIX separators; '' is the root itself. */
  path: string;
  type: 'file' | 'dir' | 'symlink';
  mode: number;
  data?: Buffer;
  linkTarget?: string;
}

export interface MountSnapshot {
  mount: WorkloadMount & { kind: 'file' | 'dir' };
  entries: MountEntry[];
  bytes: number;
}

/** Default ceiling on everything copied into one pod; beyond it a cluster is the wrong place for the data. */
export const DEFAULT_MAX_MOUNT_BYTES = 256 * 1024 * 1024;

export class MountError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MountError';
  }
}

export async function snapshotMounts(mounts: WorkloadMount[], maxBytes = DEFAULT_MAX_MOUNT_BYTES): Promise<MountSnapshot[]> {
  let total = 0;
  const out: MountSnapshot[] = [];
  const charge = (n: number, source: string): void => {
    total += n;
    if (total > maxBytes) {
      throw new MountError(
        `mounted files exceed berth's limit of ${formatBytes(maxBytes)} (reached at ${source}); mount a smaller folder or raise mountLimit in the berth config`,
      );
    }
  };
  for (const mount of mounts) {
    const root = await lstat(mount.source).catch(() => undefined);
    if (!root) throw new MountError(`invalid mount config for type "bind": bind source path does not exist: ${mount.source}`);
    const entries: MountEntry[] = [];
    let bytes = 0;
    if (root.isFile()) {
      const data = await readFile(mount.source);
      charge(data.length, mount.source);
      bytes += data.length;
      entries.push({ path: '', type: 'file', mode: root.mode & 0o7777, data });
      out.push({ mount: { ...mount, kind: 'file' }, entries, bytes });
      continue;
    }
    if (!root.isDirectory()) throw new MountError(`cannot mount ${mount.source}: only regular files and folders can be copied into a pod`);
    entries.push({ path: '', type: 'dir', mode: root.mode & 0o7777 });
    const walk = async (dir: string, rel: string): Promise<void> => {
      const names = (await readdir(dir)).sort();
      for (const name of names) {
        const abs = path.join(dir, name);
        const relPath = rel ? `${rel}/${name}` : name;
        const st = await lstat(abs);
        if (st.isDirectory()) {
          entries.push({ path: relPath, type: 'dir', mode: st.mode & 0o7777 });
          await walk(abs, relPath);
        } else if (st.isFile()) {
          charge(st.size, abs);
          const data = await readFile(abs);
          bytes += data.length;
          entries.push({ path: relPath, type: 'file', mode: st.mode & 0o7777, data });
        } else if (st.isSymbolicLink()) {
          entries.push({ path: relPath, type: 'symlink', mode: 0o777, linkTarget: await readlink(abs) });
        }
        // Sockets, FIFOs and devices have no meaning inside a pod: skipped, as a copy would skip them.
      }
    };
    await walk(mount.source, '');
    out.push({ mount: { ...mount, kind: 'dir' }, entries, bytes });
  }
  return out;
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} KiB`;
  return `${n} B`;
}
