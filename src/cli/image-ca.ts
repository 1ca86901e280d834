// `berth image-ca DIR`: makes the CA a cluster's nodes trust for the images berth serves from pods (--image-server
// with --image-server-ca DIR), so the nodes verify those pods instead of skipping verification for unknown hosts.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { CA_CERT_FILE, CA_KEY_FILE, makeImageCa, rangeBytes, writeImageCa } from '../registry/image-ca.js';

const NAME = 'berth image-ca';
const DAY_MS = 24 * 60 * 60 * 1000;

export function imageCaCommand(): Command {
  return new Command('image-ca')
    .description(
      'make the CA that nodes trust for images served from pods (--image-server-ca DIR): it may name only addresses in the --ip-range given, and no DNS name',
    )
    .argument('<dir>', `the folder to write ${CA_CERT_FILE} and ${CA_KEY_FILE} to (made if missing; an existing CA there is kept)`)
    .option('--ip-range <cidr...>', "the cluster's pod address ranges, which its certificates may name (repeatable; default: any address)", [])
    .option('--days <n>', 'how long the CA is valid', '365')
    .action((dir: string, o: { ipRange: string[]; days: string }) => {
      try {
        make(resolve(dir), o.ipRange, daysOf(o.days));
      } catch (err) {
        process.stderr.write(`${NAME}: ${(err as Error).message}\n`);
        process.exit(1);
      }
    });
}

function make(dir: string, ranges: string[], days: number): void {
  for (const file of [CA_CERT_FILE, CA_KEY_FILE])
    if (existsSync(join(dir, file)))
      throw new Error(`${join(dir, file)} exists: berth keeps a CA the nodes may already trust (remove the folder to make a new one)`);
  for (const r of ranges) rangeBytes(r);
  writeImageCa(dir, makeImageCa({ ipRanges: ranges, notAfter: new Date(Date.now() + days * DAY_MS) }));
  const cert = join(dir, CA_CERT_FILE);
  process.stdout.write(
    [
      `${NAME}: wrote ${cert} and ${join(dir, CA_KEY_FILE)} (valid ${days} days; names ${ranges.length ? ranges.join(', ') : 'any address'}, no DNS name)`,
      `on each node: copy ${CA_CERT_FILE} into containerd's registry config_path as _default/berth-image-ca.crt, with _default/hosts.toml holding`,
      `  ca = "<config_path>/_default/berth-image-ca.crt"`,
      `then: berth serve --image-server IMAGE --image-server-ca ${dir}   (berth task plan run and target check take it too)`,
      '',
    ].join('\n'),
  );
}

function daysOf(text: string): number {
  const days = Number(text);
  if (!/^\d+$/.test(text) || days < 1) throw new Error(`--days ${text}: give a whole number of days, 1 or more`);
  return days;
}
