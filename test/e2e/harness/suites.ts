// Which cluster each end-to-end test file runs on. The upstream cluster (kube-apiserver, kubelet, containerd) with
// stock feature gates is what users run, so the suites run there. Files whose subject is how output reaches the
// caller run a second time with the alpha gate PodLogsQuerySplitStreams on, under which berth reads stdout and
// stderr apart from the log (its exact path). The files that hold berth to separate streams (berth serve's suite,
// some of berth task's) run with the gate only: SPLIT_ONLY says why for each. The demo starts a cluster of its own, as
// a new user's first command does: it runs last, with no cluster of the harness's up (a machine runs one). The
// folders of TWO_NODES run on a cluster of two nodes.
export type ClusterKind = 'upstream' | 'upstream-split' | 'upstream-nodes' | 'own';

/** folders of test/e2e, each with every file in it */
const STOCK_FOLDERS = ['upstream', 'readme', 'shim', 'catalog', 'task', 'incluster', 'reliability'];

/**
 * folders and files that run with split log streams only, and why: they hold berth to stdout and stderr apart, which
 * it gives only where the cluster serves them apart. A file of such a folder that ALSO_STOCK names runs on the stock
 * cluster as well.
 */
export const SPLIT_ONLY: Record<string, string> = {
  serve:
    "berth serve gives a container's stdout and stderr apart, as dockerd does; on a stock cluster both arrive as stdout (serve/merged-logs checks what a user gets there)",
  'reliability/serve-faults.test.js': "berth serve under faults, judged exact against dockerd's separate streams (serve, above)",
  'task/run.test.js': "a task's stdout and stderr apart; on a stock cluster both arrive as stdout, as in a Concourse build log (task/log-rotation checks that)",
  'task/resources.test.js': "a resource script's stderr apart from the task's stdout; on a stock cluster it arrives in stdout, as in a Concourse build log",
  'task/resources-put.test.js': "a resource script's stderr apart from the task's stdout; on a stock cluster it arrives in stdout, as in a Concourse build log",
};
const ALSO_STOCK = ['serve/merged-logs.test.js'];

/** files (relative to test/e2e) that run again with split log streams, and why */
export const ALSO_SPLIT: Record<string, string> = {
  'shim/streams.test.js': 'stdout and stderr exactly as podman, also for a process that writes before berth attaches',
  'shim/pool.test.js': 'warm pods whose output comes from the log',
  'task/log-rotation.test.js': "a task's stdout and stderr apart, every line once while the kubelet rotates the log",
};

/**
 * folders that run on a cluster of two nodes (stock gates): berth's faces with their pods on another node than berth
 * and than each other, placement forced in each test, and a node lost mid-run
 */
export const TWO_NODES: Record<string, string> = {
  nodes: 'pods on two nodes: the network between them, every face across them, a worker lost and brought back',
};

/** folders whose files start and stop a dev cluster of their own, and why */
export const OWN_CLUSTER: Record<string, string> = {
  demo: 'scripts/demo.sh starts a dev cluster as a new user does, and takes it down again',
};

/**
 * Files that change the cluster for every client while they run (faults in the API proxy, a kubelet restarted with
 * another log rotation, the cluster's processes killed): they run alone, after the others (harness/run.ts says how many
 * of those run at once).
 */
export const RUNS_ALONE = [
  'upstream/restart.test.js',
  'reliability/fn-faults.test.js',
  'reliability/serve-faults.test.js',
  'reliability/shim-faults.test.js',
  'serve/ports.test.js',
  'shim/streams.test.js',
  'task/faults.test.js',
  'task/log-rotation.test.js',
  // the node's registry trust (containerd's _default/hosts.toml) changed under every pull of a served image
  'task/image-trust.test.js',
  'serve/image-trust.test.js',
  'nodes/cluster.test.js',
  'nodes/node-loss.test.js',
];

/** The clusters a file (its path relative to test/e2e) runs on, in the order the harness starts them. */
export function clustersOf(file: string): ClusterKind[] {
  const folder = file.split('/')[0]!;
  if (ALSO_STOCK.includes(file)) return ['upstream', 'upstream-split'];
  if (folder in SPLIT_ONLY || file in SPLIT_ONLY) return ['upstream-split'];
  if (folder in OWN_CLUSTER) return ['own'];
  if (folder in TWO_NODES) return ['upstream-nodes'];
  if (!STOCK_FOLDERS.includes(folder)) throw new Error(`test/e2e/${file}: its folder is in no suite of test/e2e/harness/suites.ts`);
  return file in ALSO_SPLIT ? ['upstream', 'upstream-split'] : ['upstream'];
}
