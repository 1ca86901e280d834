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
import { RUNC_WRAPPER } from './faults/runc-delay.js';

export function writeConfigFiles(layout: Layout, pki: Pki, fileUsers: UserSpec[], kubelet: KubeletOptions): ReturnType<typeof tokenUsers> {
  mkdirSync(layout.config, { recursive: true, mode: 0o700 });
  const ids = tokenUsers(layout.pki, fileUsers);
  const write = (name: string, text: string) => writeFileSync(join(layout.config, name), text, { mode: 0o600 });
  write('tokens.csv', tokenFile([ids.admin, ...Object.values(ids.components), ...ids.users]));
  for (const [part, user] of Object.entries(ids.components) as [Component, (typeof ids.components)[Component]][]) {
    write(`${part}.kubeconfig`, componentKubeconfig(apiServerUrl, pki.ca.certPem, user));
  }
  write('admin.kubeconfig', componentKubeconfig(apiServerUrl, pki.ca.certPem, ids.admin));
  write('containerd.toml', containerdConfig(layout, RUNC_WRAPPER));
  writeKubeletConfig(layout, kubelet);
  write('kube-proxy.yaml', kubeProxyConfig(layout));
  write('Corefile', corefile(layout));
  mkdirSync(layout.cniConfDir, { recursive: true });
  writeFileSync(join(layout.cniConfDir, '10-berth.conflist'), cniConflist());
  return ids;
}

export function writeKubeletConfig(layout: Layout, kubelet: KubeletOptions): void {
  writeFileSync(join(layout.config, 'kubelet.yaml'), kubeletConfig(layout, kubelet), { mode: 0o600 });
  writeFileSync(join(layout.config, 'kubelet-options.json'), JSON.stringify(kubelet));
}
