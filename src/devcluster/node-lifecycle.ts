// One node's life: its containerd, kubelet, kube-proxy and policy enforcer started in order and waited for; stopped
// in reverse, either gracefully (`down`) or all at once with its pods, as a machine that lost power (`node stop`).
import { existsSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { kubeRouterArgs } from './addons.js';
import { nodeReady } from './api-probe.js';
import { containerdArgs, kubeletArgs, kubeProxyArgs } from './component-args.js';
import { killCgroupTree, moveToCgroup } from './host.js';
import { ensurePauseImage, loadImages } from './images.js';
import type { Layout } from './layout.js';
import { cutNode, reconnectNode, wireNode } from './node-network.js';
import { containerdSocket, NODE_PARTS, partName, type NodeSpec } from './nodes.js';
import { killProcess, startProcess, stopProcess, waitUntil } from './processes.js';

/**
 * A worker's Node object, made before its kubelet registers so that it carries the pod range the worker's CNI network
 * uses (the controller-manager would otherwise pick one; it skips ranges a Node already has).
 */
function declareWorker(layout: Layout, node: NodeSpec): void {
  const kubectl = layout.bin('kubernetes', 'kubectl');
  const yaml = JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: node.name }, spec: { podCIDR: node.podCidr, podCIDRs: [node.podCidr] } });
  const r = spawnSync(kubectl, ['--kubeconfig', join(layout.config, 'admin.kubeconfig'), 'apply', '--server-side', '-f', '-'], {
    input: yaml,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`dev-cluster: declaring node ${node.name} failed:\n${r.stderr}`);
}

async function startRuntime(layout: Layout, node: NodeSpec): Promise<number> {
  const containerd = startProcess(layout, partName(node, 'containerd'), containerdArgs(layout, node));
  // its shims inherit the cgroup, so stopping the node finds every process of it in one tree
  moveToCgroup(containerd, node.cgroup, 'runtime');
  await waitUntil(layout, partName(node, 'containerd'), `containerd of node ${node.name}`, async () => existsSync(containerdSocket(node)), 30_000);
  return containerd;
}

async function startKubelet(layout: Layout, node: NodeSpec, containerd: number): Promise<void> {
  startProcess(layout, partName(node, 'kubelet'), kubeletArgs(layout, node, containerd));
  await waitUntil(layout, partName(node, 'kubelet'), `node ${node.name} Ready`, () => nodeReady(layout, node.name), 120_000, 500);
}

/** The first node: this machine's network, started before the add-ons (which start its kube-proxy and enforcer). */
export async function startFirstNode(layout: Layout, node: NodeSpec, images: string[], progress: (line: string) => void): Promise<void> {
  const containerd = await startRuntime(layout, node);
  progress('containerd ready; loading images');
  ensurePauseImage(layout.versions.PAUSE_TAG);
  await loadImages(layout, node, [layout.versions.PAUSE_TAG, ...images]);
  await startKubelet(layout, node, containerd);
  progress(`node ${node.name} Ready`);
}

/** A worker: its network, its Node object, its runtime with the images, its kubelet, kube-proxy and enforcer. */
export async function startWorker(layout: Layout, node: NodeSpec, images: string[], progress: (line: string) => void): Promise<void> {
  wireNode(node);
  declareWorker(layout, node);
  const containerd = await startRuntime(layout, node);
  await loadImages(layout, node, [layout.versions.PAUSE_TAG, ...images]);
  await startWorkerParts(layout, node, containerd, progress);
}

/** Starts a worker that `node stop` took down: plugged back in, its runtime and kubelet again, its images kept. */
export async function restartWorker(layout: Layout, node: NodeSpec, progress: (line: string) => void): Promise<void> {
  reconnectNode(node);
  // its Node object may have been deleted while it was away (kubectl delete node): it comes back with the same pod range
  declareWorker(layout, node);
  await startWorkerParts(layout, node, await startRuntime(layout, node), progress);
}

/** A worker's kubelet, waited for, then its kube-proxy and policy enforcer (the first node's are add-ons). */
async function startWorkerParts(layout: Layout, node: NodeSpec, containerd: number, progress: (line: string) => void): Promise<void> {
  await startKubelet(layout, node, containerd);
  startProcess(layout, partName(node, 'kube-proxy'), kubeProxyArgs(layout, node));
  startProcess(layout, partName(node, 'kube-router'), kubeRouterArgs(layout, node));
  progress(`node ${node.name} Ready`);
}

/** Stops a worker's parts gracefully, last started first. */
export async function stopWorker(layout: Layout, node: NodeSpec): Promise<void> {
  for (const part of [...NODE_PARTS].reverse()) await stopProcess(layout, partName(node, part), part === 'kubelet' || part === 'containerd' ? 5_000 : 10_000);
}

/**
 * A worker lost as a machine that lost power is: every process of it killed at once (its pods too), its address
 * gone from the network, its /run emptied. The API server learns of it only as a real one would, when the kubelet's
 * heartbeats stop.
 */
export async function crashWorker(layout: Layout, node: NodeSpec): Promise<void> {
  cutNode(node);
  await Promise.all(NODE_PARTS.map((part) => killProcess(layout, partName(node, part))));
  await killCgroupTree(node.cgroup);
  rmSync(node.run, { recursive: true, force: true });
}
