/**
 * The function configs a package needs resolved: Kptfile pipeline entries that name no image or exec,
 * and the transformer/generator/validator configs of a kustomization that carry no
 * `config.kubernetes.io/function` annotation. Each comes with its YAML document, so it can be annotated
 * in place with comments kept.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, isMap, isSeq, type Document, type YAMLMap } from 'yaml';

export interface FunctionConfigSite {
  /** File holding the config (relative to the package). */
  file: string;
  apiVersion: string;
  kind: string;
  name?: string;
  /** How to write the provider: into a pipeline entry (`image:`) or as the config's annotation. */
  target: { type: 'pipeline'; docIndex: number; entry: YAMLMap } | { type: 'annotation'; docIndex: number };
}

export interface ParsedFile {
  rel: string;
  text: string;
  docs: Document[];
}

export function readYamlFile(dir: string, rel: string): ParsedFile | undefined {
  const full = path.join(dir, rel);
  if (!existsSync(full)) return undefined;
  const text = readFileSync(full, 'utf8');
  return { rel, text, docs: parseAllDocuments(text) as Document[] };
}

/** A kustomization is pure Kubernetes builtins unless a config is a KRM function (not `builtin` group). */
function isFunctionConfig(v: Record<string, unknown>): boolean {
  const ann = ((v.metadata as Record<string, unknown> | undefined)?.annotations ?? {}) as Record<string, string>;
  if (ann['config.kubernetes.io/function'] || ann['config.k8s.io/function']) return false;
  return typeof v.apiVersion === 'string' && !v.apiVersion.startsWith('builtin') && typeof v.kind === 'string';
}

export function findFunctionConfigs(dir: string): { sites: FunctionConfigSite[]; files: Map<string, ParsedFile> } {
  const files = new Map<string, ParsedFile>();
  const sites: FunctionConfigSite[] = [];
  const load = (rel: string): ParsedFile | undefined => {
    if (!files.has(rel)) {
      const f = readYamlFile(dir, rel);
      if (f) files.set(rel, f);
    }
    return files.get(rel);
  };
  const kptfile = load('Kptfile');
  if (kptfile) {
    const doc = kptfile.docs[0];
    for (const phase of ['mutators', 'validators']) {
      const seq = doc?.getIn(['pipeline', phase]);
      if (!isSeq(seq)) continue;
      for (const entry of seq.items) {
        if (!isMap(entry) || entry.get('image') || entry.get('exec')) continue;
        const configPath = entry.get('configPath');
        if (typeof configPath !== 'string') continue;
        const cfg = load(path.posix.normalize(configPath));
        const v = cfg?.docs[0]?.toJS() as Record<string, unknown> | undefined;
        if (!v) continue;
        sites.push({
          file: 'Kptfile',
          apiVersion: String(v.apiVersion),
          kind: String(v.kind),
          name: (v.metadata as { name?: string } | undefined)?.name,
          target: { type: 'pipeline', docIndex: 0, entry },
        });
      }
    }
  }
  const kust = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'].map(load).find(Boolean);
  const k = kust?.docs[0]?.toJS() as Record<string, unknown> | undefined;
  for (const field of ['generators', 'transformers', 'validators']) {
    for (const ref of (k?.[field] as unknown[] | undefined) ?? []) {
      // Inline configs (YAML strings) have no file to annotate; only file references are handled.
      if (typeof ref !== 'string' || ref.includes('\n')) continue;
      const f = load(path.posix.normalize(ref));
      f?.docs.forEach((d, i) => {
        const v = d.toJS() as Record<string, unknown> | null;
        if (v && typeof v === 'object' && isFunctionConfig(v)) {
          sites.push({
            file: f.rel,
            apiVersion: String(v.apiVersion),
            kind: String(v.kind),
            name: (v.metadata as { name?: string } | undefined)?.name,
            target: { type: 'annotation', docIndex: i },
          });
        }
      });
    }
  }
  return { sites, files };
}
