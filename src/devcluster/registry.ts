// The dev cluster's image registry: Debian's docker-registry on the host's address on the pods' bridge, where images
// berth makes are pushed, every node's containerd pulls them from (over plain HTTP: a hosts.toml per node says so) and
// pods reach it too (a build's base images). Not loopback: workers and pods live in network namespaces of their own.
// Deletes are on, so berth can remove what it pushed.
import { join } from 'node:path';
import { stringify } from 'yaml';
import { MACHINE, NET } from './layout.js';

/** host:port the registry listens on and the nodes pull from (distribution's usual port, shifted off it) */
export const REGISTRY_ADDRESS = `${NET.nodeIp}:5115`;
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

/**
 * containerd's hosts.toml for every other host (its `_default` folder): HTTPS without verifying the certificate. An
 * image berth serves from a pod (berth task's and berth serve's `--image-server`) is pulled from the pod's address
 * over HTTPS with a certificate the pod made itself; the pull names the image's digest, which containerd checks, so
 * what arrives is what berth sent whoever answered. It covers every other registry host too: the dev cluster has no
 * way out but to the package mirrors, and its images are preloaded or in its own registry.
 */
export function otherHostsToml(): string {
  return ['# the pods serving images berth made (--image-server) present certificates of their own', 'skip_verify = true', ''].join('\n');
}
