/**
 * `--results-dir DIR`: the structured results of every function that ran, written to DIR/results.yaml
 * as kpt writes them: a `kpt.dev/v1 FunctionResultList` named `fnresults`, its exitCode 1 when the
 * command failed, and one item per function run, in run order, with the function's image or exec
 * string, its stderr (when it wrote any), exit code and results. Written whether or not the run passed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { KrmResult } from './resource-list.js';

export interface FunctionRunRecord {
  image?: string;
  exec?: string;
  stderr?: string;
  exitCode: number;
  results?: KrmResult[];
}

export interface FunctionResultList {
  apiVersion: 'kpt.dev/v1';
  kind: 'FunctionResultList';
  metadata: { name: 'fnresults' };
  exitCode: number;
  items?: FunctionRunRecord[];
}

export function buildResultList(records: FunctionRunRecord[], failed: boolean): FunctionResultList {
  const list: FunctionResultList = { apiVersion: 'kpt.dev/v1', kind: 'FunctionResultList', metadata: { name: 'fnresults' }, exitCode: failed ? 1 : 0 };
  // kpt's field order within an item: image|exec, stderr, exitCode, results; empty ones left out.
  if (records.length)
    list.items = records.map((r) => ({
      ...(r.image ? { image: r.image } : { exec: r.exec }),
      ...(r.stderr ? { stderr: r.stderr } : {}),
      exitCode: r.exitCode,
      ...(r.results?.length ? { results: r.results.map(resultItem) } : {}),
    }));
  return list;
}

/** A result as kpt stores it: only the fields that are set. */
function resultItem(r: KrmResult): KrmResult {
  const out: KrmResult = { message: r.message };
  if (r.severity) out.severity = r.severity;
  if (r.resourceRef) out.resourceRef = withoutEmpty(r.resourceRef);
  if (r.field) out.field = withoutEmpty(r.field);
  if (r.file) out.file = withoutEmpty(r.file);
  if (r.tags && Object.keys(r.tags).length) out.tags = r.tags;
  return out;
}

function withoutEmpty<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as T;
}

export function serializeResultList(list: FunctionResultList): string {
  return YAML.stringify(list, { lineWidth: 0 });
}

/** Creates DIR if needed; returns the file written. */
export function writeResultsDir(dir: string, list: FunctionResultList): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'results.yaml');
  writeFileSync(file, serializeResultList(list));
  return file;
}

/** Runs the work, then writes the results of every function it ran, also when it failed. */
export async function withResultsDir<T>(
  dir: string | undefined,
  report: NodeJS.WritableStream,
  work: (records: FunctionRunRecord[]) => Promise<T>,
): Promise<T> {
  const records: FunctionRunRecord[] = [];
  if (!dir) return work(records);
  let failed = true;
  try {
    const out = await work(records);
    failed = false;
    return out;
  } finally {
    const file = writeResultsDir(dir, buildResultList(records, failed));
    report.write(`For complete results, see ${file}\n`);
  }
}
