/**
 * What a function that exited 0 printed, checked before anything is written: exactly one YAML document,
 * a `ResourceList` (apiVersion config.kubernetes.io/v1, or the older v1beta1/v1alpha1 that kustomize
 * and kpt still send and read), with `items` a list of objects that each have apiVersion, kind and
 * metadata.name (a Kustomization may lack the name, as kpt's IsKRM allows).
 *
 * This is stricter than kyaml's reader on purpose. kyaml turns empty output, a bare multi-document
 * stream or `items:` with nothing after it into "zero resources", and kpt then deletes the package;
 * in a GitOps controller that empty rendering is applied with pruning. Here a function that means to
 * delete everything must say so with `items: []`; anything else that is not a whole ResourceList is
 * refused, with the function named and the first bytes of what it printed.
 */
import { parseAllDocuments } from 'yaml';
import type { KrmObject } from './package.js';
import { normalizeResults, type ResourceList } from './resource-list.js';

export const RESOURCE_LIST_API_VERSIONS: readonly string[] = ['config.kubernetes.io/v1', 'config.kubernetes.io/v1beta1', 'config.kubernetes.io/v1alpha1'];

/** How much of a refused output the error shows. */
const SHOWN_BYTES = 200;

export class FunctionOutputError extends Error {
  constructor(
    message: string,
    /** Why, without the function name and the output excerpt (for tests and records). */
    readonly reason: string,
  ) {
    super(message);
    this.name = 'FunctionOutputError';
  }
}

/** The first bytes of `text`, escaped so control characters and cut lines show. */
export function excerpt(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  const head = bytes.subarray(0, SHOWN_BYTES).toString('utf8');
  return `${JSON.stringify(head)}${bytes.length > SHOWN_BYTES ? ' ...' : ''}`;
}

/** The ResourceList the function printed, or a FunctionOutputError naming `fnName`. */
export function checkFunctionOutput(text: string, fnName: string): ResourceList {
  const reason = problemOf(text);
  if (typeof reason !== 'string') return reason;
  const size = Buffer.byteLength(text, 'utf8');
  const shown = size ? `; it printed ${size} byte(s): ${excerpt(text)}` : '';
  throw new FunctionOutputError(`function ${fnName} exited 0 but ${reason}${shown}. Nothing was written: the package is as it was`, reason);
}

function problemOf(text: string): ResourceList | string {
  if (!text.trim()) return 'printed nothing (a function must print one ResourceList; to remove every resource it prints `items: []`)';
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) return 'printed something that is not YAML';
  for (const d of docs) if (d.errors.length) return `printed invalid YAML (${d.errors[0].message.split('\n')[0]})`;
  const values = docs.map((d) => d.toJS() as unknown).filter((v) => v !== null && v !== undefined);
  if (values.length !== 1) return `printed ${values.length} YAML documents, not one ResourceList`;
  const list = values[0];
  if (!isMap(list)) return `printed a YAML ${Array.isArray(list) ? 'list' : typeof list}, not a ResourceList`;
  if (list.kind !== 'ResourceList') return `printed kind ${JSON.stringify(list.kind ?? null)}, not a ResourceList`;
  if (typeof list.apiVersion !== 'string' || !RESOURCE_LIST_API_VERSIONS.includes(list.apiVersion)) {
    return `printed a ResourceList of apiVersion ${JSON.stringify(list.apiVersion ?? null)} (expected ${RESOURCE_LIST_API_VERSIONS.join(', ')})`;
  }
  if (!('items' in list)) return 'printed a ResourceList without items (to remove every resource a function prints `items: []`)';
  if (!Array.isArray(list.items)) return `printed a ResourceList whose items is ${list.items === null ? 'empty (null)' : `a ${typeof list.items}`}, not a list`;
  for (const [i, item] of list.items.entries()) {
    const bad = itemProblem(item);
    if (bad) return `printed a ResourceList whose items[${i}] ${bad}`;
  }
  if (looksCut(text)) return 'printed output that ends mid-line (a block-style YAML ResourceList ends with a newline): it looks cut off';
  return {
    apiVersion: list.apiVersion,
    kind: 'ResourceList',
    items: list.items as KrmObject[],
    functionConfig: isMap(list.functionConfig) ? (list.functionConfig as KrmObject) : undefined,
    results: normalizeResults(list.results),
  };
}

function itemProblem(item: unknown): string | undefined {
  if (!isMap(item)) return `is ${Array.isArray(item) ? 'a list' : JSON.stringify(item)}, not an object`;
  if (!nonEmptyString(item.apiVersion)) return 'has no apiVersion';
  if (!nonEmptyString(item.kind)) return 'has no kind';
  const metadata = item.metadata;
  if (!isMap(metadata) || !nonEmptyString(metadata.name)) {
    // kpt exempts kustomization files from its KRM check (kpt issue 2388): they often have no name.
    if (item.kind === 'Kustomization' && item.apiVersion.startsWith('kustomize.config.k8s.io/')) return undefined;
    return `(${item.apiVersion} ${item.kind}) has no metadata.name`;
  }
  return undefined;
}

/**
 * Output cut short at a chunk boundary is often still valid YAML with a shorter last value. Block-style
 * YAML, as every KRM SDK prints it, ends with a newline; flow style and JSON end in a closing bracket
 * and would not have parsed if cut.
 */
function looksCut(text: string): boolean {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) return false;
  return !text.endsWith('\n');
}

function isMap(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

function nonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}
