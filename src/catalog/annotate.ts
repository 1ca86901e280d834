/**
 * `berth catalog annotate DIR`: writes the provider each function config resolves to into the package,
 * so tools that know nothing of catalogs run it: the `config.kubernetes.io/function` annotation on
 * kustomization function configs (plain kustomize + berth's docker shim), `image:` on Kptfile pipeline
 * entries (kpt). Everything is resolved first; files are written only when all resolved.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { writeFilesAtomically } from '../files/atomic-write.js';
import { ensureExecutable, selectPlatform, currentPlatform } from './exec.js';
import { normalizeSha, resolveFunction, ResolveError } from './resolve.js';
import type { CatalogSet } from './trust.js';
import { findFunctionConfigs } from './package-functions.js';

export interface AnnotateOptions {
  catalogs: CatalogSet;
  allowNetwork?: boolean;
  cacheDir?: string;
  caFile?: string;
  warn?: (line: string) => void;
}

export interface Annotated {
  file: string;
  kind: string;
  apiVersion: string;
  provider: string;
  catalog: string;
}

export async function annotatePackage(dir: string, opts: AnnotateOptions): Promise<Annotated[]> {
  const { sites, files } = findFunctionConfigs(dir);
  const done: Annotated[] = [];
  const touched = new Set<string>();
  const copies: Array<[string, string]> = [];
  for (const site of sites) {
    const r = resolveFunction({ apiVersion: site.apiVersion, kind: site.kind }, opts.catalogs.trusted, opts.catalogs.untrusted);
    for (const w of r.warnings) opts.warn?.(`warning: ${w}`);
    const c = r.version.runtime.container;
    const what = `${site.kind} ${site.apiVersion} (catalog ${r.catalog.name})`;
    let spec: string;
    let provider: string;
    if (c) {
      if (c.requireNetwork && !opts.allowNetwork)
        throw new ResolveError(`${what} requires network access: allow it with --allow-network (kustomize then also needs --network)`);
      provider = c.sha256 ? `${c.image.replace(/:[^:/@]+$/, '')}@${normalizeSha(c.sha256)}` : c.image;
      spec = `container:\n  image: ${provider}\n${c.requireNetwork ? '  network: true\n' : ''}`;
      if (site.target.type === 'pipeline') site.target.entry.set('image', provider);
    } else {
      const platform = selectPlatform(r.version.runtime.exec?.platforms ?? [], currentPlatform());
      if (!platform || site.target.type === 'pipeline')
        throw new ResolveError(
          `${what}: no container provider${platform ? ' (Kptfile entries need an image)' : ` and no executable for ${currentPlatform().os}/${currentPlatform().arch}`}`,
        );
      const cached = await ensureExecutable(platform, r.catalog, opts);
      // kustomize wants exec paths relative to the kustomization: the verified binary is copied there.
      const rel = path.posix.join('.berth', 'fn', normalizeSha(platform.sha256).slice(7, 19), path.basename(platform.bin));
      copies.push([cached, path.join(dir, rel)]);
      provider = rel;
      spec = `exec:\n  path: ./${rel}\n`;
    }
    if (site.target.type === 'annotation') {
      const doc = files.get(site.file)!.docs[site.target.docIndex];
      doc.setIn(['metadata', 'annotations', 'config.kubernetes.io/function'], spec);
    }
    touched.add(site.file);
    done.push({ file: site.file, kind: site.kind, apiVersion: site.apiVersion, provider, catalog: r.catalog.name });
  }
  for (const [from, to] of copies) {
    mkdirSync(path.dirname(to), { recursive: true });
    copyFileSync(from, to);
  }
  // The package's own files all or none (the copied executables above are new files only).
  const texts = new Map<string, string>();
  for (const rel of touched)
    texts.set(
      rel,
      files
        .get(rel)!
        .docs.map((d, i) => (i === 0 || d.toString().startsWith('---') ? d.toString() : `---\n${d.toString()}`))
        .join(''),
    );
  writeFilesAtomically(dir, texts);
  return done;
}
