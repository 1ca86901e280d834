// `berth fn eval|render`: KRM functions, container providers as pods, exec providers verified locally.
import path from 'node:path';
import { Command } from 'commander';
import type { WorkloadMount } from '../runtime/workload.js';
import { evalFunction } from '../krm/eval.js';
import { FunctionFailure } from '../krm/invoke.js';
import { renderPackage } from '../krm/render.js';
import { serializeResourceList } from '../krm/resource-list.js';
import { parseKeyValueFlags, type ResourceSelector, type Selection } from '../krm/selection.js';
import { SKIP_SCHEMA_WARNING } from '../catalog/config-schema.js';
import type { CatalogSet } from '../catalog/trust.js';
import { addCatalogOptions, catalogSetFrom, type CatalogFlags } from './catalog.js';
import { catalogResolver } from './fn-resolver.js';

interface FnFlags extends CatalogFlags {
  allowNetwork?: boolean;
  mount?: string[];
  explain?: boolean;
  output?: string;
  preferExec?: boolean;
  resultsDir?: string;
  skipSchema?: boolean;
}

/** kpt's eval selection flags: --match-X and --exclude-X for each selector field. */
type SelectionFlags = { [K in `${'match' | 'exclude'}${'ApiVersion' | 'Kind' | 'Name' | 'Namespace'}`]?: string } & {
  [K in `${'match' | 'exclude'}${'Labels' | 'Annotations'}`]?: string[];
};

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

/** kpt's `--mount type=bind,src=DIR,dst=PATH[,rw=true]`. */
export function parseMount(spec: string): WorkloadMount {
  const fields = Object.fromEntries(spec.split(',').map((kv) => kv.split('=', 2) as [string, string]));
  const source = fields.src ?? fields.source;
  const target = fields.dst ?? fields.target ?? fields.destination;
  if ((fields.type ?? 'bind') !== 'bind' || !source || !target) throw new Error(`--mount ${spec}: expected type=bind,src=DIR,dst=PATH`);
  return { source: path.resolve(source), target, readOnly: fields.rw !== 'true' };
}

function fnOptions(cmd: Command): Command {
  return addCatalogOptions(cmd)
    .option('--allow-network', 'let functions that require network have it')
    .option('--mount <spec>', 'type=bind,src=DIR,dst=PATH: storage for functions that require it; repeatable', collect)
    .option('--explain', 'print every catalog match for each function config, in resolution order')
    .option('--prefer-exec', "use a catalog's exec provider when it also has a container")
    .option('--results-dir <dir>', "write the structured results of every function run to DIR/results.yaml (kpt's FunctionResultList)")
    .option('--skip-schema', "run function configs their catalog's openAPIV3Schema refuses (warns)");
}

function selectionOptions(cmd: Command): Command {
  for (const [verb, what] of [
    ['match', 'select'],
    ['exclude', 'exclude'],
  ] as const) {
    cmd
      .option(`--${verb}-api-version <apiVersion>`, `${what} resources with this apiVersion`)
      .option(`--${verb}-kind <kind>`, `${what} resources of this kind`)
      .option(`--${verb}-name <name>`, `${what} resources with this name`)
      .option(`--${verb}-namespace <namespace>`, `${what} resources in this namespace`)
      .option(`--${verb}-labels <key=value>`, `${what} resources with this label; repeatable`, collect)
      .option(`--${verb}-annotations <key=value>`, `${what} resources with this annotation; repeatable`, collect);
  }
  return cmd;
}

/** The flags as one selector and one exclusion: within each, every given flag must match. */
export function selectionFromFlags(o: SelectionFlags): Selection {
  const one = (verb: 'match' | 'exclude'): ResourceSelector[] => {
    const s: ResourceSelector = {
      apiVersion: o[`${verb}ApiVersion`],
      kind: o[`${verb}Kind`],
      name: o[`${verb}Name`],
      namespace: o[`${verb}Namespace`],
      labels: parseKeyValueFlags(`--${verb}-labels`, o[`${verb}Labels`]),
      annotations: parseKeyValueFlags(`--${verb}-annotations`, o[`${verb}Annotations`]),
    };
    const given = Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined && v !== '')) as ResourceSelector;
    return Object.keys(given).length ? [given] : [];
  };
  return { selectors: one('match'), exclusions: one('exclude') };
}

/** what eval and render pass alike to the function runner: the catalogs reach krm as a resolver */
function runnerOptions(o: FnFlags, catalogs: CatalogSet) {
  const mounts = o.mount?.map(parseMount);
  if (o.skipSchema) process.stderr.write(`${SKIP_SCHEMA_WARNING}\n`);
  return {
    allowNetwork: o.allowNetwork,
    mounts,
    resolver: catalogResolver({
      catalogs,
      allowNetwork: o.allowNetwork,
      mounts,
      preferExec: o.preferExec,
      cacheDir: o.cacheDir,
      caFile: o.caFile,
      explain: o.explain ? process.stderr : undefined,
      warn: (l) => process.stderr.write(`${l}\n`),
      skipSchema: o.skipSchema,
    }),
    report: process.stderr,
    resultsDir: o.resultsDir,
  };
}

async function guarded(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    process.stderr.write(`berth: ${(err as Error).message}\n`);
    process.exitCode = err instanceof FunctionFailure ? err.exitCode : 1;
  }
}

export function fnCommand(): Command {
  const cmd = new Command('fn').description('run KRM functions: containers as pods, catalog executables after sha256 verification');

  selectionOptions(
    fnOptions(
      cmd
        .command('eval')
        .description('run one function over a package folder (written back) or a ResourceList on stdin (-)')
        .argument('<dir>', 'package folder, or - for stdin')
        .argument('[keyValues...]', 'after --: key=value pairs, the function config as a ConfigMap')
        .option('-i, --image <image>', 'container image of the function')
        .option('--exec <path>', 'local executable of the function')
        .option('--fn-config <file>', 'function config; without --image/--exec its kind is resolved through trusted catalogs')
        .option('-o, --output <where>', '"stdout" prints a ResourceList instead of writing the folder'),
    ),
  ).action((dir: string, keyValues: string[], o: FnFlags & SelectionFlags & { image?: string; exec?: string; fnConfig?: string }) =>
    guarded(async () => {
      if (o.output && o.output !== 'stdout') throw new Error('--output takes only "stdout"');
      const catalogs = await catalogSetFrom(o, dir === '-' ? undefined : dir);
      await evalFunction(dir, {
        ...runnerOptions(o, catalogs),
        image: o.image,
        exec: o.exec,
        fnConfigFile: o.fnConfig,
        keyValues,
        output: o.output as 'stdout' | undefined,
        selection: selectionFromFlags(o),
        stdin: process.stdin,
        stdout: process.stdout,
      });
    }),
  );

  fnOptions(
    cmd
      .command('render')
      .description('run the Kptfile pipelines of a package and its nested packages; write the result back')
      .argument('<dir>', 'package folder (has a Kptfile)')
      .option('-o, --output <where>', '"stdout" prints a ResourceList instead of writing the folder'),
  ).action((dir: string, o: FnFlags) =>
    guarded(async () => {
      if (o.output && o.output !== 'stdout') throw new Error('--output takes only "stdout"');
      const catalogs = await catalogSetFrom(o, dir);
      const out = await renderPackage(dir, {
        ...runnerOptions(o, catalogs),
        dryRun: o.output === 'stdout',
      });
      if (o.output === 'stdout') process.stdout.write(serializeResourceList(out.items));
      else process.stderr.write(`Successfully executed the pipeline of ${dir}; ${out.changed.length} file(s) changed\n`);
    }),
  );
  return cmd;
}
