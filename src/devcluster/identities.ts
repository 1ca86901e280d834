// Who talks to kube-apiserver: the cluster's own parts and berth's token users (admin plus the users
// file), written as kube-apiserver's token file and as kubeconfigs. RBAC, not this file, decides what each may do.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_NAME, renderKubeconfig } from './kubeconfig.js';
import type { UserSpec } from './users-file.js';
import { MAX_NODES, nodeName } from './nodes.js';

export interface TokenUser {
  name: string;
  token: string;
  groups: string[];
}

/** the parts of the cluster, each under the name its default RBAC binding expects */
export const COMPONENTS = {
  'kube-controller-manager': { user: 'system:kube-controller-manager', groups: [] },
  'kube-scheduler': { user: 'system:kube-scheduler', groups: [] },
  kubelet: { user: 'system:node:berth', groups: ['system:nodes'] },
  'kube-proxy': { user: 'system:kube-proxy', groups: [] },
  // DNS, the policy enforcer and the volume provisioner: cluster add-ons, given what kind gives them through RBAC
  addons: { user: 'system:berth-addons', groups: ['system:masters'] },
} as const;

export type Component = keyof typeof COMPONENTS;

/** a token per identity, made once and kept so that running parts and kubeconfigs stay valid across restarts */
function tokenFor(dir: string, name: string): string {
  const file = join(dir, `${name.replace(/[^a-z0-9-]/gi, '_')}.token`);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = randomBytes(24).toString('hex');
  writeFileSync(file, token, { mode: 0o600 });
  return token;
}

/**
 * The kubelets of the workers a cluster can have, each under its node's name as the Node authorizer wants: all of them
 * from the start, since kube-apiserver reads its token file once.
 */
function workerKubelets(pkiDir: string): Record<string, TokenUser> {
  const names = Array.from({ length: MAX_NODES - 1 }, (_, i) => nodeName(i + 1));
  return Object.fromEntries(names.map((node) => [node, { name: `system:node:${node}`, token: tokenFor(pkiDir, `kubelet-${node}`), groups: ['system:nodes'] }]));
}

export function tokenUsers(
  pkiDir: string,
  fileUsers: UserSpec[],
): { admin: TokenUser; components: Record<Component, TokenUser>; workerKubelets: Record<string, TokenUser>; users: TokenUser[] } {
  const admin = { name: 'admin', token: tokenFor(pkiDir, 'admin'), groups: ['system:masters'] };
  const components = Object.fromEntries(
    Object.entries(COMPONENTS).map(([part, id]) => [part, { name: id.user, token: tokenFor(pkiDir, part), groups: [...id.groups] }]),
  ) as Record<Component, TokenUser>;
  const users = fileUsers.map((u) => ({ name: u.name, token: u.token, groups: u.groups }));
  return { admin, components, workerKubelets: workerKubelets(pkiDir), users };
}

/** kube-apiserver's --token-auth-file: token,user,uid,"group1,group2" */
export function tokenFile(all: TokenUser[]): string {
  const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
  return all.map((u) => [u.token, u.name, u.name, quote(u.groups.join(','))].join(',')).join('\n') + '\n';
}

export function componentKubeconfig(server: string, caPem: string, user: TokenUser): string {
  return renderKubeconfig({ clusterName: CLUSTER_NAME, server, caPem, users: [{ name: 'component', token: user.token }], currentUser: 'component' });
}
