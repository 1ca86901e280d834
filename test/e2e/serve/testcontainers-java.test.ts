// testcontainers-java (1.21, JUnit 5, built with Maven) against berth serve and podman's service: the module
// test/clients/java run as its users run it (`mvn test`, DOCKER_HOST), once per engine, with the results side by
// side. Wait strategies (log, HTTP, listening port, health check), exec, copy in and out, logs apart, a network alias,
// an exposed port, reuse, and Ryuk's cleanup of what the session left once the JVM has ended.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, runCommand } from '../harness/cluster.js';
import { clientTool, compareOutcomes, ENGINES, ryukCleanupTest, suiteEnv, useEngine, type EngineKind, type Outcome } from './client-suite.js';

const MODULE = join(repoRoot, 'test/clients/java');

/** Each test's outcome from surefire's XML reports. */
function outcomes(): Record<string, Outcome> {
  const dir = join(MODULE, 'target/surefire-reports');
  const found: Record<string, Outcome> = {};
  for (const f of readdirSync(dir).filter((n) => n.startsWith('TEST-') && n.endsWith('.xml'))) {
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/<testcase name="(\w+)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
      const body = m[3] ?? '';
      found[m[1]] = /<(failure|error)\b/.test(body) ? 'FAILED' : /<skipped\b/.test(body) ? 'SKIPPED' : 'PASSED';
    }
  }
  return found;
}

const results: Partial<Record<EngineKind, Record<string, Outcome>>> = {};

for (const kind of ENGINES) {
  describe(`testcontainers-java against ${kind}`, () => {
    const { engine, suite } = useEngine(kind, 'tcj');
    // the JVM's home: testcontainers reads and may write ~/.testcontainers.properties there
    const home = mkdtempSync(join(tmpdir(), 'berth-tc-java-home-'));
    after(() => rmSync(home, { recursive: true, force: true }));

    test('mvn test passes every test of the module that this engine can run', { timeout: 600_000 }, async () => {
      const repo = clientTool('java');
      const args = ['-B', '-o', '-q', '-f', join(MODULE, 'pom.xml'), `-Dmaven.repo.local=${repo}`, `-DargLine=-Duser.home=${home}`, 'test'];
      const r = await runCommand('mvn', args, { timeoutMs: 560_000, env: { ...suiteEnv(kind, engine().socket, suite), TESTCONTAINERS_REUSE_ENABLE: 'true' } });
      results[kind] = outcomes();
      assert.equal(r.code, 0, `mvn test exited ${r.code}\n${r.stdout.slice(-8000)}\n${r.stderr.slice(-3000)}`);
    });

    ryukCleanupTest(kind, engine, suite);
  });
}

test('side by side: berth passes every test podman passes', () => compareOutcomes('testcontainers-java', results));
