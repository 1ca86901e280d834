/**
 * `berth fn render`: the Kptfile pipelines of a package and its nested packages, deepest first (as kpt
 * does), each seeing its own resources and those of the packages below it. Mutators change resources,
 * validators only report. A pipeline entry names an `image` or `exec`, or, new, only a config
 * (`configPath`) whose apiVersion/kind a trusted catalog resolves. The package is written once, at
 * the end, and only if every step passed. An entry's `selectors`/`exclude` narrow what its function
 * sees (see selection.ts); `resultsDir` writes kpt's results.yaml, passed or failed.
 */
import path from 'node:path';
import type { Writable } from 'node:stream';
import { invokeFunction } from './invoke.js';
import { readFileSync } from 'node:fs';
import {
  applyWrite,
  defaultPath,
  itemPath,
  PackageError,
  planWrite,
  readPackage,
  ANN_INDEX,
  ANN_LEGACY_INDEX,
  ANN_PATH,
  ANN_LEGACY_PATH,
  type KrmObject,
} from './package.js';
import { checkConfig, providerForConfig, type ConfigSource, type ProviderOptions } from './providers.js';
import { configMapFrom, type KrmResult } from './resource-list.js';
import { withResultsDir, type FunctionRunRecord } from './results.js';
import { mergeSelectionOutput, parseSelectorList, selectionActive, selectResources, tagSelected, type ResourceSelector, type Selection } from './selection.js';
import type { FunctionProvider, RunnerOptions } from './runner.js';

export interface PipelineEntry {
  image?: string;
  exec?: string;
  configPath?: string;
  configMap?: Record<string, string>;
  name?: string;
  selectors?: ResourceSelector[];
  exclude?: ResourceSelector[];
}

export interface RenderOptions extends ProviderOptions {
  report: Writable;
  runner?: RunnerOptions;
  /** Only compute; do not write (used by `-o stdout`). */
  dryRun?: boolean;
  /** Write DIR/results.yaml (kpt's FunctionResultList), also when the render fails. */
  resultsDir?: string;
}

export interface RenderOutcome {
  items: KrmObject[];
  results: KrmResult[];
  changed: string[];
}

export async function renderPackage(root: string, opts: RenderOptions): Promise<RenderOutcome> {
  return withResultsDir(opts.resultsDir, opts.report, (records) => renderWith(root, opts, records));
}

async function renderWith(root: string, opts: RenderOptions, records: FunctionRunRecord[]): Promise<RenderOutcome> {
  const pkg = readPackage(root);
  if (!pkg.packages.includes('')) throw new PackageError(`${root} has no Kptfile`);
  let items = pkg.items;
  const results: KrmResult[] = [];
  const order = [...pkg.packages].sort((a, b) => depth(b) - depth(a));
  checkConfigsFirst(root, items, order, opts);
  for (const dir of order) {
    const { kptfilePath, phases } = pipelineOf(items, dir);
    let scope = items.filter((i) => inside(dir, itemPath(i)));
    const rest = items.filter((i) => !scope.includes(i));
    for (const [phase, entries] of phases) {
      for (const [index, entry] of entries.entries()) {
        const selection = selectionOf(entry, `${kptfilePath}: pipeline.${phase}[${index}]`);
        const config = functionConfig(entry, dir, scope, kptfilePath);
        const provider = await providerFor(root, entry, config, opts, kptfilePath);
        const selected = selectionActive(selection) ? selectResources(scope, selection) : undefined;
        const input = selected ? tagSelected(scope, selected) : scope;
        const out = await invokeFunction(provider, input, config, opts.report, opts.runner, { records, selectedCount: selected?.length });
        results.push(...out.results);
        if (phase === 'mutators') scope = (selected ? mergeSelectionOutput(scope, selected, out.items) : out.items).map((i) => placeNew(i, dir));
      }
    }
    items = [...rest, ...scope];
  }
  const changes = planWrite(pkg, items);
  if (!opts.dryRun) applyWrite(root, changes);
  return { items, results, changed: [...changes.keys()] };
}

