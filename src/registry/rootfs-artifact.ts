/**
 * The `rootfs` format of Concourse's image resources (registry-image's default, docker-image's
 * `rootfs: true`) as an image: a folder holding `rootfs/` (the unpacked filesystem) and `metadata.json`
 * (`{"env": ["K=V", …], "user": "…"}`; registry-image also writes `cmd` and `entrypoint`), with
 * registry-image's `labels.json` (`{"k": "v"}`) taken as the image's labels when it is there. The
 * rootfs becomes one layer; the metadata the config.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ImageArtifactError } from './artifact-error.js';
import type { FolderTarOptions } from './folder-tar.js';
import { folderLayer } from './layer-blob.js';
import { appendLayer, emptyImage, hostPlatform, type ContainerConfig, type OciImage, type Platform } from './oci-image.js';

export interface RootfsMetadata {
  env: string[];
  user?: string;
  cmd?: string[];
  entrypoint?: string[];
}

export interface RootfsArtifactOptions extends FolderTarOptions {
  platform?: Platform;
}

/** The image of the rootfs artifact in `dir`, its layer written into `workDir` (a folder the caller owns). */
export async function readRootfsArtifact(dir: string, workDir: string, opts: RootfsArtifactOptions = {}): Promise<{ image: OciImage; skipped: string[] }> {
  const metadataFile = path.join(dir, 'metadata.json');
  const metadata = parseRootfsMetadata(await readText(metadataFile, 'the image metadata of a rootfs artifact'), metadataFile);
  const labels = await readLabels(path.join(dir, 'labels.json'));
  const rootfs = path.join(dir, 'rootfs');
  const found = await stat(rootfs).catch(() => undefined);
  if (!found?.isDirectory()) throw new ImageArtifactError(rootfs, `missing: a rootfs artifact holds its filesystem in a rootfs/ folder beside metadata.json`);
  const { layer, skipped } = await folderLayer(rootfs, workDir, opts);
  const config: ContainerConfig = {
    ...(metadata.user ? { User: metadata.user } : {}),
    Env: metadata.env,
    ...(metadata.entrypoint ? { Entrypoint: metadata.entrypoint } : {}),
    ...(metadata.cmd ? { Cmd: metadata.cmd } : {}),
    ...(labels ? { Labels: labels } : {}),
  };
  const image = appendLayer(
    emptyImage(opts.platform ?? hostPlatform(), config),
    { descriptor: layer, diffId: layer.diffId, file: layer.file },
    { created_by: 'berth: rootfs artifact' },
  );
  return { image, skipped };
}

/** Checks metadata.json's shape; `file` names it in the error. */
export function parseRootfsMetadata(text: string, file: string): RootfsMetadata {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ImageArtifactError(file, `not JSON (${(err as Error).message})`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new ImageArtifactError(file, 'not a JSON object like {"env": ["K=V"], "user": "name"}');
  const m = doc as Record<string, unknown>;
  const env = m.env ?? [];
  if (!isStrings(env) || env.some((e) => !/^[^=]+=/.test(e))) throw new ImageArtifactError(file, '"env" must be a list of "KEY=VALUE" strings');
  if (m.user !== undefined && m.user !== null && typeof m.user !== 'string')
    throw new ImageArtifactError(file, '"user" must be a string (a name or uid[:gid])');
  for (const key of ['cmd', 'entrypoint'] as const)
    if (m[key] !== undefined && m[key] !== null && !isStrings(m[key])) throw new ImageArtifactError(file, `"${key}" must be a list of strings`);
  return {
    env,
    ...(typeof m.user === 'string' && m.user ? { user: m.user } : {}),
    ...(isStrings(m.cmd) ? { cmd: m.cmd } : {}),
    ...(isStrings(m.entrypoint) ? { entrypoint: m.entrypoint } : {}),
  };
}

async function readLabels(file: string): Promise<Record<string, string> | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ImageArtifactError(file, `not JSON (${(err as Error).message})`);
  }
  if (doc === null) return undefined;
  if (typeof doc !== 'object' || Array.isArray(doc) || Object.values(doc).some((v) => typeof v !== 'string'))
    throw new ImageArtifactError(file, 'not an object of string labels like {"org.opencontainers.image.source": "…"}');
  return doc as Record<string, string>;
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ImageArtifactError(file, code === 'ENOENT' ? `missing: ${what}` : (err as Error).message);
  }
}

function isStrings(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === 'string');
}
