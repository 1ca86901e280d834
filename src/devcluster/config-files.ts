// Writes every configuration file of one cluster into its state dir (and the CNI network into the node's folder).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UserSpec } from './users-file.js';
import { corefile } from './addons.js';
import { apiServerUrl } from './api-probe.js';
import { componentKubeconfig, tokenFile, tokenUsers, type Component } from './identities.js';
import type { Layout } from './layout.js';
import { cniConflist, containerdConfig, kubeletConfig, kubeProxyConfig, type KubeletOptions } from './node-configs.js';
import type { Pki } from './pki.js';
import { cniConfDir, nodeConfigFile, registryHostsDir, type NodeSpec } from './nodes.js';
import { otherHostsToml, REGISTRY_ADDRESS, registryConfig, registryHostsToml } from './registry.js';
import { RUNC_WRAPPER } from './faults/runc-delay.js';

const writeConfig = (layout: Layout, name: string, text: string) => writeFileSync(join(layout.config, name), text, { mode: 0o600 });

export function writeConfigFiles(layout: Layout, pki: Pki, fileUsers: UserSpec[], kubelet: KubeletOptions, nodes: NodeSpec[]): ReturnType<typeof tokenUsers> {
  mkdirSync(layout.config, { recursive: true, mode: 0o700 });
  const ids = tokenUsers(layout.pki, fileUsers);
  const write = (name: string, text: string) => writeConfig(layout, name, text);
  write('tokens.csv', tokenFile([ids.admin, ...Object.values(ids.components), ...Object.values(ids.workerKubelets), ...ids.users]));
  for (const [part, user] of Object.entries(ids.components) as [Component, (typeof ids.components)[Component]][]) {
    write(`${part}.kubeconfig`, componentKubeconfig(apiServerUrl, pki.ca.certPem, user));
  }
  write('admin.kubeconfig', componentKubeconfig(apiServerUrl, pki.ca.certPem, ids.admin));
  write('Corefile', corefile(layout));
  for (const node of nodes) {
    if (node.index > 0) write(nodeConfigFile(node, 'kubelet.kubeconfig'), componentKubeconfig(apiServerUrl, pki.ca.certPem, ids.workerKubelets[node.name]!));
    write(nodeConfigFile(node, 'containerd.toml'), containerdConfig(layout, node, RUNC_WRAPPER));
    writeKubeletConfig(layout, node, kubelet);
    write(nodeConfigFile(node, 'kube-proxy.yaml'), kubeProxyConfig(layout, node));
    mkdirSync(cniConfDir(node), { recursive: true });
    writeFileSync(join(cniConfDir(node), '10-berth.conflist'), cniConflist(node));
    const hostDir = join(registryHostsDir(node), REGISTRY_ADDRESS);
    mkdirSync(hostDir, { recursive: true });
    writeFileSync(join(hostDir, 'hosts.toml'), registryHostsToml());
    const otherHosts = join(registryHostsDir(node), '_default');
    mkdirSync(otherHosts, { recursive: true });
    writeFileSync(join(otherHosts, 'hosts.toml'), otherHostsToml());
  }
  write('registry.yml', registryConfig());
  return ids;
}

export function writeKubeletConfig(layout: Layout, node: NodeSpec, kubelet: KubeletOptions): void {
  writeConfig(layout, nodeConfigFile(node, 'kubelet.yaml'), kubeletConfig(layout, node, kubelet));
  writeConfig(layout, nodeConfigFile(node, 'kubelet-options.json'), JSON.stringify(kubelet));
}
