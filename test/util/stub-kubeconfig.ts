// A kubeconfig for client-node that points at a test's own server over plain HTTP, with no credentials.
import { KubeConfig } from '@kubernetes/client-node';

export function stubKubeConfig(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'stub', server: url, skipTLSVerify: true }],
    users: [{ name: 'nobody' }],
    contexts: [{ name: 'stub', cluster: 'stub', user: 'nobody' }],
    currentContext: 'stub',
  });
  return kc;
}
