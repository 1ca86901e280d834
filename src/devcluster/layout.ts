// Where the dev cluster's parts live: the binaries in the build cache (scripts/upstream/build.sh), the files of one
// cluster in its state dir, and what the node holds on this machine (one dev cluster per machine: the bridge, ports
// and cgroups are the machine's).
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function defaultStateDir(): string {
  return process.env.BERTH_DEV_CLUSTER_DIR || join(homedir(), '.berth', 'dev-cluster');
}

/** scripts/upstream of this checkout or package: the build script and the versions it builds */
export const UPSTREAM_SCRIPTS = fileURLToPath(new URL('../../../scripts/upstream/', import.meta.url));

export interface Versions {
  K8S_VERSION: string;
  ETCD_VERSION: string;
  CONTAINERD_VERSION: string;
  COREDNS_VERSION: string;
  KUBE_ROUTER_VERSION: string;
  LOCAL_PATH_VERSION: string;
  PAUSE_TAG: string;
  BERTH_K8S_CACHE: string;
}

/** versions.sh is the one list of versions; the shell build sources it, this reads its KEY=VALUE lines */
export function readVersions(): Versions {
  const text = readFileSync(join(UPSTREAM_SCRIPTS, 'versions.sh'), 'utf8');
  const values: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(?:\$\{[A-Z0-9_]+:-([^}]*)\}|(\S+))$/.exec(line.trim());
    if (m) values[m[1]!] = m[2] ?? m[3]!;
  }
  if (process.env.BERTH_K8S_CACHE) values.BERTH_K8S_CACHE = process.env.BERTH_K8S_CACHE;
  return values as unknown as Versions;
}

/** the network the node's pods live on and the addresses of the cluster, fixed for this machine */
export const NET = {
  bridge: 'berth-cni0',
  podCidr: '10.244.0.0/24',
  clusterCidr: '10.244.0.0/16',
  /** the host's address on the bridge: the node IP, the API server's and DNS's address for pods */
  nodeIp: '10.244.0.1',
  serviceCidr: '10.96.0.0/16',
  apiServiceIp: '10.96.0.1',
  apiPort: 6443,
  nodeName: 'berth',
  clusterDomain: 'cluster.local',
} as const;

/** what the node keeps on this machine; `down` removes all of it */
export const MACHINE = {
  varLib: '/var/lib/berth-k8s',
  run: '/run/berth-k8s',
  cgroupRoot: 'berth-k8s',
  cniNetworkName: 'berth',
} as const;

export class Layout {
  readonly versions: Versions = readVersions();

  constructor(readonly stateDir: string) {}

  get pki(): string {
    return join(this.stateDir, 'pki');
  }
  get config(): string {
    return join(this.stateDir, 'config');
  }
  get logs(): string {
    return join(this.stateDir, 'logs');
  }
  get pids(): string {
    return join(this.stateDir, 'pids');
  }
  get kubeconfig(): string {
    return join(this.stateDir, 'kubeconfig');
  }

  /** a binary of the build cache, e.g. bin('kubernetes', 'kubelet') */
  bin(part: 'kubernetes' | 'etcd' | 'containerd' | 'coredns' | 'kube-router' | 'local-path', name: string): string {
    const version = {
      kubernetes: this.versions.K8S_VERSION,
      etcd: this.versions.ETCD_VERSION,
      containerd: this.versions.CONTAINERD_VERSION,
      coredns: this.versions.COREDNS_VERSION,
      'kube-router': this.versions.KUBE_ROUTER_VERSION,
      'local-path': this.versions.LOCAL_PATH_VERSION,
    }[part];
    return join(this.versions.BERTH_K8S_CACHE, `${part}-${version}`, 'bin', name);
  }

  get volumesDir(): string {
    return join(MACHINE.varLib, 'volumes');
  }
}
