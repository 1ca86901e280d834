// `berth dev-cluster node ls|stop|start`: a worker of a running cluster lost as a crash loses a machine, and brought
// back as a machine that boots again.
import { readClusterState } from './control.js';
import { loadImages } from './images.js';
import { Layout } from './layout.js';
import { nodeCondition } from './api-probe.js';
import { crashWorker, restartWorker } from './node-lifecycle.js';
import { nodeNamed, nodeSpecs, partName, type NodeSpec } from './nodes.js';
import { pidOf } from './processes.js';

function runningCluster(stateDir: string): { layout: Layout; nodes: NodeSpec[] } {
  const state = readClusterState(stateDir);
  const layout = new Layout(stateDir);
  if (!state || pidOf(layout, 'kube-apiserver') === undefined) throw new Error(`no dev cluster runs from ${stateDir}; start one with: berth dev-cluster up`);
  return { layout, nodes: nodeSpecs(state.nodes.length) };
}

function workerNamed(stateDir: string, name: string): { layout: Layout; node: NodeSpec } {
  const { layout, nodes } = runningCluster(stateDir);
  const node = nodeNamed(name, nodes.length);
  if (node.index === 0) {
    throw new Error(
      `node ${name} is this machine's own node, where the control plane and the pods' DNS run; stop a worker (${
        nodes
          .slice(1)
          .map((n) => n.name)
          .join(', ') || 'start the cluster with --nodes 2 to have one'
      })`,
    );
  }
  return { layout, node };
}

const runs = (layout: Layout, node: NodeSpec) => pidOf(layout, partName(node, 'kubelet')) !== undefined;

/** Kills a worker's every process and pod at once and cuts it off; false when it was already down. */
export async function stopNode(stateDir: string, name: string): Promise<boolean> {
  const { layout, node } = workerNamed(stateDir, name);
  const was = runs(layout, node);
  await crashWorker(layout, node);
  return was;
}

/** Brings a stopped worker back and waits until it is Ready; false when it was running. */
export async function startNode(stateDir: string, name: string, progress: (line: string) => void): Promise<boolean> {
  const { layout, node } = workerNamed(stateDir, name);
  if (runs(layout, node)) return false;
  await restartWorker(layout, node, progress);
  return true;
}

export interface NodeRow {
  name: string;
  ip: string;
  podCidr: string;
  running: boolean;
  condition: string;
}

export async function listNodes(stateDir: string): Promise<NodeRow[]> {
  const { layout, nodes } = runningCluster(stateDir);
  return Promise.all(
    nodes.map(async (node) => ({
      name: node.name,
      ip: node.ip,
      podCidr: node.podCidr,
      running: runs(layout, node),
      condition: await nodeCondition(layout, node.name),
    })),
  );
}

/** `berth dev-cluster load`: into every running node, as `kind load` loads into each of its nodes */
export async function loadIntoNodes(stateDir: string, images: string[]): Promise<string[]> {
  const { layout, nodes } = runningCluster(stateDir);
  const up = nodes.filter((node) => pidOf(layout, partName(node, 'containerd')) !== undefined);
  for (const node of up) await loadImages(layout, node, images);
  return up.map((n) => n.name);
}
