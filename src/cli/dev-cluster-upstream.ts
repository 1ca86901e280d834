// The upstream side of `berth dev-cluster`: up --upstream (building Kubernetes first when this machine never did),
// down, status, load, and the fault proxy that `up` runs in front of kube-apiserver.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { runFaultProxy } from '../devcluster/upstream/fault-proxy-process.js';
import { downUpstreamCluster, readUpstreamState, upUpstreamCluster } from '../devcluster/upstream/control.js';
import { loadImages } from '../devcluster/upstream/cluster.js';
import { Layout, UPSTREAM_SCRIPTS } from '../devcluster/upstream/layout.js';
import { pidOf } from '../devcluster/upstream/processes.js';
import { apiGet } from '../devcluster/upstream/api-probe.js';

const cliPath = fileURLToPath(new URL('./main.js', import.meta.url));

export const HELPER_IMAGE = 'localhost/berth/busybox:1';

/** Builds what the cache lacks; a machine that built once builds nothing (the script says so in a line). */
export function ensureBuilt(layout: Layout): void {
  const needed = [layout.bin('kubernetes', 'kubelet'), layout.bin('etcd', 'etcd'), layout.bin('containerd', 'containerd'), layout.bin('coredns', 'coredns'), layout.bin('kube-router', 'kube-router'), layout.bin('local-path', 'local-path-provisioner')];
  if (needed.every((b) => existsSync(b))) return;
  process.stderr.write(`dev-cluster: building Kubernetes ${layout.versions.K8S_VERSION} and its parts from their Go modules into ${layout.versions.BERTH_K8S_CACHE}\n` +
    'dev-cluster: the first build takes about 22 minutes on 2 cores and 5 GB of disk; later runs reuse it\n');
  const r = spawnSync('bash', [join(UPSTREAM_SCRIPTS, 'build.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`dev-cluster: the build of the upstream cluster failed (exit ${r.status}); its output is above. Rerun: bash ${join(UPSTREAM_SCRIPTS, 'build.sh')}`);
}

function podmanHas(image: string): boolean {
  return spawnSync('podman', ['image', 'exists', image]).status === 0;
}

export interface UpstreamUpFlags {
  stateDir: string;
  users?: string;
  host: string;
  port: string;
  splitLogStreams?: boolean;
  containerLogMaxSize: number;
  containerLogCheckInterval: number;
  load?: string[];
  foreground?: boolean;
  faultDropStreams?: number;
  faultError500?: number;
  faultEndWatchAfter?: number;
  faultDelayPodStart?: number;
}

/** Options of the TypeScript cluster that mean nothing here: refused, each with what to do instead. */
function refuseTypescriptOptions(o: UpstreamUpFlags): void {
  if (o.foreground) throw new Error('--foreground is for the TypeScript cluster: the upstream cluster runs as processes of this machine, and `up --upstream` returns once it is ready');
  if (o.faultDropStreams || o.faultError500 || o.faultEndWatchAfter || o.faultDelayPodStart) {
    throw new Error('--fault-* flags are for the TypeScript cluster: on the upstream cluster set faults while it runs, as admin: kubectl replace --raw /berth-dev/v1/faults -f faults.json');
  }
}

export async function upUpstreamAction(o: UpstreamUpFlags): Promise<void> {
  refuseTypescriptOptions(o);
  const layout = new Layout(o.stateDir);
  const existing = readUpstreamState(o.stateDir);
  if (existing && pidOf(layout, 'fault-proxy') && (await apiGet(layout, '/readyz').then((r) => r.code === 200, () => false))) {
    process.stdout.write(`dev cluster already running at ${existing.server} (${existing.version})\nkubeconfig: ${existing.kubeconfig}\n`);
    return;
  }
  ensureBuilt(layout);
  const images = [...(podmanHas(HELPER_IMAGE) ? [HELPER_IMAGE] : []), ...(o.load ?? [])];
  const state = await upUpstreamCluster(o.stateDir, {
    usersFile: o.users,
    kubelet: { splitLogStreams: !!o.splitLogStreams, containerLogMaxBytes: o.containerLogMaxSize, containerLogCheckMs: o.containerLogCheckInterval },
    images: [...new Set(images)],
    helperImage: HELPER_IMAGE,
    progress: (line) => process.stderr.write(`dev-cluster: ${line}\n`),
    proxyHost: o.host,
    proxyPort: Number(o.port),
    faultProxyCommand: [process.execPath, cliPath, 'dev-cluster', 'fault-proxy'],
  });
  process.stdout.write(`dev cluster (Kubernetes ${state.version}) running at ${state.server}\nkubeconfig: ${state.kubeconfig}\n  export KUBECONFIG=${state.kubeconfig}\n`);
}

export async function downUpstreamAction(stateDir: string): Promise<boolean> {
  return downUpstreamCluster(stateDir);
}

export function isUpstream(stateDir: string): boolean {
  return readUpstreamState(stateDir) !== undefined || existsSync(new Layout(stateDir).pids);
}

export async function upstreamStatus(stateDir: string): Promise<{ running: boolean; state: ReturnType<typeof readUpstreamState> }> {
  const layout = new Layout(stateDir);
  const state = readUpstreamState(stateDir);
  const running = !!state && pidOf(layout, 'fault-proxy') !== undefined && (await apiGet(layout, '/readyz').then((r) => r.code === 200, () => false));
  return { running, state };
}

export function loadCommand(stateDirOption: () => import('commander').Option): Command {
  return new Command('load')
    .description('put images from podman into the upstream cluster\'s node, as `kind load docker-image` does')
    .argument('<image...>', 'images in podman, e.g. localhost/berth/busybox:1')
    .addOption(stateDirOption())
    .action(async (images: string[], o: { stateDir: string }) => {
      const layout = new Layout(o.stateDir);
      if (!readUpstreamState(o.stateDir) || pidOf(layout, 'containerd') === undefined) {
        throw new Error(`no upstream dev cluster runs from ${o.stateDir}; start one with: berth dev-cluster up --upstream`);
      }
      await loadImages(layout, images);
      for (const i of images) process.stdout.write(`loaded ${i}\n`);
    });
}

export function faultProxyCommand(stateDirOption: () => import('commander').Option): Command {
  return new Command('fault-proxy')
    .description('(run by `up --upstream`) the fault-injecting proxy in front of kube-apiserver, in the foreground')
    .addOption(stateDirOption())
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', '0')
    .action(async (o: { stateDir: string; host: string; port: string }) => {
      await runFaultProxy(new Layout(o.stateDir), o.host, Number(o.port));
    });
}
