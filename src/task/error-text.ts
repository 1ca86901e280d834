// berth task's words for a cluster failure: its own namespace and context settings and Role file, never the docker
// shim's (`BERTH_NAMESPACE`, `BERTH_CONTEXT`, shim-role.yaml), which the runtime's errors name when no face says otherwise.
import { KubeError, rehintKubeError, type FaceHints } from '../kube/errors.js';

export const TASK_HINTS: FaceHints = {
  namespaceSetting: '-n (--namespace) or --target',
  roleFile: 'deploy/rbac/task-role.yaml',
  contextSetting: '--kubeconfig, --context or --target',
};

/** The sentence to print for `err`, a cluster failure told with berth task's hints. */
export function taskErrorText(err: unknown): string {
  if (err instanceof KubeError) return rehintKubeError(err, TASK_HINTS).message;
  return err instanceof Error ? err.message : String(err);
}
