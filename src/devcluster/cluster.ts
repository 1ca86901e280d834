// `berth dev-cluster up|down`: starts etcd, the control plane, the first node (containerd and the kubelet), kube-proxy
// and the add-ons, then the workers, in order, each waited for; and takes all of it down again leaving nothing on this
// machine.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadUsersFile, type UserSpec } from './users-file.js';
import { corednsArgs, kubeRouterArgs, kubeRouterCleanupArgs, localPathArgs, localPathConfigMap } from './addons.js';
import { apiGet, exists } from './api-probe.js';
import { clusterObjects, toYamlStream } from './bootstrap-objects.js';
import { apiserverArgs, controllerManagerArgs, etcdArgs, kubeProxyArgs, schedulerArgs } from './component-args.js';
import { writeConfigFiles } from './config-files.js';
import { claimMachine, killCgroupTree, otherOwner, prepareHost, removeHostState } from './host.js';
import { Layout } from './layout.js';
import type { KubeletOptions } from './node-configs.js';
import { startFirstNode, startWorker, stopWorker } from './node-lifecycle.js';
import { unwireNode } from './node-network.js';
import { MAX_NODES, nodeSpecs, type NodeSpec } from './nodes.js';
import { ensurePki } from './pki.js';
import { startProcess, stopProcess, waitUntil } from './processes.js';
import { setPodStartDelay, writeRuncWrapper } from './faults/runc-delay.js';
import { REGISTRY_ADDRESS, registryArgs } from './registry.js';

export interface PartsOptions {
  usersFile?: string;
  /** 1 to MAX_NODES: this machine's node, then workers each in a network of its own */
  nodes: number;
  kubelet: KubeletOptions;
  /** images (in podman) put into the node before `up` returns */
  images: string[];
  /** berth's own image for the provisioner's helper pods */
  helperImage: string;
  progress: (line: string) => void;
}

/** every long-running part of the control plane and the first node, in start order; `down` stops them in reverse */
export const PARTS = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'containerd',
  'kubelet',
  'kube-proxy',
  'coredns',
  'kube-router',
  'local-path-provisioner',
  'registry',
] as const;

function kubectlApply(layout: Layout, yaml: string): void {
  const r = spawnSync(
    layout.bin('kubernetes', 'kubectl'),
    ['--kubeconfig', join(layout.config, 'admin.kubeconfig'), 'apply', '--server-side', '--force-conflicts', '-f', '-'],
    { input: yaml, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`dev-cluster: applying the cluster's own objects failed:\n${r.stderr}`);
}

async function startControlPlane(layout: Layout, opts: PartsOptions, users: UserSpec[]): Promise<void> {
  startProcess(layout, 'etcd', etcdArgs(layout));
  await waitUntil(layout, 'etcd', 'etcd answering on 127.0.0.1:2379', async () => (await fetch('http://127.0.0.1:2379/health')).ok, 30_000);
  opts.progress('etcd ready');
  startProcess(layout, 'kube-apiserver', apiserverArgs(layout, opts.kubelet.splitLogStreams ? ['PodLogsQuerySplitStreams=true'] : []));
  await waitUntil(layout, 'kube-apiserver', 'kube-apiserver /readyz', async () => (await apiGet(layout, '/readyz')).code === 200, 90_000);
  opts.progress('kube-apiserver ready');
  kubectlApply(layout, toYamlStream([...clusterObjects(users), localPathConfigMap(layout, opts.helperImage)]));
  startProcess(layout, 'kube-controller-manager', controllerManagerArgs(layout));
  startProcess(layout, 'kube-scheduler', schedulerArgs(layout));
}

function startAddons(layout: Layout, opts: PartsOptions, first: NodeSpec): void {
  startProcess(layout, 'kube-proxy', kubeProxyArgs(layout, first));
  startProcess(layout, 'coredns', corednsArgs(layout));
  startProcess(layout, 'kube-router', kubeRouterArgs(layout, first));
  startProcess(layout, 'local-path-provisioner', localPathArgs(layout, opts.helperImage));
}

async function startRegistry(layout: Layout, opts: PartsOptions): Promise<void> {
  startProcess(layout, 'registry', registryArgs(join(layout.config, 'registry.yml')));
  await waitUntil(layout, 'registry', `the registry answering on ${REGISTRY_ADDRESS}`, async () => (await fetch(`http://${REGISTRY_ADDRESS}/v2/`)).ok, 30_000);
  opts.progress(`registry ready on ${REGISTRY_ADDRESS}`);
}

export async function startParts(layout: Layout, opts: PartsOptions): Promise<void> {
  const users = opts.usersFile ? loadUsersFile(opts.usersFile) : [];
  const other = otherOwner(layout);
  if (other)
    throw new Error(
      `dev-cluster: the dev cluster of ${other} runs on this machine (one per machine: the bridge, ports and cgroups are the machine's); stop it first: berth dev-cluster down --state-dir ${other}`,
    );
  await stopParts(layout);
  claimMachine(layout);
  const pki = ensurePki(layout.pki);
  const nodes = nodeSpecs(opts.nodes);
  writeConfigFiles(layout, pki, users, opts.kubelet, nodes);
  prepareHost();
  await startControlPlane(layout, opts, users);
  writeRuncWrapper();
  setPodStartDelay(0);
  const [first, ...workers] = nodes;
  await startFirstNode(layout, first!, opts.images, opts.progress);
  startAddons(layout, opts, first!);
  await startRegistry(layout, opts);
  for (const worker of workers) await startWorker(layout, worker, opts.images, opts.progress);
  // pods can only be created once the default ServiceAccount exists
  await waitUntil(
    layout,
    'kube-controller-manager',
    'serviceaccount default/default',
    () => exists(layout, '/api/v1/namespaces/default/serviceaccounts/default'),
    60_000,
    250,
  );
  opts.progress('cluster ready');
}

/** Stops every part, kills what is left in the node's cgroup and removes the node's state. Idempotent. */
export async function stopParts(layout: Layout): Promise<void> {
  // another state dir's cluster is not this one's to take down: only this dir's own processes stop
  const other = otherOwner(layout);
  const workers = nodeSpecs(MAX_NODES).slice(1);
  for (const worker of workers) await stopWorker(layout, worker);
  for (const part of [...PARTS].reverse()) await stopProcess(layout, part, part === 'kubelet' || part === 'containerd' ? 5_000 : 10_000);
  if (other) return;
  await killCgroupTree();
  for (const worker of workers) unwireNode(worker);
  const proxy = layout.bin('kubernetes', 'kube-proxy');
  if (existsSync(proxy)) spawnSync(proxy, ['--cleanup'], { stdio: 'ignore' });
  const router = kubeRouterCleanupArgs(layout);
  if (existsSync(router[0]!)) spawnSync(router[0]!, router.slice(1), { stdio: 'ignore' });
  removeHostState();
}
