// The dev cluster a bench script measures on: its own, started before and taken down after, with an admin
// client and a namespace `bench` ready.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';

const cli = join(fileURLToPath(new URL('../../', import.meta.url)), 'dist/src/cli/main.js');

export interface BenchCluster {
  stateDir: string;
  kubeconfig: string;
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  /** the namespace the bench works in, created */
  ns: string;
  /** takes the cluster down and removes its state */
  down(): void;
}

export async function startBenchCluster(prefix = 'berth-bench-'): Promise<BenchCluster> {
  const stateDir = mkdtempSync(join(tmpdir(), prefix));
  const down = (): void => {
    spawnSync(process.execPath, [cli, 'dev-cluster', 'down', '--state-dir', stateDir], { stdio: 'inherit' });
    rmSync(stateDir, { recursive: true, force: true });
  };
  const up = spawnSync(process.execPath, [cli, 'dev-cluster', 'up', '--state-dir', stateDir], { stdio: 'inherit' });
  if (up.status !== 0) {
    down();
    throw new Error('dev cluster did not start');
  }
  try {
    const kubeconfig = join(stateDir, 'kubeconfig');
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const ns = 'bench';
    await core.createNamespace({ body: { metadata: { name: ns } } });
    return { stateDir, kubeconfig, kc, core, ns, down };
  } catch (err) {
    down();
    throw err;
  }
}
