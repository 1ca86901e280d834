// Which cluster each end-to-end folder runs on. The upstream cluster (kube-apiserver, kubelet, containerd) is what
// users run, so every suite belongs there: first with stock feature gates, then with the alpha gate
// PodLogsQuerySplitStreams, under which berth reads stdout and stderr apart from the log (its exact path). A folder
// stays on the TypeScript cluster only while it tests that server itself or has not yet passed on upstream
// Kubernetes; TYPESCRIPT_ONLY says why for each.
export type ClusterKind = 'upstream' | 'upstream-split' | 'typescript';

export const PHASES: { kind: ClusterKind; folders: string[] }[] = [
  { kind: 'upstream', folders: ['upstream', 'readme'] },
  { kind: 'upstream-split', folders: ['shim', 'catalog', 'task', 'incluster', 'reliability'] },
];

export const TYPESCRIPT_ONLY: Record<string, string> = {
  devcluster: "the TypeScript API server's own tests",
  demo: 'scripts/demo.sh starts a TypeScript dev cluster of its own (a machine runs one upstream cluster: the harness\'s)',
  serve:
    "on upstream Kubernetes two of its tests still fail (docker logs --tail inside a line longer than 16 KiB: a kubelet stamps only the line's first entry, so the cut by time drops the rest; a node-loaded image the kubelet pulled anyway in image-config), and its suite takes 20 min there (issue 27)",
};

export function clusterOf(folder: string): ClusterKind {
  return PHASES.find((p) => p.folders.includes(folder))?.kind ?? 'typescript';
}
