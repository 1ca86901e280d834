/**
 * berth's one way to a cluster, for every face: where (kubeconfig, context and namespace resolved as kubectl
 * resolves them: config.ts) and the one client there (client.ts). Each face decides only what it passes in:
 * the shim, `berth fn` and `berth task` their BERTH_* settings (runtime/settings.ts), berth serve its flags.
 */
import { ClusterClient } from './client.js';
import { resolveKubeConfig, type ResolveOptions } from './config.js';

export interface Connection {
  client: ClusterClient;
  /** Where the config came from (a file list, or `in-cluster`): berth serve picks its port mode by it. */
  source: string;
}

export function connect(opts: ResolveOptions = {}): Connection {
  const target = resolveKubeConfig(opts);
  return { client: new ClusterClient(target.kc, target.namespace), source: target.source };
}
