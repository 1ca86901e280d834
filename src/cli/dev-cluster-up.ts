// `berth dev-cluster up`: builds Kubernetes first when this machine never did, refuses what no longer applies, and
// starts the cluster with the fault proxy in front of kube-apiserver.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiGet } from '../devcluster/api-probe.js';
import { readClusterState, upCluster } from '../devcluster/control.js';
import type { Faults } from '../devcluster/faults/faults.js';
import { Layout, UPSTREAM_SCRIPTS } from '../devcluster/layout.js';
import { pidOf } from '../devcluster/processes.js';

const cliPath = fileURLToPath(new URL('./main.js', import.meta.url));

export const HELPER_IMAGE = 'localhost/berth/busybox:1';

export interface UpFlags {
  stateDir: string;
  users?: string;
  host: string;
  port: string;
  nodes: number;
  splitLogStreams?: boolean;
  containerLogMaxSize: number;
  containerLogCheckInterval: number;
  load?: string[];
  faultDropStreams: number;
  faultError500: number;
  faultThrottle429: number;
  faultEndWatchAfter: number;
  faultDelayPodStart: number;
  /** options of the retired TypeScript cluster: refused, each with a sentence */
  foreground?: boolean;
  podman?: string;
  watchHistory?: string;
}

/**
 * The TypeScript cluster's options that mean nothing on a real cluster, each refused with what holds instead: a
 * script that still passes one learns why rather than getting a cluster that ignores it.
 */
export function retiredOptionProblem(o: Pick<UpFlags, 'foreground' | 'podman' | 'watchHistory'>): string | undefined {
  if (o.foreground)
    return '--foreground no longer applies: the dev cluster runs as processes of this machine (etcd, kube-apiserver, the kubelet, containerd...), and `up` returns once the node is Ready; stop it with `berth dev-cluster down`';
  if (o.podman !== undefined)
    return "--podman no longer applies: the dev cluster's pods run in containerd; podman only holds the images `--load` and `berth dev-cluster load` put into the node";
  if (o.watchHistory !== undefined)
    return '--watch-history no longer applies: kube-apiserver keeps its own watch cache, and a watch from a resourceVersion it no longer has gets 410 Expired as on any cluster';
  return undefined;
}

/** the --fault-* flags as the faults endpoint's switches; undefined when none is set */
export function initialFaults(
  o: Pick<UpFlags, 'faultDropStreams' | 'faultError500' | 'faultThrottle429' | 'faultEndWatchAfter' | 'faultDelayPodStart'>,
): Partial<Faults> | undefined {
  const faults: Partial<Faults> = {
    ...(o.faultDropStreams ? { dropStreams: o.faultDropStreams } : {}),
    ...(o.faultError500 ? { error500: o.faultError500 } : {}),
    ...(o.faultThrottle429 ? { throttle429: o.faultThrottle429 } : {}),
    ...(o.faultEndWatchAfter ? { endWatchAfterMs: o.faultEndWatchAfter } : {}),
    ...(o.faultDelayPodStart ? { delayPodStartMs: o.faultDelayPodStart } : {}),
  };
  return Object.keys(faults).length ? faults : undefined;
}

/**
 * Builds what the cache lacks; a machine that built once builds nothing. `build.sh --check` is the one judge of what
 * is built (each part's done mark), for the demo and for this.
 */
export function ensureBuilt(): void {
  const script = join(UPSTREAM_SCRIPTS, 'build.sh');
  const check = spawnSync('bash', [script, '--check'], { encoding: 'utf8' });
  if (check.status === 0) return;
  process.stderr.write(
    `dev-cluster: ${check.stdout.trim()}; building them from their Go modules\n` +
      'dev-cluster: the first build takes about 22 minutes on 2 cores and 5 GB of disk; later runs reuse it\n',
  );
  const r = spawnSync('bash', [script], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`dev-cluster: the build of the cluster failed (exit ${r.status}); its output is above. Rerun: bash ${script}`);
}

const podmanHas = (image: string): boolean => spawnSync('podman', ['image', 'exists', image]).status === 0;

export async function clusterAnswers(layout: Layout): Promise<boolean> {
  return (
    pidOf(layout, 'fault-proxy') !== undefined &&
    (await apiGet(layout, '/readyz').then(
      (r) => r.code === 200,
      () => false,
    ))
  );
}

export async function upAction(o: UpFlags): Promise<void> {
  const retired = retiredOptionProblem(o);
  if (retired) throw new Error(retired);
  const port = Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be a port number, got "${o.port}"`);
  const layout = new Layout(o.stateDir);
  const existing = readClusterState(o.stateDir);
  if (existing && (await clusterAnswers(layout))) {
    process.stdout.write(`dev cluster already running at ${existing.server} (${existing.version})\nkubeconfig: ${existing.kubeconfig}\n`);
    return;
  }
  ensureBuilt();
  const images = [...(podmanHas(HELPER_IMAGE) ? [HELPER_IMAGE] : []), ...(o.load ?? [])];
  const state = await upCluster(o.stateDir, {
    usersFile: o.users,
    nodes: o.nodes,
    kubelet: { splitLogStreams: !!o.splitLogStreams, containerLogMaxBytes: o.containerLogMaxSize, containerLogCheckMs: o.containerLogCheckInterval },
    images: [...new Set(images)],
    helperImage: HELPER_IMAGE,
    progress: (line) => process.stderr.write(`dev-cluster: ${line}\n`),
    proxyHost: o.host,
    proxyPort: port,
    faultProxyCommand: [process.execPath, cliPath, 'dev-cluster', 'fault-proxy'],
    faults: initialFaults(o),
  });
  const nodes = state.nodes.length > 1 ? `, nodes ${state.nodes.join(', ')}` : '';
  process.stdout.write(
    `dev cluster (Kubernetes ${state.version}${nodes}) running at ${state.server}\nkubeconfig: ${state.kubeconfig}\n  export KUBECONFIG=${state.kubeconfig}\n`,
  );
}
