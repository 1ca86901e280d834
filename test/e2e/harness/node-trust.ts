// The dev cluster's node told to verify the registries it knows nothing of against one CA, as a cluster set up for
// berth's image CA is (`ca =` in containerd's _default/hosts.toml), instead of the dev cluster's skip_verify; for the
// length of a test. containerd reads its hosts folder at each pull, so no restart is needed either way.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MACHINE } from '../../../src/devcluster/layout.js';

/** The node's folder for hosts without one of their own (single-node clusters: the first node's). */
export const OTHER_HOSTS_DIR = join(MACHINE.varLib, 'containerd-hosts', '_default');

export async function withNodeTrustingOnly<T>(caCert: string, run: () => Promise<T>): Promise<T> {
  const hosts = join(OTHER_HOSTS_DIR, 'hosts.toml');
  const caFile = join(OTHER_HOSTS_DIR, 'berth-image-ca.crt');
  const before = readFileSync(hosts, 'utf8');
  writeFileSync(caFile, caCert);
  writeFileSync(hosts, `ca = "${caFile}"\n`);
  try {
    return await run();
  } finally {
    writeFileSync(hosts, before);
    rmSync(caFile, { force: true });
  }
}
