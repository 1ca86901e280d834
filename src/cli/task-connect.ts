// berth task's way to its cluster: the BERTH_* settings (the cluster flags or the target put them there:
// task/targets.ts targetForRun) through the shim's and berth fn's connection path (runtime/settings.ts).
import type { ClusterClient } from '../kube/client.js';
import { connectWithSettings, loadRunSettings } from '../runtime/settings.js';
import { currentTarget } from '../task/cache-claims.js';

export async function connectTask(env: NodeJS.ProcessEnv): Promise<{ cluster: ClusterClient; context: string }> {
  const cluster = await connectWithSettings(loadRunSettings(env), env);
  return { cluster, context: currentTarget(cluster.kc) };
}
