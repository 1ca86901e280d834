// The wires between the nodes: a bridge on this machine that every worker's veth pair plugs into, a route here to
// each worker's pod range, and in each worker's network namespace its address, a default route back here and IP
// forwarding on. Pods on different nodes reach each other by their addresses, with no NAT, as on a flat pod network.
import { execFileSync, spawnSync } from 'node:child_process';
import { NODE_NET, type NodeSpec } from './nodes.js';

function run(args: string[]): void {
  try {
    execFileSync(args[0]!, args.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? '').trim();
    throw new Error(`dev-cluster: \`${args.join(' ')}\` failed: ${stderr || (err as Error).message}`, { cause: err });
  }
}

const ok = (args: string[]) => spawnSync(args[0]!, args.slice(1), { stdio: 'ignore' }).status === 0;

function ensureNodesBridge(): void {
  if (!ok(['ip', 'link', 'show', NODE_NET.bridge])) {
    run(['ip', 'link', 'add', NODE_NET.bridge, 'type', 'bridge']);
    run(['ip', 'addr', 'add', `${NODE_NET.hostIp}/${NODE_NET.prefix}`, 'dev', NODE_NET.bridge]);
  }
  run(['ip', 'link', 'set', NODE_NET.bridge, 'up']);
}

/** Makes a worker's network namespace and its wire to this machine; a namespace left from before is made anew. */
export function wireNode(node: NodeSpec): void {
  if (!node.netns || !node.hostLink) return;
  ensureNodesBridge();
  unwireNode(node);
  const inNs = (args: string[]) => run(['ip', '-n', node.netns!, ...args]);
  run(['ip', 'netns', 'add', node.netns]);
  run(['ip', 'link', 'add', node.hostLink, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', node.netns]);
  run(['ip', 'link', 'set', node.hostLink, 'master', NODE_NET.bridge, 'up']);
  inNs(['link', 'set', 'lo', 'up']);
  inNs(['addr', 'add', `${node.ip}/${NODE_NET.prefix}`, 'dev', 'eth0']);
  inNs(['link', 'set', 'eth0', 'up']);
  inNs(['route', 'add', 'default', 'via', NODE_NET.hostIp]);
  // the worker forwards between its pods' bridge and its wire, as a node does
  run(['ip', 'netns', 'exec', node.netns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
  run(['ip', 'route', 'replace', node.podCidr, 'via', node.ip]);
}

/** Cuts a worker off the network, as a machine that lost power is: its address no longer answers. */
export function cutNode(node: NodeSpec): void {
  if (node.hostLink && ok(['ip', 'link', 'show', node.hostLink])) run(['ip', 'link', 'set', node.hostLink, 'down']);
}

/** Plugs a cut worker back in. */
export function reconnectNode(node: NodeSpec): void {
  if (!node.hostLink) return;
  run(['ip', 'link', 'set', node.hostLink, 'up']);
  run(['ip', 'route', 'replace', node.podCidr, 'via', node.ip]);
}

/** Removes a worker's namespace (its veth pair, routes and iptables go with it). Idempotent. */
export function unwireNode(node: NodeSpec): void {
  if (!node.netns) return;
  if (ok(['ip', 'netns', 'pids', node.netns])) spawnSync('ip', ['netns', 'del', node.netns], { stdio: 'ignore' });
  if (node.hostLink && ok(['ip', 'link', 'show', node.hostLink])) spawnSync('ip', ['link', 'del', node.hostLink], { stdio: 'ignore' });
  spawnSync('ip', ['route', 'del', node.podCidr], { stdio: 'ignore' });
}

/** Removes the bridge between the nodes, once no worker is left. */
export function removeNodesBridge(): void {
  if (ok(['ip', 'link', 'show', NODE_NET.bridge])) spawnSync('ip', ['link', 'del', NODE_NET.bridge], { stdio: 'ignore' });
}
