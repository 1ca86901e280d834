// `berth catalog validate|pull|view|annotate`: KEP-2906 function catalogs.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { annotatePackage } from '../catalog/annotate.js';
import { checkPackageConfigs, duplicateKindWarnings } from '../catalog/config-check.js';
import { SKIP_SCHEMA_WARNING } from '../catalog/config-schema.js';
import type { Catalog } from '../catalog/model.js';
import { parseOciRef, pushCatalogArtifact } from '../catalog/oci.js';
import { findFunctionConfigs } from '../catalog/package-functions.js';
import { CatalogError, parseCatalog } from '../catalog/parse.js';
import { pullCatalogs } from '../catalog/pull.js';
import { parseRef } from '../catalog/source.js';
import { configuredTrustedCatalogs, loadCatalogSet, packageCatalogRefs, type CatalogSet } from '../catalog/trust.js';
import { pathToFileURL } from 'node:url';

export interface CatalogFlags {
  trustedCatalog?: string[];
  cacheDir?: string;
  caFile?: string;
}

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

/** The options every command that resolves functions shares. */
export function addCatalogOptions(cmd: Command): Command {
  return cmd
    .option(
      '--trusted-catalog <ref>',
      'a catalog to trust and resolve from (file, https URL or oci://; @sha256:<hex> pins it); repeatable, order matters',
      collect,
    )
    .option('--cache-dir <dir>', 'cache for downloaded catalogs and executables (default $BERTH_CACHE_DIR or ~/.cache/berth)')
    .option('--ca-file <pem>', 'extra CA certificates for https catalogs and downloads (also $BERTH_CA_FILE)');
}

/** Trusted: flags first, then berth's config file. Known but untrusted: what the package names. */
export async function catalogSetFrom(flags: CatalogFlags, dir?: string): Promise<CatalogSet> {
  const trustedRefs = [...(flags.trustedCatalog ?? []), ...configuredTrustedCatalogs()];
  const otherRefs = dir
    ? packageCatalogRefs(dir).map((r) => (parseRef(r).kind === 'file' && !path.isAbsolute(parseRef(r).location) ? path.join(dir, r) : r))
    : [];
  return loadCatalogSet({ trustedRefs, otherRefs, cacheDir: flags.cacheDir, caFile: flags.caFile });
}

export function catalogCommand(): Command {
  const cmd = new Command('catalog').description('KRM function catalogs (KEP-2906): validate, pull, view, annotate');

  cmd
    .command('validate')
    .description('check catalog files against the Catalog / KRMFunctionDefinition schema')
    .argument('<files...>')
    .action((files: string[]) => {
      let bad = 0;
      const valid: Catalog[] = [];
      for (const file of files) {
        try {
          const c = parseCatalog(readFileSync(file, 'utf8'), { ref: file, base: pathToFileURL(path.resolve(file)).href });
          valid.push(c);
          process.stdout.write(`${file}: valid (catalog ${c.name}, ${c.functions.length} function(s))\n`);
        } catch (err) {
          bad++;
          process.stderr.write(`${err instanceof CatalogError ? err.message : `${file}: ${(err as Error).message}`}\n`);
        }
      }
      for (const w of duplicateKindWarnings(valid)) process.stderr.write(`${w}\n`);
      if (bad) process.exitCode = 1;
    });

  cmd
    .command('push')
    .description('publish a catalog file as an OCI artifact (credentials from your docker config, as docker push)')
    .argument('<file>', 'a catalog file (checked first)')
    .argument('<ref>', 'oci://host[:port]/repository[:tag]')
    .option('--ca-file <pem>', 'extra CA certificates for the registry (also $BERTH_CA_FILE)')
    .action(async (file: string, ref: string, o: { caFile?: string }) => {
      const text = readFileSync(file);
      parseCatalog(text.toString('utf8'), { ref: file, base: pathToFileURL(path.resolve(file)).href });
      const oci = parseOciRef(ref);
      if (oci.digest) throw new Error(`${ref}: push to a tag, not a digest`);
      const digest = await pushCatalogArtifact(oci, text, { caFile: o.caFile });
      process.stdout.write(`pushed ${file} to ${ref}\n  --trusted-catalog ${ref}@${digest}\n`);
    });

  addCatalogOptions(
    cmd
      .command('pull')
      .description('vendor catalogs and the executables they name into DIR, pinned, so builds need no network')
      .argument('<refs...>', 'catalog references')
      .requiredOption('-o, --output <dir>', 'folder to vendor into'),
  ).action(async (refs: string[], o: CatalogFlags & { output: string }) => {
    const pulled = await pullCatalogs(refs, o.output, { cacheDir: o.cacheDir, caFile: o.caFile });
    for (const p of pulled)
      process.stdout.write(
        `${p.name}: ${p.source} -> ${path.join(o.output, p.file)} (${p.executables.length} executable(s))\n  --trusted-catalog ${p.pinnedRef}\n`,
      );
  });

  addCatalogOptions(
    cmd
      .command('view')
      .description('show catalogs (trusted or not), their publishers and functions; with DIR, which catalog provides each function the package needs')
      .argument('[dir]', 'a package (Kptfile or kustomization)'),
  ).action(async (dir: string | undefined, o: CatalogFlags) => {
    const set = await catalogSetFrom(o, dir);
    const { formatView } = await import('../catalog/view.js');
    process.stdout.write(formatView(set, dir ? findFunctionConfigs(dir).sites : undefined));
  });

  addCatalogOptions(
    cmd
      .command('annotate')
      .description("write each function config's resolved provider into the package (config.kubernetes.io/function, Kptfile image)")
      .argument('<dir>', 'a package (Kptfile or kustomization)')
      .addOption(new Option('--allow-network', 'accept functions that require network'))
      .option('--skip-schema', "annotate configs their catalog's openAPIV3Schema refuses (warns)"),
  ).action(async (dir: string, o: CatalogFlags & { allowNetwork?: boolean; skipSchema?: boolean }) => {
    const set = await catalogSetFrom(o, dir);
    if (o.skipSchema) process.stderr.write(`${SKIP_SCHEMA_WARNING}\n`);
    else checkPackageConfigs(dir, set);
    const done = await annotatePackage(dir, {
      catalogs: set,
      allowNetwork: o.allowNetwork,
      cacheDir: o.cacheDir,
      caFile: o.caFile,
      warn: (l) => process.stderr.write(`${l}\n`),
    });
    for (const d of done) process.stdout.write(`${d.file}: ${d.kind} ${d.apiVersion} -> ${d.provider} (catalog ${d.catalog})\n`);
    if (!done.length) process.stdout.write('nothing to annotate\n');
  });
  return cmd;
}
