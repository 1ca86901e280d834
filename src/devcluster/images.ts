// Images reach the node from podman, as `kind load` brings them from docker: saved as a docker archive and imported
// into containerd's CRI namespace, pinned so that image GC never takes them (there is no registry to pull back from).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Layout } from './layout.js';
import { containerdSocket, type NodeSpec } from './nodes.js';

const CRI_NAMESPACE = 'k8s.io';

function podmanHas(image: string): boolean {
  return spawnSync('podman', ['image', 'exists', image]).status === 0;
}

/** The pause image, built here as podman builds its own: catatonit alone in an empty image. */
export function ensurePauseImage(tag: string): void {
  if (podmanHas(tag)) return;
  const dir = mkdtempSync(join(tmpdir(), 'berth-pause-'));
  try {
    copyFileSync('/usr/bin/catatonit', join(dir, 'catatonit'));
    writeFileSync(join(dir, 'Containerfile'), 'FROM scratch\nCOPY catatonit /catatonit\nENTRYPOINT ["/catatonit", "-P"]\n');
    const r = spawnSync('podman', ['build', '--runtime', '/usr/sbin/runc', '-q', '-t', tag, dir], { encoding: 'utf8' });
    if (r.status !== 0)
      throw new Error(`dev-cluster: building the pause image ${tag} failed (is catatonit installed? apt-get install catatonit):\n${r.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** podman save | ctr import into one node's containerd, streamed; resolves when it has every image */
export async function loadImages(layout: Layout, node: NodeSpec, images: string[]): Promise<void> {
  const missing = images.filter((i) => !podmanHas(i));
  if (missing.length)
    throw new Error(`dev-cluster load: no image ${missing.join(', ')} in podman (build it first: podman build -t NAME ., or scripts/build-images.sh)`);
  const save = spawn('podman', ['save', '--format', 'docker-archive', ...(images.length > 1 ? ['-m'] : []), ...images], { stdio: ['ignore', 'pipe', 'pipe'] });
  const ctr = spawn(
    layout.bin('containerd', 'ctr'),
    ['--address', containerdSocket(node), '-n', CRI_NAMESPACE, 'images', 'import', '--all-platforms', '--label', 'io.cri-containerd.pinned=pinned', '-'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  save.stdout.pipe(ctr.stdin);
  const errors: string[] = [];
  save.stderr.on('data', (d) => errors.push(String(d)));
  ctr.stderr.on('data', (d) => errors.push(String(d)));
  ctr.stdout.resume();
  const ended = (p: ReturnType<typeof spawn>) => new Promise<number>((resolve) => p.on('close', (code) => resolve(code ?? 1)));
  const [s, c] = await Promise.all([ended(save), ended(ctr)]);
  if (s !== 0 || c !== 0) throw new Error(`dev-cluster load: importing ${images.join(', ')} into node ${node.name} failed:\n${errors.join('').trim()}`);
}
