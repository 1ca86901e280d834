// emptyDir volumes of medium Memory as the kubelet makes them: a tmpfs of its own per volume, sized (SizeMemoryBackedVolumes,
// on by default since 1.22, GA in 1.32) to the least of the node's allocatable memory, the pod's memory limit and the
// volume's sizeLimit, so `df` in the container shows that size and writing past it fails with ENOSPC.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseQuantity } from './quantity.js';

/**
 * The pod's memory limit as its cgroup gets it: only when every container declares one, the larger of the
 * containers' sum and the largest init container (restartable init containers run alongside, so they add).
 */
export function podMemoryLimit(spec: any): number | undefined {
  const containers: any[] = spec?.containers ?? [];
  const inits: any[] = spec?.initContainers ?? [];
  const limitOf = (c: any): number | undefined => (c?.resources?.limits?.memory === undefined ? undefined : parseQuantity(c.resources.limits.memory));
  if ([...containers, ...inits].some((c) => limitOf(c) === undefined)) return undefined;
  const sidecars = inits.filter((c) => c.restartPolicy === 'Always');
  const running = [...containers, ...sidecars].reduce((sum, c) => sum + limitOf(c)!, 0);
  const largestInit = Math.max(0, ...inits.filter((c) => c.restartPolicy !== 'Always').map((c) => limitOf(c)!));
  return Math.max(running, largestInit);
}

/** the kubelet's calculateEmptyDirMemorySize: node allocatable, lowered by a positive pod limit, then by a positive sizeLimit */
export function emptyDirMemoryBytes(volume: any, podSpec: any, nodeAllocatable: number): number {
  let size = nodeAllocatable;
  const podLimit = podMemoryLimit(podSpec);
  if (podLimit !== undefined && podLimit > 0 && podLimit <= size) size = podLimit;
  const sizeLimit = volume?.emptyDir?.sizeLimit;
  const asked = sizeLimit === undefined || sizeLimit === null ? 0 : parseQuantity(sizeLimit);
  if (asked > 0 && asked <= size) size = asked;
  return Math.ceil(size);
}

function isMountPoint(dir: string): boolean {
  return statSync(dir).dev !== statSync(dirname(dir)).dev;
}

/**
 * Mounts a tmpfs of `bytes` on `dir` unless one is there already (a second container of the pod, a restart).
 * Only root can mount: a rootless node keeps the plain directory on /dev/shm, unsized (README).
 */
export function mountMemoryVolume(dir: string, bytes: number): void {
  if (process.getuid?.() !== 0 || isMountPoint(dir)) return;
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** the mount points at or under `root`, deepest first (from /proc/self/mountinfo, whose paths escape spaces as \040) */
function mountsUnder(root: string): string[] {
  let info: string;
  try {
    info = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const unescape = (p: string): string => p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return info
    .split('\n')
    .map((line) => unescape(line.split(' ')[4] ?? ''))
    .filter((p) => p === root || p.startsWith(`${root}/`))
    .sort((a, b) => b.length - a.length);
}

/** unmounts the memory volumes under `root` (a pod's, or the node's at start and stop), then removes it */
export function removeMemoryVolumes(root: string): void {
  for (const mountPoint of mountsUnder(root)) {
    try {
      execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
  rmSync(root, { recursive: true, force: true });
}
