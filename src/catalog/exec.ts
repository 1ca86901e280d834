/**
 * Exec providers: the platform's binary is downloaded once into the cache, and its sha256 is checked
 * against the catalog before every run (a cached file can be changed after it was verified).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchUrl } from '../registry/http.js';
import type { Catalog, ExecPlatform } from './model.js';
import { sha256Digest } from './oci.js';
import { normalizeSha } from './resolve.js';
import { defaultCacheDir } from './source.js';

export class ExecProviderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExecProviderError';
  }
}

export function currentPlatform(): { os: string; arch: string } {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return { os, arch };
}

export function selectPlatform(platforms: ExecPlatform[], want = currentPlatform()): ExecPlatform | undefined {
  return platforms.find((p) => p.os === want.os && p.arch === want.arch);
}

/** The URI a catalog names, made absolute against the catalog's own location. */
export function resolveUri(uri: string, catalog: Pick<Catalog, 'base'>): URL {
  return new URL(uri, catalog.base);
}

async function download(url: URL, caFile?: string): Promise<Buffer> {
  if (url.protocol === 'file:') return readFileSync(fileURLToPath(url));
  if (url.protocol !== 'https:') throw new ExecProviderError(`${url.href}: executables are fetched over https or from files`);
  return (await fetchUrl(url.href, { caFile, label: 'executable' })).body;
}

export interface ExecFetchOptions {
  cacheDir?: string;
  caFile?: string;
}

/** Returns the path of a verified executable for `platform`, downloading it when not cached. */
export async function ensureExecutable(platform: ExecPlatform, catalog: Pick<Catalog, 'base' | 'name'>, opts: ExecFetchOptions = {}): Promise<string> {
  const want = normalizeSha(platform.sha256);
  const file = path.join(opts.cacheDir ?? defaultCacheDir(), 'exec', want.replace(':', '-'), path.basename(platform.bin));
  if (!existsSync(file)) {
    const url = resolveUri(platform.uri, catalog);
    const data = await download(url, opts.caFile);
    const got = sha256Digest(data);
    if (got !== want) throw new ExecProviderError(`sha256 mismatch for ${platform.bin} (${platform.os}/${platform.arch}) from ${url.href}: catalog ${catalog.name} says ${want}, the download is ${got}; refusing to run it`);
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, data, { mode: 0o755 });
    renameSync(tmp, file);
  }
  verifyExecutable(file, want, catalog.name);
  chmodSync(file, 0o755);
  return file;
}

export function verifyExecutable(file: string, sha256: string, catalogName: string): void {
  const got = sha256Digest(readFileSync(file));
  if (got !== normalizeSha(sha256)) throw new ExecProviderError(`sha256 mismatch for ${file}: catalog ${catalogName} says ${normalizeSha(sha256)}, the file is ${got}; refusing to run it`);
}
