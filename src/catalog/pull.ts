/**
 * `berth catalog pull`: vendors catalogs and every executable they name into one folder, so later
 * builds read only local files. Each catalog is rewritten with its exec `uri`s pointing at the vendored
 * files (sha256 unchanged, still verified before every run) and recorded in `catalogs.lock.yaml` with
 * the pinned reference to trust. An archive provider is vendored as the archive (its sha256 is the catalog's). Everything is staged first: a failed download leaves the folder as it was.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, isMap, isSeq, type Document } from 'yaml';
import { ensureProvider } from './exec.js';
import { sha256Digest } from './oci.js';
import { parseCatalog } from './parse.js';
import { normalizeSha } from './resolve.js';
import { readCatalogBytes, type SourceOptions } from './source.js';
import type { ExecPlatform } from './model.js';

export interface PulledCatalog {
  name: string;
  source: string;
  sourceDigest: string;
  file: string;
  /** `file@sha256:...`: what to pass to --trusted-catalog. */
  pinnedRef: string;
  executables: string[];
}

export async function pullCatalogs(refs: string[], outDir: string, opts: SourceOptions = {}): Promise<PulledCatalog[]> {
  const out = path.resolve(outDir);
  const stage = `${out}.berth-pull-${process.pid}`;
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  try {
    const pulled: PulledCatalog[] = [];
    for (const ref of refs) {
      const { text, base, digest } = await readCatalogBytes(ref, opts);
      const catalog = parseCatalog(text.toString('utf8'), { ref, base });
      const docs = parseAllDocuments(text.toString('utf8')) as Document[];
      const executables: string[] = [];
      for (const doc of docs) {
        for (const platform of platformsOf(doc)) {
          const p = platform.toJSON() as ExecPlatform;
          // What the catalog's sha256 is about is vendored: the executable, or the archive holding it.
          const cached = await ensureProvider(p, catalog, opts);
          const rel = path.posix.join('bin', normalizeSha(p.sha256).replace(':', '-'), path.basename(cached.artifact));
          mkdirSync(path.join(stage, path.dirname(rel)), { recursive: true });
          copyFileSync(cached.artifact, path.join(stage, rel));
          platform.set('uri', rel);
          executables.push(rel);
        }
      }
      const body = docs.map((d) => d.toString()).join('---\n');
      const file = `${catalog.name}.yaml`;
      writeFileSync(path.join(stage, file), body);
      pulled.push({ name: catalog.name, source: ref, sourceDigest: digest, file, pinnedRef: `${path.join(out, file)}@${sha256Digest(body)}`, executables });
    }
    const lock = ['# Written by `berth catalog pull`: trust the vendored catalogs by their pinned references.', 'catalogs:'];
    for (const p of pulled)
      lock.push(
        `- name: ${p.name}`,
        `  source: ${JSON.stringify(p.source)}`,
        `  sourceDigest: ${p.sourceDigest}`,
        `  file: ${p.file}`,
        `  trustedCatalog: ${JSON.stringify(p.pinnedRef)}`,
      );
    writeFileSync(path.join(stage, 'catalogs.lock.yaml'), `${lock.join('\n')}\n`);
    mergeInto(stage, out);
    return pulled;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

function platformsOf(doc: Document): Array<import('yaml').YAMLMap> {
  const found: Array<import('yaml').YAMLMap> = [];
  const kind = doc.get('kind');
  const specs = kind === 'Catalog' ? doc.getIn(['spec', 'krmFunctions']) : kind === 'KRMFunctionDefinition' ? { items: [doc.get('spec')] } : undefined;
  for (const spec of (specs as { items?: unknown[] } | undefined)?.items ?? []) {
    if (!isMap(spec)) continue;
    const versions = spec.get('versions');
    if (!isSeq(versions)) continue;
    for (const v of versions.items) {
      const platforms = isMap(v) ? v.getIn(['runtime', 'exec', 'platforms']) : undefined;
      if (isSeq(platforms)) for (const p of platforms.items) if (isMap(p)) found.push(p);
    }
  }
  return found;
}

function mergeInto(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    const src = path.join(from, name);
    const dst = path.join(to, name);
    if (statSync(src).isDirectory()) mergeInto(src, dst);
    else {
      if (existsSync(dst)) rmSync(dst, { force: true });
      renameSync(src, dst);
    }
  }
}
