// testcontainers-python (4.x from PyPI, on docker-py 7) against berth serve and podman's service: the pytest module
// test/clients/python/test_testcontainers.py run as its users run it (pytest, DOCKER_HOST), once per engine, with the
// results side by side. Wait strategies (log, HTTP, port, health check), exec, copy in and out, logs apart, a network
// alias, an exposed port, and Ryuk's cleanup after a session is killed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { repoRoot, runCommand } from '../harness/cluster.js';
import { clientTool, compareOutcomes, ENGINES, suiteEnv, useEngine, type EngineKind, type Outcome } from './client-suite.js';

const MODULE = join(repoRoot, 'test/clients/python');

/** Each test's outcome from pytest's -rA summary (`PASSED test_testcontainers.py::test_port_wait`). */
function outcomes(stdout: string): Record<string, Outcome> {
  const found: Record<string, Outcome> = {};
  for (const m of stdout.matchAll(/^(PASSED|FAILED|ERROR) \S*?::(\w+)/gm)) found[m[2]] = m[1] === 'PASSED' ? 'PASSED' : 'FAILED';
  for (const m of stdout.matchAll(/^SKIPPED \[\d+\] \S+?:\d+: (.*)$/gm)) found[`(skipped: ${m[1].slice(0, 80)})`] = 'SKIPPED';
  return found;
}

const results: Partial<Record<EngineKind, Record<string, Outcome>>> = {};

for (const kind of ENGINES) {
  describe(`testcontainers-python against ${kind}`, () => {
    const { engine, suite } = useEngine(kind, 'tcpy');

    test('pytest passes every test of the module that this engine can run', { timeout: 600_000 }, async () => {
      const r = await runCommand(clientTool('python'), ['-m', 'pytest', MODULE, '-rA', '-p', 'no:cacheprovider', '-q'], {
        timeoutMs: 560_000,
        // with /.dockerenv and a unix socket testcontainers-python would dial the network's gateway for a published port
        env: { ...suiteEnv(kind, engine().socket, suite), TESTCONTAINERS_CONNECTION_MODE: 'docker_host' },
      });
      results[kind] = outcomes(r.stdout);
      console.log(`testcontainers-python against ${kind}: ${r.stdout.trim().split('\n').at(-1)}`);
      assert.equal(r.code, 0, `pytest exited ${r.code}\n${r.stdout.slice(-6000)}\n${r.stderr.slice(-3000)}`);
    });
  });
}

test('side by side: berth passes every test podman passes', () => compareOutcomes('testcontainers-python', results));
