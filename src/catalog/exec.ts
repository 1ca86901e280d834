/**
 * Exec providers: the platform's download (a bare executable, or a `.tar.gz` holding it) is fetched
 * once into the cache, after its sha256 matched the catalog's. Before every run the cached download is
 * checked against the catalog again, and the executable against what the verified download holds (a
 * cached file can be changed after it was verified). Downloads come from https, files, or a registry
 * blob (`oci://host/repository@sha256:<hex>`, through the registry client and the user's credentials).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchUrl } from '../registry/http.js';
import { withProgress } from '../registry/progress.js';
import { findExecutable, isGzip, readTarGz, writeChecked, type ArchiveEntry } from './archive.js';
import type { Catalog, ExecPlatform } from './model.js';
import { parseOciRef, pullBlob, sha256Digest } from './oci.js';
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
  const label = `executable ${url.href}`;
  if (url.protocol === 'oci:') return withProgress(label, (onProgress) => pullBlob(parseOciRef(url.href), { caFile, label: 'executable', onProgress }));
  if (url.protocol !== 'https:')
    throw new ExecProviderError(`${url.href}: executables are fetched over https, from a registry (oci://host/repository@sha256:<hex>) or from files`);
  return withProgress(label, async (onProgress) => (await fetchUrl(url.href, { caFile, label: 'executable', onProgress })).body);
}

export interface ExecFetchOptions {
  cacheDir?: string;
  caFile?: string;
}

/** A verified exec provider in the cache. */
export interface CachedProvider {
  /** The executable to run. */
  executable: string;
  /** The download the catalog's sha256 is about (the executable itself, or the archive). */
  artifact: string;
  /** sha256 the executable must have: the catalog's, or that of its entry in the verified archive. */
  executableSha256: string;
}

const ARCHIVE_FILE = 'provider.tar.gz';
const UNPACKED_DIR = 'unpacked';

/** Downloads (when not cached), verifies and unpacks the provider of `platform`. */
export async function ensureProvider(platform: ExecPlatform, catalog: Pick<Catalog, 'base' | 'name'>, opts: ExecFetchOptions = {}): Promise<CachedProvider> {
  const want = normalizeSha(platform.sha256);
  const dir = path.join(opts.cacheDir ?? defaultCacheDir(), 'exec', want.replace(':', '-'));
  const plain = path.join(dir, path.basename(platform.bin));
  const archive = path.join(dir, ARCHIVE_FILE);
  if (!existsSync(plain) && !existsSync(archive)) {
    const url = resolveUri(platform.uri, catalog);
    const data = await download(url, opts.caFile);
    const got = sha256Digest(data);
    if (got !== want)
      throw new ExecProviderError(
        `sha256 mismatch for ${platform.bin} (${platform.os}/${platform.arch}) from ${url.href}: catalog ${catalog.name} says ${want}, the download is ${got}; refusing to run it`,
      );
    // Staged in a folder of its own and renamed whole: a failed unpack leaves nothing in the cache.
    const stage = `${dir}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      mkdirSync(stage, { recursive: true });
      if (isGzip(data)) {
        writeFileSync(path.join(stage, ARCHIVE_FILE), data, { mode: 0o644 });
        writeChecked(await readTarGz(data, url.href), path.join(stage, UNPACKED_DIR), url.href);
      } else writeFileSync(path.join(stage, path.basename(platform.bin)), data, { mode: 0o755 });
      rmSync(dir, { recursive: true, force: true });
      renameSync(stage, dir);
    } finally {
      rmSync(stage, { recursive: true, force: true });
    }
  }
  if (!existsSync(archive)) {
    verifyExecutable(plain, want, catalog.name);
    chmodSync(plain, 0o755);
    return { executable: plain, artifact: plain, executableSha256: want };
  }
  // The archive is checked against the catalog and read again: the executable must be what it holds.
  const data = readFileSync(archive);
  if (sha256Digest(data) !== want)
    throw new ExecProviderError(`sha256 mismatch for ${archive}: catalog ${catalog.name} says ${want}, the file is ${sha256Digest(data)}; refusing to run it`);
  const entries = await readTarGz(data, archive);
  if (!existsSync(path.join(dir, UNPACKED_DIR))) {
    // The unpacked tree went missing (a cache cleaned by hand): unpacked again from the verified archive.
    const stage = `${dir}/${UNPACKED_DIR}.${process.pid}.tmp`;
    try {
      writeChecked(entries, stage, archive);
      renameSync(stage, path.join(dir, UNPACKED_DIR));
    } finally {
      rmSync(stage, { recursive: true, force: true });
    }
  }
  const executable = findExecutable(entries, path.join(dir, UNPACKED_DIR), platform.bin, `${platform.uri} (catalog ${catalog.name})`);
  const rel = path
    .relative(realpathSync(path.join(dir, UNPACKED_DIR)), executable)
    .split(path.sep)
    .join('/');
  const bytes = entryBytes(entries, rel);
  if (!bytes) throw new ExecProviderError(`${archive}: cannot read ${rel} from the archive`);
  const executableSha256 = sha256Digest(bytes);
  verifyExecutable(executable, executableSha256, catalog.name);
  chmodSync(executable, 0o755);
  return { executable, artifact: archive, executableSha256 };
}

/** The bytes the archive holds at `rel` (a hardlink's are its target's). */
function entryBytes(entries: ArchiveEntry[], rel: string): Buffer | undefined {
  const clean = (n: string): string => path.posix.normalize(n).replace(/^\.\//, '').replace(/\/+$/, '');
  const entry = entries.find((e) => clean(e.name) === rel);
  if (entry?.type === 'link') return entries.find((e) => clean(e.name) === clean(entry.linkname ?? ''))?.data;
  return entry?.data;
}

/** Returns the path of a verified executable for `platform`, downloading it when not cached. */
export async function ensureExecutable(platform: ExecPlatform, catalog: Pick<Catalog, 'base' | 'name'>, opts: ExecFetchOptions = {}): Promise<string> {
  return (await ensureProvider(platform, catalog, opts)).executable;
}

export function verifyExecutable(file: string, sha256: string, catalogName: string): void {
  const got = sha256Digest(readFileSync(file));
  if (got !== normalizeSha(sha256))
    throw new ExecProviderError(`sha256 mismatch for ${file}: catalog ${catalogName} says ${normalizeSha(sha256)}, the file is ${got}; refusing to run it`);
}
