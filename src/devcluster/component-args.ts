// The command line of each part of the cluster, as pure functions of the layout. Every server listens on
// loopback or on the node's bridge address, never on the machine's other interfaces.
import { join } from 'node:path';
import { Layout, MACHINE, NET } from './layout.js';
import { inNodeNetwork, nodeConfigFile, type NodeSpec } from './nodes.js';

const SA_ISSUER = `https://kubernetes.default.svc.${NET.clusterDomain}`;

export function etcdArgs(layout: Layout): string[] {
  return [
    layout.bin('etcd', 'etcd'),
    '--name=berth',
    `--data-dir=${join(MACHINE.varLib, 'etcd')}`,
    '--listen-client-urls=http://127.0.0.1:2379',
    '--advertise-client-urls=http://127.0.0.1:2379',
    '--listen-peer-urls=http://127.0.0.1:2380',
    '--initial-advertise-peer-urls=http://127.0.0.1:2380',
    '--initial-cluster=berth=http://127.0.0.1:2380',
    '--listen-metrics-urls=http://127.0.0.1:2381',
    // a throwaway cluster: durability is not worth a disk flush per write
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

export function apiserverArgs(layout: Layout, featureGates: string[]): string[] {
  const pki = (f: string) => join(layout.pki, f);
  return [
    layout.bin('kubernetes', 'kube-apiserver'),
    '--etcd-servers=http://127.0.0.1:2379',
    `--bind-address=${NET.nodeIp}`,
    `--secure-port=${NET.apiPort}`,
    `--advertise-address=${NET.nodeIp}`,
    `--service-cluster-ip-range=${NET.serviceCidr}`,
    `--tls-cert-file=${pki('apiserver.crt')}`,
    `--tls-private-key-file=${pki('apiserver.key')}`,
    `--client-ca-file=${pki('ca.crt')}`,
    `--token-auth-file=${join(layout.config, 'tokens.csv')}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    '--allow-privileged=true',
    `--service-account-issuer=${SA_ISSUER}`,
    `--service-account-key-file=${pki('sa.pub')}`,
    `--service-account-signing-key-file=${pki('sa.key')}`,
    `--kubelet-client-certificate=${pki('kube-apiserver-kubelet-client.crt')}`,
    `--kubelet-client-key=${pki('kube-apiserver-kubelet-client.key')}`,
    '--kubelet-preferred-address-types=InternalIP',
    '--profiling=false',
    ...(featureGates.length ? [`--feature-gates=${featureGates.join(',')}`] : []),
  ];
}

function kubeconfigFlags(layout: Layout, name: string): string[] {
  const kc = join(layout.config, `${name}.kubeconfig`);
  return [`--kubeconfig=${kc}`, `--authentication-kubeconfig=${kc}`, `--authorization-kubeconfig=${kc}`];
}

export function controllerManagerArgs(layout: Layout): string[] {
  return [
    layout.bin('kubernetes', 'kube-controller-manager'),
    ...kubeconfigFlags(layout, 'kube-controller-manager'),
    '--bind-address=127.0.0.1',
    '--leader-elect=false',
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${join(layout.pki, 'sa.key')}`,
    `--root-ca-file=${join(layout.pki, 'ca.crt')}`,
    `--cluster-signing-cert-file=${join(layout.pki, 'ca.crt')}`,
    `--cluster-signing-key-file=${join(layout.pki, 'ca.key')}`,
    // the node gets a pod range in its Node object, which the policy enforcer reads
    '--allocate-node-cidrs=true',
    `--cluster-cidr=${NET.clusterCidr}`,
    '--node-cidr-mask-size=24',
    `--service-cluster-ip-range=${NET.serviceCidr}`,
    '--profiling=false',
  ];
}

export function schedulerArgs(layout: Layout): string[] {
  return [
    layout.bin('kubernetes', 'kube-scheduler'),
    ...kubeconfigFlags(layout, 'kube-scheduler'),
    '--bind-address=127.0.0.1',
    '--leader-elect=false',
    '--profiling=false',
  ];
}

/**
 * containerd in a mount namespace of its own, with / shared inside it: the kubelet and every container mount there,
 * and all of it is gone with the last process of the node, while this machine's / stays private and untouched. A
 * worker's containerd starts in the worker's network, so the CNI plugins it runs lay the pods' bridge there.
 */
export function containerdArgs(layout: Layout, node: NodeSpec): string[] {
  return [
    ...inNodeNetwork(node),
    'unshare',
    '--mount',
    '--',
    'sh',
    '-c',
    'mount --make-rshared / && exec "$0" "$@"',
    layout.bin('containerd', 'containerd'),
    `--config=${join(layout.config, nodeConfigFile(node, 'containerd.toml'))}`,
  ];
}

/** the kubelet in its containerd's mount namespace and network */
export function kubeletArgs(layout: Layout, node: NodeSpec, containerdPid: number): string[] {
  return [
    'nsenter',
    `--mount=/proc/${containerdPid}/ns/mnt`,
    ...(node.netns ? [`--net=/proc/${containerdPid}/ns/net`] : []),
    '--',
    layout.bin('kubernetes', 'kubelet'),
    `--config=${join(layout.config, nodeConfigFile(node, 'kubelet.yaml'))}`,
    `--kubeconfig=${join(layout.config, nodeConfigFile(node, 'kubelet.kubeconfig'))}`,
    `--root-dir=${join(node.varLib, 'kubelet')}`,
    `--cert-dir=${join(node.varLib, 'kubelet', 'pki')}`,
    `--hostname-override=${node.name}`,
    `--node-ip=${node.ip}`,
  ];
}

export function kubeProxyArgs(layout: Layout, node: NodeSpec): string[] {
  return [...inNodeNetwork(node), layout.bin('kubernetes', 'kube-proxy'), `--config=${join(layout.config, nodeConfigFile(node, 'kube-proxy.yaml'))}`];
}
