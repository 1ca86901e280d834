/**
 * A package on disk as KRM items and back. Items carry kyaml's bookkeeping annotations (path, index,
 * id) while functions run; writing back merges each returned item into the YAML document it came from
 * (found by id), so comments, key order and the file layout stay. Nothing is written until the caller
 * has a complete result, and only files whose text changed are touched, all or none (src/files/atomic-write.ts).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Document, parseAllDocuments } from 'yaml';
import { writeFilesAtomically } from '../files/atomic-write.js';
import { mergeValue } from './merge.js';

export type KrmObject = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
};

export const ANN_PATH = 'internal.config.kubernetes.io/path';
export const ANN_INDEX = 'internal.config.kubernetes.io/index';
export const ANN_ID = 'internal.config.kubernetes.io/id';
export const ANN_LEGACY_PATH = 'config.kubernetes.io/path';
export const ANN_LEGACY_INDEX = 'config.kubernetes.io/index';
export const ANN_LEGACY_ID = 'config.k8s.io/id';
const BOOKKEEPING = [
  ANN_PATH,
  ANN_INDEX,
  ANN_ID,
  ANN_LEGACY_PATH,
  ANN_LEGACY_INDEX,
  ANN_LEGACY_ID,
  'internal.config.kubernetes.io/seqindent',
  'internal.config.kubernetes.io/package-path',
];

export class PackageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PackageError';
  }
}

export interface PackageFile {
  /** Slash-separated, relative to the package root. */
  rel: string;
  text: string;
  docs: Document[];
}

export interface LoadedPackage {
  root: string;
  files: PackageFile[];
  items: KrmObject[];
  /** Folders (relative, '' = root) that hold a Kptfile: the nested packages. */
  packages: string[];
}

const RESOURCE_FILE = /\.(ya?ml|json)$/i;

export function readPackage(root: string): LoadedPackage {
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new PackageError(`${root} is not a directory`);
  const files: PackageFile[] = [];
  const packages: string[] = [];
  const walk = (rel: string): void => {
    const dir = path.join(root, rel);
    const names = readdirSync(dir).sort();
    if (names.includes('Kptfile')) packages.push(rel);
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const relName = rel ? `${rel}/${name}` : name;
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(relName);
      else if (name === 'Kptfile' || RESOURCE_FILE.test(name)) files.push(parseFile(root, relName));
    }
  };
  walk('');
  let id = 0;
  const items: KrmObject[] = [];
  for (const f of files) {
    f.docs.forEach((doc, index) => {
      const value = doc.toJS() as unknown;
      if (!value || typeof value !== 'object' || Array.isArray(value)) return;
      const item = value as KrmObject;
      if (typeof item.kind !== 'string') return;
      setBookkeeping(item, f.rel, index, String(id++));
      items.push(item);
    });
  }
  return { root, files, items, packages };
}

function parseFile(root: string, rel: string): PackageFile {
  const text = readFileSync(path.join(root, rel), 'utf8');
  const docs = parseAllDocuments(text) as Document[];
  if (!Array.isArray(docs)) throw new PackageError(`${rel}: not YAML`);
  for (const d of docs) if (d.errors.length) throw new PackageError(`${rel}:${d.errors[0].linePos?.[0]?.line ?? '?'}: ${d.errors[0].message.split('\n')[0]}`);
  return { rel, text, docs };
}

function setBookkeeping(item: KrmObject, rel: string, index: number, id: string): void {
  const meta = (item.metadata ??= {});
  const ann = (meta.annotations ??= {});
  ann[ANN_LEGACY_PATH] = rel;
  ann[ANN_PATH] = rel;
  ann[ANN_LEGACY_INDEX] = String(index);
  ann[ANN_INDEX] = String(index);
  ann[ANN_LEGACY_ID] = id;
  ann[ANN_ID] = id;
}

export function itemPath(item: KrmObject): string | undefined {
  const a = item.metadata?.annotations ?? {};
  return a[ANN_PATH] ?? a[ANN_LEGACY_PATH];
}

function itemIndex(item: KrmObject): number {
  const a = item.metadata?.annotations ?? {};
  return Number(a[ANN_INDEX] ?? a[ANN_LEGACY_INDEX] ?? 0);
}

function itemId(item: KrmObject): string | undefined {
  const a = item.metadata?.annotations ?? {};
  return a[ANN_ID] ?? a[ANN_LEGACY_ID];
}

