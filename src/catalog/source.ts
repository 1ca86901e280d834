/**
 * Where catalogs come from: a local file, an https URL or an OCI artifact, each optionally pinned by
 * a trailing `@sha256:<hex>`. Pinned content is kept in a content-addressed cache and served from it
 * without the network afterwards; unpinned content is fetched every time.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fetchUrl, FetchError } from '../registry/http.js';
import { withProgress } from '../registry/progress.js';
import type { Catalog } from './model.js';
import { pullCatalogArtifact, parseOciRef, sha256Digest } from './oci.js';
import { parseCatalog } from './parse.js';

export interface SourceOptions {
  cacheDir?: string;
  caFile?: string;
  /** Relative file references are resolved against this (default: the working directory). */
  cwd?: string;
}

export type RefKind = 'file' | 'https' | 'oci';

export interface ParsedRef {
  kind: RefKind;
  /** The location without the pin. */
  location: string;
  /** `sha256:<hex>` when pinned. */
  pin?: string;
}

export function parseRef(ref: string): ParsedRef {
  if (ref.startsWith('oci://')) {
    const oci = parseOciRef(ref);
    return { kind: 'oci', location: ref.replace(/@sha256:[0-9a-f]{64}$/, ''), pin: oci.digest };
  }
  const m = /^(.*)@(sha256:[0-9a-f]{64})$/.exec(ref);
  const location = m ? m[1] : ref;
  const pin = m ? m[2] : undefined;
  if (/^https:\/\//.test(location)) return { kind: 'https', location, pin };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location) && !location.startsWith('file://'))
    throw new FetchError(`${ref}: catalogs come from a file, an https:// URL or an oci:// reference`);
  return { kind: 'file', location: location.replace(/^file:\/\//, ''), pin };
}

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.BERTH_CACHE_DIR || path.join(env.XDG_CACHE_HOME || path.join(env.HOME ?? os.homedir(), '.cache'), 'berth');
}

/** Reads, verifies and parses a catalog reference. */
export async function loadCatalog(ref: string, opts: SourceOptions = {}): Promise<Catalog> {
  const { text, base } = await readCatalogBytes(ref, opts);
  return parseCatalog(text.toString('utf8'), { ref, base });
}

export async function readCatalogBytes(ref: string, opts: SourceOptions = {}): Promise<{ text: Buffer; base: string; digest: string }> {
  const parsed = parseRef(ref);
  const cacheDir = opts.cacheDir ?? defaultCacheDir();
  if (parsed.kind === 'file') {
    const file = path.resolve(opts.cwd ?? process.cwd(), parsed.location);
    let text: Buffer;
    try {
      text = readFileSync(file);
    } catch (err) {
      throw new FetchError(`cannot read catalog ${ref}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
    }
    return { text: checkPin(ref, parsed.pin, text), base: pathToFileURL(file).href, digest: sha256Digest(text) };
  }
  if (parsed.kind === 'https') {
    const cached = parsed.pin ? readCached(cacheDir, parsed.pin) : undefined;
    const text =
      cached ??
      checkPin(
        ref,
        parsed.pin,
        await withProgress(
          `catalog ${parsed.location}`,
          async (onProgress) => (await fetchUrl(parsed.location, { caFile: opts.caFile, label: 'catalog source', onProgress })).body,
        ),
      );
    if (parsed.pin && !cached) writeCached(cacheDir, text);
    return { text, base: parsed.location, digest: sha256Digest(text) };
  }
  // OCI: a pinned manifest digest names the layer too, so both are cached under the manifest's digest.
  const oci = parseOciRef(ref);
  const cached = oci.digest ? readCached(cacheDir, oci.digest, 'oci') : undefined;
  if (cached) return { text: cached, base: parsed.location, digest: sha256Digest(cached) };
  const { manifestDigest, layer } = await pullCatalogArtifact(oci, { caFile: opts.caFile });
  if (oci.digest) writeCached(cacheDir, layer, 'oci', manifestDigest);
  return { text: layer, base: parsed.location, digest: sha256Digest(layer) };
}

function checkPin(ref: string, pin: string | undefined, text: Buffer): Buffer {
  if (pin && sha256Digest(text) !== pin) throw new FetchError(`catalog ${ref} has digest ${sha256Digest(text)}, not the pinned ${pin}: refusing it`);
  return text;
}

function cachePath(cacheDir: string, digest: string, area = 'blobs'): string {
  return path.join(cacheDir, 'catalogs', area, digest.replace(':', '-'));
}

function readCached(cacheDir: string, digest: string, area?: string): Buffer | undefined {
  const file = cachePath(cacheDir, digest, area);
  if (!existsSync(file)) return undefined;
  const data = readFileSync(file);
  // The OCI area is keyed by manifest digest, so its content cannot be rechecked against the key.
  if (!area && sha256Digest(data) !== digest) return undefined;
  return data;
}

function writeCached(cacheDir: string, data: Buffer, area?: string, key = sha256Digest(data)): void {
  const file = cachePath(cacheDir, key, area);
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}
