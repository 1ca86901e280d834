/**
 * The smallest image that shows a node pulled it: one layer holding one file (new bytes each time) and nothing to
 * run. A probe serves it
 * where step and build images would go and has a pod name it (runtime/image-probe.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { folderLayer } from './layer-blob.js';
import { appendLayer, assembleImage, emptyImage, type AssembledImage } from './oci-image.js';

/** The path of the file the image holds: a probe pod's command, which cannot run. */
export const PROBE_FILE = '/berth-probe';

/** The image, its blobs on disk while `use` runs. */
export async function withProbeImage<T>(use: (image: AssembledImage) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'berth-probe-image-'));
  try {
    const root = join(dir, 'root');
    await mkdir(root);
    // bytes of its own each time: no node has this image before the probe pulls it
    await writeFile(join(root, PROBE_FILE), `pulled from where berth put it: ${randomBytes(8).toString('hex')}\n`);
    const { layer } = await folderLayer(root, dir);
    return await use(assembleImage(appendLayer(emptyImage(), { descriptor: layer, diffId: layer.diffId, file: layer.file }, { created_by: 'berth probe' })));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
