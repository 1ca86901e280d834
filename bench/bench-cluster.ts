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

const BENCH_IMAGES = ['localhost/berth/busybox:1', 'localhost/berth/krm-echo:1', 'localhost/berth/krm-set-annotations:1'];

/**
 * `berth dev-cluster up` of the bench's cluster in stateDir: with split log streams (berth's exact path, which the
 * serve bench's separate stdout and stderr need) and the bench images loaded into its node.
 */
export function devClusterUp(stateDir: string, env: NodeJS.ProcessEnv = process.env, extra: string[] = []): ReturnType<typeof spawnSync> {
  return spawnSync(process.execPath, [cli, 'dev-cluster', 'up', '--state-dir', stateDir, '--split-log-streams', ...extra, '--load', ...BENCH_IMAGES], {
    stdio: 'inherit',
    env,
  });
}

/** extra: more options of `dev-cluster up` (--nodes 2, --users FILE) */
export async function startBenchCluster(prefix = 'berth-bench-', extra: string[] = []): Promise<BenchCluster> {
  const stateDir = mkdtempSync(join(tmpdir(), prefix));
  const down = (): void => {
    spawnSync(process.execPath, [cli, 'dev-cluster', 'down', '--state-dir', stateDir], { stdio: 'inherit' });
    rmSync(stateDir, { recursive: true, force: true });
  };
  const up = devClusterUp(stateDir, process.env, extra);
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
