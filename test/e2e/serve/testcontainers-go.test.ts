// testcontainers-go (the current release, with `go test`) against berth serve and podman's service: the module
// test/clients/go, compiled once (scripts/clients/go.sh) and run as `go test` runs it, once per engine, with the results
// side by side. Wait strategies (log, HTTP, listening port, health check), exec, copy in and out, logs, a network alias,
// an exposed port and reuse by name.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runCommand } from '../harness/cluster.js';
import { clientTool, compareOutcomes, ENGINES, suiteEnv, useEngine, type EngineKind, type Outcome } from './client-suite.js';

/** Each test's outcome from `go test -v` (`--- PASS: TestX (1.2s)`). */
function outcomes(stdout: string): Record<string, Outcome> {
  const found: Record<string, Outcome> = {};
  for (const m of stdout.matchAll(/^--- (PASS|FAIL|SKIP): (\w+)/gm)) found[m[2]] = m[1] === 'PASS' ? 'PASSED' : m[1] === 'SKIP' ? 'SKIPPED' : 'FAILED';
  return found;
}

const results: Partial<Record<EngineKind, Record<string, Outcome>>> = {};

for (const kind of ENGINES) {
  describe(`testcontainers-go against ${kind}`, () => {
    const { engine, suite } = useEngine(kind, 'tcgo');

    test('go test passes every test of the module that this engine can run', { timeout: 600_000 }, async () => {
      try {
        const r = await runCommand(clientTool('go'), ['-test.v', '-test.count=1', '-test.timeout=9m'], {
          timeoutMs: 560_000,
          env: suiteEnv(kind, engine().socket, suite),
        });
        results[kind] = outcomes(r.stdout);
        console.log(`testcontainers-go against ${kind}: ${r.stdout.trim().split('\n').at(-1)}`);
        assert.equal(r.code, 0, `go test exited ${r.code}\n${r.stdout.slice(-8000)}\n${r.stderr.slice(-3000)}`);
      } finally {
        // reused by name: not labelled by the run
        await engine().docker(['rm', '-f', `tcgo-reuse-${suite}`]);
      }
    });
  });
}

test('side by side: berth passes every test podman passes', () => compareOutcomes('testcontainers-go', results));
