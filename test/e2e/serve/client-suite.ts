// What the wrappers of the testcontainers suites of other ecosystems share (testcontainers-{java,python,go}.test.ts):
// each runs a client's own test runner once against podman and once against berth serve, in the environment its users
// would give it, and holds berth to every test podman passes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { BUSYBOX, freshNamespace, repoRoot, servesSplitLogs } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import { type DockerEngine, startBerth, startPodman, stopAndCheckLeftovers } from './serve-env.js';

export type Outcome = 'PASSED' | 'FAILED' | 'SKIPPED';
export type EngineKind = 'podman' | 'berth';
/** Both, unless BERTH_ENGINES names some (`BERTH_ENGINES=podman`: a client tried where no dev cluster runs). */
export const ENGINES = (process.env.BERTH_ENGINES?.split(',') ?? ['podman', 'berth']) as EngineKind[];

/**
 * The engine of one describe block, started before its tests and stopped after them: what the suite left under its
 * label (reused containers outlive their session by design; a failed run leaves more) is removed first, and berth's
 * leftovers are checked. `suite` is the label value every container and network of the run carries.
 */
export function useEngine(
  kind: EngineKind,
  id: string,
  opts: { beforeStop?: (engine: DockerEngine) => Promise<void> } = {},
): { engine: () => DockerEngine; suite: string } {
  let engine: DockerEngine | undefined;
  let namespace = '';
  const instance = `${id}${process.pid}`;
  const suite = `${id}-${kind}-${process.pid}`;
  before(async () => {
    if (kind === 'berth') {
      namespace = await freshNamespace(`serve-${id}`);
      engine = await startBerth(namespace, instance);
    } else engine = await startPodman();
  });
  after(async () => {
    if (!engine) return;
    // what the suite made without its label (a compose project's), removed the suite's own way
    await opts.beforeStop?.(engine);
    const left = await engine.docker(['ps', '-aq', '--filter', `label=suite=${suite}`]);
    for (const id of left.stdout.split('\n').filter(Boolean)) await engine.docker(['rm', '-f', id]);
    const nets = await engine.docker(['network', 'ls', '-q', '--filter', `label=suite=${suite}`]);
    for (const id of nets.stdout.split('\n').filter(Boolean)) await engine.docker(['network', 'rm', id]);
    await stopAndCheckLeftovers(engine, namespace, instance);
  });
  return {
    engine: () => {
      if (!engine) throw new Error(`the ${kind} engine did not start`);
      return engine;
    },
    suite,
  };
}

/** What scripts/clients/<name>.sh prints: the client's interpreter, repository or test binary (it installs first when needed). */
export function clientTool(script: 'python' | 'java' | 'go' | 'docker'): string {
  const r = spawnSync('bash', [join(repoRoot, `scripts/clients/${script}.sh`)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`scripts/clients/${script}.sh failed (exit ${r.status}): the ${script} clients are not installed`);
  return r.stdout.trim();
}

/** The environment a testcontainers suite runs in against one engine. */
export function suiteEnv(kind: EngineKind, socket: string, suite: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DOCKER_HOST: `unix://${socket}`,
    BERTH_TC_ENGINE: kind,
    BERTH_TC_IMAGE: BUSYBOX,
    BERTH_TC_SUITE: suite,
    BERTH_TC_SPLIT_LOGS: servesSplitLogs() ? '1' : '0',
    // podman has no Ryuk image without a registry; berth plays Ryuk itself
    TESTCONTAINERS_RYUK_DISABLED: kind === 'podman' ? 'true' : 'false',
    // published ports are on this machine's loopback; in a container (this machine has /.dockerenv) testcontainers
    // would otherwise look for the network's gateway
    TESTCONTAINERS_HOST_OVERRIDE: 'localhost',
  };
}

/** Prints the two engines' outcomes side by side and fails for each test podman passed and berth did not. */
export function compareOutcomes(client: string, results: Partial<Record<EngineKind, Record<string, Outcome>>>): void {
  const names = [...new Set([...Object.keys(results.podman ?? {}), ...Object.keys(results.berth ?? {})])];
  console.log([`${client}: test | podman | berth`, ...names.map((n) => `  ${n} | ${results.podman?.[n] ?? '-'} | ${results.berth?.[n] ?? '-'}`)].join('\n'));
  assert.ok(names.length > 0, `${client}: no test ran on either engine`);
  for (const n of names) if (results.podman?.[n] === 'PASSED') assert.equal(results.berth?.[n], 'PASSED', `${client}: ${n} passes on podman, not on berth`);
}

/**
 * After the client's run has ended (its process, so its session, is gone): Ryuk removes the container the session left
 * running on purpose, labelled left-for-ryuk=<suite>. podman has no Ryuk image here (no registry to pull it from).
 */
export function ryukCleanupTest(kind: EngineKind, engine: () => DockerEngine, suite: string): void {
  test('once the session has ended, Ryuk removes the container it left running', { skip: kind === 'podman' && 'podman has no Ryuk image here' }, async () => {
    const left = async () => (await engine().dockerOk(['ps', '-aq', '--filter', `label=left-for-ryuk=${suite}`])).trim();
    await eventually('the left container removed', async () => (await left()) === '', { timeoutMs: 90_000, intervalMs: 1000 });
  });
}
