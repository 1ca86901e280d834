// A kubeconfig for the dev cluster: one cluster, one token user and one context per user.
import { stringify } from 'yaml';

/** the cluster's name in the kubeconfig; admin's context has it, every other user's is `berth-dev-USER` */
export const CLUSTER_NAME = 'berth-dev';

export interface KubeconfigOptions {
  clusterName: string;
  server: string;
  caPem: string;
  users: { name: string; token: string }[];
  /** its context is named after the cluster and is the current context */
  currentUser: string;
  namespace?: string;
}

export function renderKubeconfig(opts: KubeconfigOptions): string {
  if (!opts.users.some((u) => u.name === opts.currentUser)) {
    throw new Error(`kubeconfig: current user "${opts.currentUser}" is not among the users`);
  }
  const userEntry = (name: string) => `${opts.clusterName}-${name}`;
  const contextName = (name: string) => (name === opts.currentUser ? opts.clusterName : `${opts.clusterName}-${name}`);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [
      {
        name: opts.clusterName,
        cluster: { server: opts.server, 'certificate-authority-data': Buffer.from(opts.caPem, 'utf8').toString('base64') },
      },
    ],
    users: opts.users.map((u) => ({ name: userEntry(u.name), user: { token: u.token } })),
    contexts: opts.users.map((u) => ({
      name: contextName(u.name),
      context: { cluster: opts.clusterName, user: userEntry(u.name), ...(opts.namespace ? { namespace: opts.namespace } : {}) },
    })),
    'current-context': opts.clusterName,
  };
  return stringify(config, { lineWidth: 0 });
}
