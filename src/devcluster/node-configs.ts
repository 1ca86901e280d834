// The node's configuration files, as pure functions of the layout: containerd, the CNI network, the kubelet and
// kube-proxy. Settings follow kind's node where this machine allows (cgroup v1, no systemd, no registry).
import { join } from 'node:path';
import { stringify } from 'yaml';
import { Layout, MACHINE, NET } from './layout.js';
import { cniConfDir, containerdSocket, registryHostsDir, type NodeSpec } from './nodes.js';

export interface KubeletOptions {
  /** KEP-3288 split log streams: alpha in 1.36, off on a stock cluster */
  splitLogStreams: boolean;
  /** containerLogMaxSize, bytes */
  containerLogMaxBytes: number;
  /** containerLogMonitorInterval, ms (the kubelet refuses less than 3 s) */
  containerLogCheckMs: number;
}

export function containerdConfig(layout: Layout, node: NodeSpec, runtimeBinary = '/usr/sbin/runc'): string {
  const cri = `plugins.'io.containerd.cri.v1`;
  return [
    'version = 3',
    `root = '${join(node.varLib, 'containerd')}'`,
    `state = '${join(node.run, 'containerd')}'`,
    '[grpc]',
    `  address = '${containerdSocket(node)}'`,
    `[plugins.'io.containerd.internal.v1.opt']`,
    `  path = '${join(node.varLib, 'opt')}'`,
    // NRI would create a socket under /var/run/nri that nothing here uses
    `[plugins.'io.containerd.nri.v1.nri']`,
    '  disable = true',
    // without a registry a pause image deleted by image GC never comes back
    `[${cri}.images'.pinned_images]`,
    `  sandbox = '${layout.versions.PAUSE_TAG}'`,
    // the dev cluster's registry (registry.ts) is plain HTTP: its hosts.toml says so
    `[${cri}.images'.registry]`,
    `  config_path = '${registryHostsDir(node)}'`,
    `[${cri}.runtime']`,
    // these machines give root no CAP_SYS_RESOURCE: an oom_score_adj below containerd's own (the kubelet asks -998 for
    // the pause container) fails in runc with "can't get final child's PID"; clamp it, as rootless containerd does
    '  restrict_oom_score_adj = true',
    `[${cri}.runtime'.containerd.runtimes.runc]`,
    `  runtime_type = 'io.containerd.runc.v2'`,
    `[${cri}.runtime'.containerd.runtimes.runc.options]`,
    '  SystemdCgroup = false',
    `  BinaryName = '${runtimeBinary}'`,
    `  Root = '${join(node.run, 'runc')}'`,
    `[${cri}.runtime'.cni]`,
    `  bin_dirs = ['/usr/lib/cni']`,
    `  conf_dir = '${cniConfDir(node)}'`,
    '',
  ].join('\n');
}

export function cniConflist(node: NodeSpec): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: MACHINE.cniNetworkName,
      plugins: [
        {
          type: 'bridge',
          bridge: NET.bridge,
          isGateway: true,
          // pods only talk to each other and to this machine: no NAT, so NetworkPolicy sees pod addresses
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: node.podCidr, gateway: node.gateway }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: join(node.varLib, 'cni', 'networks'),
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

export function kubeletConfig(layout: Layout, node: NodeSpec, opts: KubeletOptions): string {
  const seconds = Math.max(3, Math.round(opts.containerLogCheckMs / 1000));
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // the machines are cgroup v1; 1.35+ refuse it unless told
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${node.cgroup}`,
    cgroupsPerQOS: true,
    containerRuntimeEndpoint: `unix://${containerdSocket(node)}`,
    serializeImagePulls: false,
    address: node.ip,
    port: 10250,
    healthzBindAddress: '127.0.0.1',
    readOnlyPort: 0,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: join(layout.pki, 'ca.crt') },
    },
    authorization: { mode: 'Webhook' },
    failSwapOn: false,
    resolvConf: '/etc/resolv.conf',
    clusterDNS: [NET.nodeIp],
    clusterDomain: NET.clusterDomain,
    podLogsDir: join(node.varLib, 'pod-logs'),
    // images come from podman, not a registry: never collect them, never evict for disk
    imageGCHighThresholdPercent: 100,
    evictionHard: { 'nodefs.available': '0%', 'nodefs.inodesFree': '0%', 'imagefs.available': '0%' },
    containerLogMaxSize: String(opts.containerLogMaxBytes),
    containerLogMonitorInterval: `${seconds}s`,
    ...(opts.splitLogStreams ? { featureGates: { PodLogsQuerySplitStreams: true } } : {}),
  });
}

export function kubeProxyConfig(layout: Layout, node: NodeSpec): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'iptables',
    clusterCIDR: NET.clusterCidr,
    hostnameOverride: node.name,
    bindAddress: node.ip,
    metricsBindAddress: '127.0.0.1:10249',
    healthzBindAddress: '127.0.0.1:10256',
    nodePortAddresses: [`${node.ip}/32`],
    clientConnection: { kubeconfig: join(layout.config, 'kube-proxy.kubeconfig') },
    // zeros leave the machine's conntrack sysctls alone, as kind does
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  });
}
