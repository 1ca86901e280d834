/**
 * Reads catalog YAML into a Catalog, checked against the KEP-2906 schema. Every problem is reported
 * with the file, the line and column of the offending node (from the yaml package's source ranges)
 * and the field path, so a publisher can fix a catalog without guessing.
 */
import { createHash } from 'node:crypto';
import { Ajv, type ErrorObject } from 'ajv';
import { LineCounter, parseAllDocuments } from 'yaml';
import type { Catalog, FunctionDefinition } from './model.js';
import { catalogDocumentSchema } from './schema.js';
import { describeSchemaError, locateSchemaError } from './yaml-errors.js';

export interface CatalogIssue {
  file: string;
  line: number;
  column: number;
  /** Dotted path, e.g. `spec.krmFunctions.0.versions.0.runtime.exec.platforms.1.sha256`. */
  field: string;
  message: string;
}

export class CatalogError extends Error {
  constructor(
    message: string,
    readonly issues: CatalogIssue[] = [],
  ) {
    super(message);
    this.name = 'CatalogError';
  }
}

export function formatIssue(i: CatalogIssue): string {
  return `${i.file}:${i.line}:${i.column}: ${i.field ? `${i.field}: ` : ''}${i.message}`;
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validateDocument = ajv.compile(catalogDocumentSchema);

export interface ParseOptions {
  /** What the user called it (path, URL, OCI reference); used in messages. */
  ref: string;
  /** Base for relative exec URIs. */
  base: string;
}

/** Parses one catalog file (Catalog and/or KRMFunctionDefinition documents); throws CatalogError listing every issue. */
export function parseCatalog(text: string, opts: ParseOptions): Catalog {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  const issues: CatalogIssue[] = [];
  const at = (offset: number, field: string, message: string): void => {
    const pos = lineCounter.linePos(offset);
    issues.push({ file: opts.ref, line: pos.line, column: pos.col, field, message });
  };
  if (!Array.isArray(docs)) {
    at(0, '', 'not a YAML document stream');
    throw failure(opts.ref, issues);
  }
  const functions: FunctionDefinition[] = [];
  let name = '';
  let publisher: string | undefined;
  for (const doc of docs) {
    for (const e of doc.errors) at(e.pos[0], '', e.message.split('\n')[0]);
    if (doc.errors.length) continue;
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    if (!validateDocument(value)) {
      for (const err of dedupe(validateDocument.errors ?? [])) {
        const { field, offset } = locateSchemaError(doc, err);
        at(offset, field, describeSchemaError(err));
      }
      continue;
    }
    const d = value as {
      kind: string;
      metadata: { name: string; labels?: Record<string, string> };
      spec: { krmFunctions?: FunctionDefinition[] } & FunctionDefinition;
    };
    name ||= d.metadata.name;
    publisher ??= d.metadata.labels?.publisher;
    if (d.kind === 'Catalog') functions.push(...(d.spec.krmFunctions ?? []));
    else functions.push(d.spec);
  }
  if (issues.length) throw failure(opts.ref, issues);
  if (!name)
    throw new CatalogError(`${opts.ref}: holds no Catalog or KRMFunctionDefinition document`, [
      { file: opts.ref, line: 1, column: 1, field: '', message: 'empty catalog' },
    ]);
  return {
    name,
    ref: opts.ref,
    base: opts.base,
    digest: `sha256:${createHash('sha256').update(text).digest('hex')}`,
    publisher: publisher ?? functions[0]?.publisher,
    functions,
  };
}

function failure(ref: string, issues: CatalogIssue[]): CatalogError {
  return new CatalogError(`${ref} is not a valid catalog:\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`, issues);
}

/** The if/then/else wrapper adds an `if` error on top of the real one: only the real ones help. */
function dedupe(errors: ErrorObject[]): ErrorObject[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    if (e.keyword === 'if') return false;
    const key = `${e.instancePath}|${e.keyword}|${JSON.stringify(e.params)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
