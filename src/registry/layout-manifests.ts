/**
 * The manifests an OCI image layout folder offers a registry's clients, read once when its server starts:
 * those index.json names, by digest and by their `org.opencontainers.image.ref.name` tag, and those of any
 * index among them (a pull of a multi-platform image asks for its platform's manifest next). Only the
 * index documents are read here; the manifests' bytes stay on disk until asked for.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ImageArtifactError } from './artifact-error.js';
import { DIGEST_PATTERN, isIndexMediaType, OCI_REF_NAME, type Descriptor } from './oci-media.js';

const MAX_NESTING = 4;

export interface LayoutManifests {
  /** What index.json lists, in its order. */
  listed: Descriptor[];
  byDigest: Map<string, Descriptor>;
  byTag: Map<string, Descriptor>;
}

/** The file of a blob; `digest` must already be `sha256:<64 hex>`, so the path stays under `blobs/sha256`. */
export function blobFile(dir: string, digest: string): string {
  return path.join(dir, 'blobs', 'sha256', digest.slice('sha256:'.length));
}

export async function readLayoutManifests(dir: string): Promise<LayoutManifests> {
  const folder = await stat(dir).catch(() => undefined);
  if (!folder?.isDirectory()) throw new ImageArtifactError(dir, folder ? 'not a folder' : 'missing: no such folder');
  const layout = await jsonFile(path.join(dir, 'oci-layout'));
  if (typeof layout.imageLayoutVersion !== 'string')
    throw new ImageArtifactError(path.join(dir, 'oci-layout'), 'has no imageLayoutVersion: not an OCI image layout');
  const indexFile = path.join(dir, 'index.json');
  const listed = await descriptorsOf(await jsonFile(indexFile), indexFile, dir);
  if (listed.length === 0) throw new ImageArtifactError(indexFile, 'names no manifest');
  const found: LayoutManifests = { listed, byDigest: new Map(), byTag: new Map() };
  await collect(found, listed, dir, 0);
  return found;
}

async function collect(found: LayoutManifests, descriptors: Descriptor[], dir: string, depth: number): Promise<void> {
  for (const d of descriptors) {
    const tag = depth === 0 ? d.annotations?.[OCI_REF_NAME] : undefined;
    if (tag !== undefined && !found.byTag.has(tag)) found.byTag.set(tag, d);
    if (found.byDigest.has(d.digest)) continue;
    found.byDigest.set(d.digest, d);
    if (!isIndexMediaType(d.mediaType)) continue;
    const file = blobFile(dir, d.digest);
    if (depth >= MAX_NESTING) throw new ImageArtifactError(file, `an index nested more than ${MAX_NESTING} deep below index.json`);
    await collect(found, await descriptorsOf(await jsonFile(file), file, dir), dir, depth + 1);
  }
}

/** The `manifests` of an index document, each checked to name a blob of its size in the layout. */
async function descriptorsOf(doc: Record<string, unknown>, file: string, dir: string): Promise<Descriptor[]> {
  const manifests = doc.manifests;
  if (!Array.isArray(manifests)) throw new ImageArtifactError(file, 'has no manifests list: not an image index');
  const descriptors: Descriptor[] = [];
  for (const [i, m] of manifests.entries()) {
    const d = m as Partial<Descriptor> | null;
    const what = `manifests[${i}]`;
    if (!d || typeof d.digest !== 'string' || !DIGEST_PATTERN.test(d.digest))
      throw new ImageArtifactError(file, `${what} has the digest ${String(d?.digest)}, not sha256:<64 hex>`);
    if (typeof d.mediaType !== 'string' || typeof d.size !== 'number') throw new ImageArtifactError(file, `${what} (${d.digest}) has no mediaType or size`);
    const blob = await stat(blobFile(dir, d.digest)).catch(() => undefined);
    if (!blob?.isFile()) throw new ImageArtifactError(file, `${what} names ${d.digest}, which the layout has no blob of`);
    if (blob.size !== d.size) throw new ImageArtifactError(file, `${what} says ${d.digest} is ${d.size} bytes; its blob is ${blob.size}`);
    descriptors.push(d as Descriptor);
  }
  return descriptors;
}

async function jsonFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ImageArtifactError(file, code === 'ENOENT' ? 'missing: not an OCI image layout' : `cannot be read (${(err as Error).message})`);
  }
  try {
    const doc = JSON.parse(text) as unknown;
    if (doc && typeof doc === 'object' && !Array.isArray(doc)) return doc as Record<string, unknown>;
  } catch {
    /* said below */
  }
  throw new ImageArtifactError(file, 'is not a JSON object');
}
