/**
 * `berth fn eval`: one function over a package folder (written back in place, or printed) or over a
 * ResourceList on stdin (printed), as `kpt fn eval` does. The function config is a file
 * (`--fn-config`), or a ConfigMap from `key=value` arguments; without --image/--exec the config's
 * apiVersion/kind is resolved through the trusted catalogs. `selection` (the --match-* / --exclude-*
 * flags) narrows what the function sees; `resultsDir` writes kpt's results.yaml.
 */
import { readFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { text } from 'node:stream/consumers';
import YAML from 'yaml';
import { invokeFunction } from './invoke.js';
import { applyWrite, PackageError, planWrite, readPackage, type KrmObject } from './package.js';
import { providerForConfig, type ProviderOptions } from './providers.js';
import { configMapFrom, parseResourceList, serializeResourceList } from './resource-list.js';
import { withResultsDir, type FunctionRunRecord } from './results.js';
import { mergeSelectionOutput, selectionActive, selectResources, tagSelected, type Selection } from './selection.js';
import type { FunctionProvider, RunnerOptions } from './runner.js';

export interface EvalOptions extends ProviderOptions {
  image?: string;
  exec?: string;
  execArgs?: string[];
  fnConfigFile?: string;
  keyValues?: string[];
  /** `stdout` prints a ResourceList instead of writing the folder. */
  output?: 'stdout';
  report: Writable;
  stdin: Readable;
  stdout: Writable;
  runner?: RunnerOptions;
  /** One selector and one exclusion, as the flags give them; absent or empty: every resource. */
  selection?: Selection;
  resultsDir?: string;
}

export function configFromArgs(keyValues: string[]): KrmObject {
  const data: Record<string, string> = {};
  for (const kv of keyValues) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new PackageError(`function argument ${kv} is not key=value`);
    data[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return configMapFrom(data);
}

function loadConfigFile(file: string): { config: KrmObject; text: string } {
  let doc: unknown;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
    doc = YAML.parse(text);
  } catch (err) {
    throw new PackageError(`cannot read function config ${file}: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || typeof (doc as KrmObject).kind !== 'string') throw new PackageError(`function config ${file} has no kind`);
  return { config: doc as KrmObject, text };
}

export async function evalFunction(target: string, opts: EvalOptions): Promise<void> {
  return withResultsDir(opts.resultsDir, opts.report, (records) => evalWith(target, opts, records));
}

/** The function over the selected items (all when nothing is selected), merged back into all of them. */
async function runSelected(
  provider: FunctionProvider,
  items: KrmObject[],
  config: KrmObject | undefined,
  opts: EvalOptions,
  records: FunctionRunRecord[],
): Promise<KrmObject[]> {
  const selection = opts.selection;
  const selected = selectionActive(selection) ? selectResources(items, selection) : undefined;
  const out = await invokeFunction(provider, selected ? tagSelected(items, selected) : items, config, opts.report, opts.runner, {
    records,
    selectedCount: selected?.length,
  });
  return selected ? mergeSelectionOutput(items, selected, out.items) : out.items;
}

async function evalWith(target: string, opts: EvalOptions, records: FunctionRunRecord[]): Promise<void> {
  if (opts.fnConfigFile && opts.keyValues?.length)
    throw new PackageError('give the function config either with --fn-config or as key=value arguments, not both');
  const loaded = opts.fnConfigFile ? loadConfigFile(opts.fnConfigFile) : undefined;
  const config = loaded?.config ?? (opts.keyValues?.length ? configFromArgs(opts.keyValues) : undefined);
  const configSource = loaded && opts.fnConfigFile ? { file: opts.fnConfigFile, text: loaded.text } : undefined;
  let provider: FunctionProvider;
  if (opts.image) provider = { kind: 'container', image: opts.image, network: Boolean(opts.allowNetwork), mounts: opts.mounts };
  else if (opts.exec) provider = { kind: 'exec', path: opts.exec, args: opts.execArgs };
  else if (config) provider = await providerForConfig(config, opts, configSource);
  else throw new PackageError('name the function: --image IMAGE, --exec PATH, or --fn-config FILE whose kind a trusted catalog provides');

  if (target === '-') {
    const input = parseResourceList(await text(opts.stdin));
    opts.stdout.write(serializeResourceList(await runSelected(provider, input.items, config ?? input.functionConfig, opts, records)));
    return;
  }
  const pkg = readPackage(target);
  const items = await runSelected(provider, pkg.items, config, opts, records);
  if (opts.output === 'stdout') {
    opts.stdout.write(serializeResourceList(items));
    return;
  }
  applyWrite(target, planWrite(pkg, items));
}