/** The item as it goes to disk: bookkeeping removed (and `annotations`/`metadata` if that emptied them). */
export function stripBookkeeping(item: KrmObject): KrmObject {
  const copy = structuredClone(item);
  const ann = copy.metadata?.annotations;
  if (ann) {
    for (const k of BOOKKEEPING) delete ann[k];
    if (!Object.keys(ann).length) delete copy.metadata!.annotations;
  }
  return copy;
}

/** Where an item without a path goes: kpt's `<kind>_<name>.yaml` in the package folder. */
export function defaultPath(item: KrmObject, pkgDir: string): string {
  const name = `${String(item.kind ?? 'resource').toLowerCase()}_${item.metadata?.name ?? 'unnamed'}.yaml`;
  return pkgDir ? `${pkgDir}/${name}` : name;
}

/** Texts of every file after the change: rel → new text, or null to delete. Unchanged files are left out. */
export function planWrite(pkg: LoadedPackage, items: KrmObject[]): Map<string, string | null> {
  const byId = new Map<string, { file: PackageFile; index: number }>();
  let n = 0;
  for (const f of pkg.files) {
    f.docs.forEach((doc, index) => {
      const v = doc.toJS() as KrmObject | null;
      if (v && typeof v === 'object' && typeof v.kind === 'string') byId.set(String(n++), { file: f, index });
    });
  }
  const grouped = new Map<string, KrmObject[]>();
  for (const item of items) {
    const rel = itemPath(item) ?? defaultPath(item, '');
    if (rel.startsWith('/') || rel.split('/').includes('..')) throw new PackageError(`a function set path ${rel} outside the package`);
    (grouped.get(rel) ?? grouped.set(rel, []).get(rel)!).push(item);
  }
  const out = new Map<string, string | null>();
  const known = new Map(pkg.files.map((f) => [f.rel, f]));
  for (const f of pkg.files)
    if (!grouped.has(f.rel)) {
      // Non-KRM documents (none parsed as items) in a file stay; a file whose items all went is removed.
      const hadItems = [...byId.values()].some((v) => v.file === f);
      if (hadItems) out.set(f.rel, null);
    }
  for (const [rel, list] of grouped) {
    list.sort((a, b) => itemIndex(a) - itemIndex(b));
    const file = known.get(rel);
    const docs = list.map((item) => {
      const origin = itemId(item) !== undefined ? byId.get(itemId(item)!) : undefined;
      const value = stripBookkeeping(item);
      if (origin && origin.file === file) {
        const doc = origin.file.docs[origin.index].clone();
        doc.contents = mergeValue(doc, doc.contents, value) as Document['contents'];
        return doc;
      }
      return new Document(value);
    });
    if (file && sameAsOnDisk(file, list)) continue;
    const style = file ? styleOf(file.text) : {};
    const text = joinDocuments(docs.map((d) => d.toString(style)));
    if (!file || file.text !== text) out.set(rel, text);
  }
  return out;
}

/** The file's own printing style, so changed documents look like their neighbours (kyaml's seqindent). */
function styleOf(text: string): { indentSeq?: boolean; flowCollectionPadding: boolean } {
  const compact = /^( *)[^\s#][^\n]*:[ \t]*\n\1- /m.test(text);
  const wide = /^( *)[^\s#][^\n]*:[ \t]*\n\1 {2}- /m.test(text);
  return { ...(compact && !wide ? { indentSeq: false } : {}), flowCollectionPadding: /[{[] \S/.test(text) };
}

/** Unchanged data keeps its file byte for byte (the yaml printer would normalize indentation). */
function sameAsOnDisk(file: PackageFile, list: KrmObject[]): boolean {
  const before = file.docs.map((d) => d.toJS() as unknown).filter((v) => v && typeof v === 'object' && typeof (v as KrmObject).kind === 'string');
  return JSON.stringify(before) === JSON.stringify(list.map(stripBookkeeping));
}

export function joinDocuments(texts: string[]): string {
  return texts.map((t, i) => (i === 0 || t.startsWith('---') ? t : `---\n${t}`)).join('');
}

/** Writes the planned changes all or none (see src/files/atomic-write.ts); deletions last. */
export function applyWrite(root: string, changes: Map<string, string | null>): void {
  writeFilesAtomically(root, changes);
}
