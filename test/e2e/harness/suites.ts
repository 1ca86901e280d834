// Which cluster each end-to-end folder runs on. The upstream cluster (kube-apiserver, kubelet, containerd) is what
// users run, so every suite belongs there; a folder stays on the TypeScript cluster only while it tests that
// server itself (devcluster) or has not yet passed on upstream Kubernetes (named with the reason).
export type ClusterKind = 'upstream' | 'typescript';

export const TYPESCRIPT_ONLY: Record<string, string> = {
  devcluster: "the TypeScript API server's own tests",
};

/** folders that run on the upstream cluster, in this order */
export const UPSTREAM: string[] = ['upstream'];

export function clusterOf(folder: string): ClusterKind {
  return UPSTREAM.includes(folder) ? 'upstream' : 'typescript';
}
