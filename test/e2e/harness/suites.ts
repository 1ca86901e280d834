// Which cluster each end-to-end folder runs on. The upstream cluster (kube-apiserver, kubelet, containerd) is what
// users run, so every suite belongs there: first with stock feature gates, then with the alpha gate
// PodLogsQuerySplitStreams, under which berth reads stdout and stderr apart from the log (its exact path). A folder
// stays on the TypeScript cluster only while it tests that server itself or has not yet passed on upstream
// Kubernetes; TYPESCRIPT_ONLY says why for each.
export type ClusterKind = 'upstream' | 'upstream-split' | 'typescript';

export const PHASES: { kind: ClusterKind; folders: string[] }[] = [
  { kind: 'upstream', folders: ['upstream'] },
  { kind: 'upstream-split', folders: ['shim', 'catalog', 'task'] },
];

export const TYPESCRIPT_ONLY: Record<string, string> = {
  devcluster: "the TypeScript API server's own tests",
  serve: 'not yet run on upstream',
  incluster: 'not yet run on upstream',
  reliability: 'not yet run on upstream',
  readme: 'not yet run on upstream (its dev-cluster block starts the TypeScript cluster)',
};

export function clusterOf(folder: string): ClusterKind {
  return PHASES.find((p) => p.folders.includes(folder))?.kind ?? 'typescript';
}