/** The pipeline entries of the package in `dir`, as its Kptfile lists them. */
function pipelineOf(items: KrmObject[], dir: string): { kptfilePath: string; phases: Array<readonly ['mutators' | 'validators', PipelineEntry[]]> } {
  const kptfilePath = dir ? `${dir}/Kptfile` : 'Kptfile';
  const kptfile = items.find((i) => i.kind === 'Kptfile' && itemPath(i) === kptfilePath);
  const pipeline = (kptfile?.pipeline ?? {}) as { mutators?: PipelineEntry[]; validators?: PipelineEntry[] };
  return {
    kptfilePath,
    phases: [
      ['mutators', pipeline.mutators ?? []],
      ['validators', pipeline.validators ?? []],
    ],
  };
}

/**
 * Every config a resolver must find (an entry with only a configPath) is checked before the first
 * function runs: an unknown kind or a config its schema refuses fails the render with nothing run.
 * (Each is checked again when its step comes, as an earlier mutator may have changed it.)
 */
function checkConfigsFirst(root: string, items: KrmObject[], order: string[], opts: RenderOptions): void {
  for (const dir of order) {
    const { kptfilePath, phases } = pipelineOf(items, dir);
    const scope = items.filter((i) => inside(dir, itemPath(i)));
    for (const [, entries] of phases) {
      for (const entry of entries) {
        if (entry.image || entry.exec || !entry.configPath) continue;
        const config = functionConfig(entry, dir, scope, kptfilePath);
        if (config) checkConfig(config, opts, configSourceOf(root, config));
      }
    }
  }
}

/** The package file a config item came from, read as it is on disk now (for line and column in errors). */
function configSourceOf(root: string, config: KrmObject): ConfigSource | undefined {
  const rel = itemPath(config);
  if (!rel) return undefined;
  const file = path.join(root, rel);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const ann = config.metadata?.annotations ?? {};
  return { file, text, index: Number(ann[ANN_INDEX] ?? ann[ANN_LEGACY_INDEX] ?? 0) };
}

function depth(rel: string): number {
  return rel ? rel.split('/').length : 0;
}

function inside(dir: string, rel: string | undefined): boolean {
  if (rel === undefined) return dir === '';
  return dir === '' || rel.startsWith(`${dir}/`);
}

function placeNew(item: KrmObject, dir: string): KrmObject {
  if (itemPath(item) !== undefined) return item;
  const rel = defaultPath(item, dir);
  const meta = (item.metadata ??= {});
  const ann = (meta.annotations ??= {});
  ann[ANN_PATH] = rel;
  ann[ANN_LEGACY_PATH] = rel;
  return item;
}

function selectionOf(entry: PipelineEntry, where: string): Selection {
  return { selectors: parseSelectorList(entry.selectors, `${where}.selectors`), exclusions: parseSelectorList(entry.exclude, `${where}.exclude`) };
}

function functionConfig(entry: PipelineEntry, dir: string, scope: KrmObject[], where: string): KrmObject | undefined {
  if (entry.configPath) {
    const rel = path.posix.normalize(dir ? `${dir}/${entry.configPath}` : entry.configPath);
    const config = scope.find((i) => itemPath(i) === rel);
    if (!config) throw new PackageError(`${where}: configPath ${entry.configPath} names no resource file of the package`);
    return config;
  }
  if (entry.configMap) return configMapFrom(Object.fromEntries(Object.entries(entry.configMap).map(([k, v]) => [k, String(v)])));
  return undefined;
}

async function providerFor(root: string, entry: PipelineEntry, config: KrmObject | undefined, opts: RenderOptions, where: string): Promise<FunctionProvider> {
  if (entry.image) return { kind: 'container', image: entry.image, network: Boolean(opts.allowNetwork) };
  if (entry.exec) return { kind: 'exec', path: entry.exec };
  if (!config) throw new PackageError(`${where}: a pipeline entry needs an image, an exec, or a configPath whose kind a trusted catalog provides`);
  return providerForConfig(config, opts, configSourceOf(root, config));
}
