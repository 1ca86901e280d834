// The dev cluster as `berth dev-cluster` shows it: up starts it and writes the kubeconfig and state.json in the state
// folder, where status, kubeconfig --user, down and the tests find them.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_NAME, renderKubeconfig } from './kubeconfig.js';
import { loadUsersFile } from './users-file.js';
import { apiGet, apiServerUrl } from './api-probe.js';
import { startParts, stopParts, type PartsOptions } from './cluster.js';
import { tokenUsers } from './identities.js';
import type { Faults } from './faults/faults.js';
import { Layout } from './layout.js';
import { nodeSpec, nodeSpecs } from './nodes.js';
import { pidOf, startProcess, stopProcess, waitUntil } from './processes.js';
import { REGISTRY_ADDRESS } from './registry.js';

export interface ClusterState {
  kind: 'upstream';
  /** the fault proxy's pid: the process a client's kubeconfig depends on */
  pid: number;
  server: string;
  apiServer: string;
  clusterId: string;
  kubeconfig: string;
  startedAt: string;
  version: string;
  /** the nodes' names, the first node first */
  nodes: string[];
  /** host:port of the registry every node and pod pulls from over plain HTTP (registry.ts) */
  registry: string;
}

const stateFile = (stateDir: string) => join(stateDir, 'state.json');

export function readClusterState(stateDir: string): ClusterState | undefined {
  try {
    const s = JSON.parse(readFileSync(stateFile(stateDir), 'utf8'));
    return s.kind === 'upstream' ? { nodes: [nodeSpec(0).name], ...s } : undefined;
  } catch {
    return undefined;
  }
}

export interface UpOptions extends PartsOptions {
  proxyHost: string;
  proxyPort: number;
  /** argv that runs `berth dev-cluster fault-proxy` (the CLI knows where berth is) */
  faultProxyCommand: string[];
  /** fault switches set from the start, as a PUT to the faults endpoint would set them */
  faults?: Partial<Faults>;
}

async function startFaultProxy(layout: Layout, opts: UpOptions): Promise<string> {
  const portFile = join(layout.stateDir, 'proxy.port');
  rmSync(portFile, { force: true });
  startProcess(layout, 'fault-proxy', [
    ...opts.faultProxyCommand,
    '--state-dir',
    layout.stateDir,
    '--host',
    opts.proxyHost,
    '--port',
    String(opts.proxyPort),
    ...(opts.faults ? ['--faults', JSON.stringify(opts.faults)] : []),
  ]);
  await waitUntil(layout, 'fault-proxy', 'the fault proxy listening', async () => existsSync(portFile), 20_000, 100);
  const host = opts.proxyHost.includes(':') ? `[${opts.proxyHost}]` : opts.proxyHost;
  return `https://${host}:${readFileSync(portFile, 'utf8').trim()}`;
}

export async function upCluster(stateDir: string, opts: UpOptions): Promise<ClusterState> {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const layout = new Layout(stateDir);
  await stopProcess(layout, 'fault-proxy');
  await startParts(layout, opts);
  const server = await startFaultProxy(layout, opts);
  const users = tokenUsers(layout.pki, opts.usersFile ? loadUsersFile(opts.usersFile) : []);
  const ca = readFileSync(join(layout.pki, 'ca.crt'), 'utf8');
  writeFileSync(
    layout.kubeconfig,
    renderKubeconfig({ clusterName: CLUSTER_NAME, server, caPem: ca, users: [users.admin, ...users.users], currentUser: 'admin' }),
    { mode: 0o600 },
  );
  const version = (await apiGet<{ gitVersion: string }>(layout, '/version')).body.gitVersion;
  const state: ClusterState = {
    kind: 'upstream',
    pid: pidOf(layout, 'fault-proxy')!,
    server,
    apiServer: apiServerUrl,
    clusterId: `bdc-${randomBytes(3).toString('hex')}`,
    kubeconfig: layout.kubeconfig,
    startedAt: new Date().toISOString(),
    version,
    nodes: nodeSpecs(opts.nodes).map((n) => n.name),
    registry: REGISTRY_ADDRESS,
  };
  writeFileSync(stateFile(stateDir), JSON.stringify(state, null, 2));
  // the CA at the state folder's top, where a client that trusts the cluster's server certificate finds it
  writeFileSync(join(stateDir, 'ca.crt'), ca);
  return state;
}

export async function downCluster(stateDir: string): Promise<boolean> {
  const layout = new Layout(stateDir);
  const had = existsSync(stateFile(stateDir)) || existsSync(layout.pids);
  await stopProcess(layout, 'fault-proxy');
  await stopParts(layout);
  rmSync(stateFile(stateDir), { force: true });
  return had;
}
