// The nodes of the dev cluster, as pure data. The first node is this machine's own network: its pods on a bridge
// here, the control plane beside them. Each further node (`up --nodes N`) is a machine of its own as far as the pods
// can tell: its own network namespace, address and pod range, its own containerd, kubelet, kube-proxy and policy
// enforcer, its own folders and cgroup; this machine routes between the nodes as a switch between machines would.
import { join } from 'node:path';
import { MACHINE, NET } from './layout.js';

export const MAX_NODES = 3;

/** the network the nodes share: this machine on a bridge, each further node behind a veth pair on it */
export const NODE_NET = {
  bridge: 'berth-nodes',
  hostIp: '10.243.0.1',
  prefix: 24,
} as const;

export interface NodeSpec {
  name: string;
  /** 0 for the first node (this machine's network), 1 and 2 for the workers */
  index: number;
  /** InternalIP: where kube-apiserver reaches the node's kubelet */
  ip: string;
  /** the pods' range, set on the Node object before the kubelet registers, so the CNI network and the Node agree */
  podCidr: string;
  /** the pods' gateway: the CNI bridge's address in the node's network */
  gateway: string;
  /** the node's network namespace (`ip netns`); none for the first, which uses this machine's */
  netns?: string;
  /** this machine's end of the node's veth pair */
  hostLink?: string;
  /** what the node keeps on disk and in /run; a crash loses /run, as a reboot would */
  varLib: string;
  run: string;
  /** the node's cgroup below each hierarchy's root: the kubelet's cgroupRoot, and the runtime's parent */
  cgroup: string;
}

/** kind's names: the first node, then berth-worker, berth-worker2 */
export function nodeName(index: number): string {
  return index === 0 ? NET.nodeName : `${NET.nodeName}-worker${index === 1 ? '' : index}`;
}

export function nodeSpec(index: number): NodeSpec {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_NODES) throw new Error(`dev-cluster: a cluster has 1 to ${MAX_NODES} nodes`);
  const podCidr = `10.244.${index}.0/24`;
  const gateway = `10.244.${index}.1`;
  if (index === 0)
    return {
      name: NET.nodeName,
      index,
      ip: NET.nodeIp,
      podCidr: NET.podCidr,
      gateway: NET.nodeIp,
      varLib: MACHINE.varLib,
      run: MACHINE.run,
      cgroup: MACHINE.cgroupRoot,
    };
  const name = nodeName(index);
  return {
    name,
    index,
    ip: `10.243.0.${index + 1}`,
    podCidr,
    gateway,
    netns: name,
    hostLink: `berth-n${index}`,
    varLib: join(MACHINE.varLib, 'nodes', name),
    run: join(MACHINE.run, 'nodes', name),
    cgroup: join(MACHINE.cgroupRoot, 'nodes', name),
  };
}

export function nodeSpecs(count: number): NodeSpec[] {
  if (!Number.isInteger(count) || count < 1 || count > MAX_NODES) throw new Error(`--nodes must be a whole number from 1 to ${MAX_NODES}, got ${count}`);
  return Array.from({ length: count }, (_, i) => nodeSpec(i));
}

/** The node of this name among the first `count`, or an error listing the names there are. */
export function nodeNamed(name: string, count: number): NodeSpec {
  const nodes = nodeSpecs(count);
  const node = nodes.find((n) => n.name === name);
  if (!node) throw new Error(`no node "${name}" in the dev cluster; its nodes: ${nodes.map((n) => n.name).join(', ')}`);
  return node;
}

/** a part's name in pids/ and logs/: the first node's keep their plain names (kubelet), a worker's carry its name */
export function partName(node: NodeSpec, part: NodePart): string {
  return node.index === 0 ? part : `${node.name}.${part}`;
}

/** the parts each node runs, in start order */
export const NODE_PARTS = ['containerd', 'kubelet', 'kube-proxy', 'kube-router'] as const;
export type NodePart = (typeof NODE_PARTS)[number];

export const containerdSocket = (node: NodeSpec): string => join(node.run, 'containerd.sock');
export const cniConfDir = (node: NodeSpec): string => join(node.varLib, 'cni', 'net.d');
/** containerd's config_path: a folder per registry host, each with the hosts.toml that says how to reach it */
export const registryHostsDir = (node: NodeSpec): string => join(node.varLib, 'containerd-hosts');

/** the node's own files in the state dir's config folder: the first node's keep their plain names */
export function nodeConfigFile(
  node: NodeSpec,
  file: 'kubelet.yaml' | 'kubelet-options.json' | 'kubelet.kubeconfig' | 'containerd.toml' | 'kube-proxy.yaml',
): string {
  return node.index === 0 ? file : `${node.name}.${file}`;
}

/** argv prefix that runs a command in the node's network (nothing for the first node) */
export function inNodeNetwork(node: NodeSpec): string[] {
  return node.netns ? ['nsenter', `--net=/run/netns/${node.netns}`, '--'] : [];
}
