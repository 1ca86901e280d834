// The dev cluster's image registry: Debian's docker-registry on loopback, where images berth makes are pushed and the
// node's containerd pulls them from (over plain HTTP: a hosts.toml per node says so). Deletes are on, so berth's
// garbage collection can remove what it pushed. Workers live in network namespaces of their own, whose loopback is not
// this one: only the first node reaches it.
import { join } from 'node:path';
import { stringify } from 'yaml';
import { MACHINE } from './layout.js';

/** host:port the registry listens on and the nodes pull from (distribution's usual port, shifted off it) */
export const REGISTRY_ADDRESS = '127.0.0.1:5115';
export const REGISTRY_STORAGE = join(MACHINE.varLib, 'registry');

export function registryConfig(): string {
  return stringify({
    version: 0.1,
    log: { level: 'warn', accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: REGISTRY_STORAGE }, delete: { enabled: true } },
    http: { addr: REGISTRY_ADDRESS },
  });
}

export function registryArgs(configFile: string): string[] {
  return ['docker-registry', 'serve', configFile];
}

/** containerd's hosts.toml for the registry (under the node's config_path): pull and resolve over plain HTTP */
export function registryHostsToml(): string {
  const url = `http://${REGISTRY_ADDRESS}`;
  return [`server = '${url}'`, '', `[host.'${url}']`, `  capabilities = ['pull', 'resolve']`, ''].join('\n');
}
