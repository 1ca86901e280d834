// testcontainers-node (GenericContainer) against berth serve and against podman's service, each in a child
// process (testcontainers keeps its client per process): exposed ports with the default wait, log and
// healthcheck waits, exec, files copied before start, restart, stop, network aliases; Ryuk on and off.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { freshNamespace, repoRoot, runCommand } from '../harness/cluster.js';
import { type DockerEngine, startBerth, startPodman, stopAndCheckLeftovers } from './serve-env.js';

const scenario = join(repoRoot, 'dist/test/e2e/serve/tc-scenario.js');

interface Step {
  ok: boolean;
  value?: unknown;
  error?: string;
}

async function runScenario(engine: DockerEngine, env: Record<string, string>): Promise<Record<string, Step>> {
  const r = await runCommand(process.execPath, [scenario], { env: { ...process.env, DOCKER_HOST: engine.dockerHost, ...env }, timeoutMs: 240_000 });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as Record<string, Step>;
}

function assertSteps(results: Record<string, Step>, skipHealth: boolean): void {
  const failed = Object.entries(results).filter(([, s]) => !s.ok);
  assert.deepEqual(failed, [], 'every step passes');
  assert.equal(results.exposedPortsDefaultWait.value, 'served\n');
  if (!skipHealth) assert.equal(results.healthcheckWait.value, 0);
  assert.deepEqual(results.execCopyRestartStop.value, { exitCode: 3, stdout: 'out\n', stderr: 'err\n', afterRestart: 0 });
}

describe('testcontainers-node against podman (reference)', () => {
  let engine: DockerEngine;
  before(async () => (engine = await startPodman()));
  after(async () => engine.stop());
  // podman 4.3 here runs no healthchecks (no systemd) and cannot pull the Ryuk image: both known deviations.
  test('GenericContainer lifecycle, Ryuk disabled', async () => {
    assertSteps(await runScenario(engine, { TESTCONTAINERS_RYUK_DISABLED: 'true', TC_SKIP_HEALTH: '1' }), true);
  });
});

describe('testcontainers-node against berth serve', () => {
  let engine: DockerEngine;
  let namespace = '';
  const instance = `tc${process.pid}`;
  before(async () => {
    namespace = await freshNamespace('serve-tc');
    engine = await startBerth(namespace, instance);
  });
  after(() => stopAndCheckLeftovers(engine, namespace, instance));

  test('GenericContainer lifecycle, Ryuk disabled (healthcheck run by berth)', async () => {
    assertSteps(await runScenario(engine, { TESTCONTAINERS_RYUK_DISABLED: 'true' }), false);
  });

  test('Ryuk enabled: berth plays the reaper and removes what the session left', async () => {
    const results = await runScenario(engine, {
      TESTCONTAINERS_RYUK_DISABLED: 'false',
      TESTCONTAINERS_RYUK_RECONNECTION_TIMEOUT: '1s',
      TC_SKIP_HEALTH: '1',
      TC_LEAVE_ONE: '1',
    });
    assertSteps(results, true);
    const left = results.leftRunning.value as string;
    assert.match(left, /^[0-9a-f]{64}$/);
    // The scenario process is gone: after the reconnection timeout the reaper removes its container.
    const waited = await engine.request('POST', `/containers/${left}/wait?condition=removed`);
    assert.equal(waited.status, 200);
    const gone = await engine.request('GET', `/containers/${left}/json`);
    assert.equal(gone.status, 404);
    const reapers = JSON.parse(
      (await engine.request('GET', '/containers/json?all=1&filters=' + encodeURIComponent('{"label":["org.testcontainers.ryuk=true"]}'))).body,
    ) as unknown[];
    assert.deepEqual(reapers, [], 'the reaper container removed itself (AutoRemove)');
  });
});
