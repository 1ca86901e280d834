// testcontainers-node's client-parity items (issue 10), against berth serve and against podman's service (the
// reference): reaper reuse, generated names, LogConfig, pull events, a later network alias, a log frame per
// line, exec as another user, build, copy before start for an image whose command nobody names, UDP ports.
// Each run is a child process (tc-parity-scenario.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUSYBOX, freshNamespace, loadIntoNode, repoRoot, runCommand } from '../harness/cluster.js';
import { type DockerEngine, startBerth, startPodman, stopAndCheckLeftovers } from './serve-env.js';

const scenario = join(repoRoot, 'dist/test/e2e/serve/tc-parity-scenario.js');
/** BUSYBOX whose own CMD is a long sleep: a container nobody gives a command keeps running. */
const SLEEPY = `localhost/berth-e2e/sleepy:${process.pid}`;

type Step = { ok: boolean; value?: unknown; error?: string };

/** The scenario's results, and what testcontainers logged (its build log: `DEBUG=testcontainers:build`). */
async function runScenarioLogged(engine: DockerEngine, env: Record<string, string>): Promise<{ results: Record<string, Step>; log: string }> {
  const r = await runCommand(process.execPath, [scenario], {
    env: { ...process.env, DOCKER_HOST: engine.dockerHost, TC_SLEEPY_IMAGE: SLEEPY, DEBUG: 'testcontainers:build', ...env },
    timeoutMs: 300_000,
  });
  assert.equal(r.code, 0, r.stderr);
  return { results: JSON.parse(r.stdout.trim().split('\n').pop() as string) as Record<string, Step>, log: r.stderr };
}

async function runScenario(engine: DockerEngine, env: Record<string, string>): Promise<Record<string, Step>> {
  return (await runScenarioLogged(engine, env)).results;
}

function value<T>(results: Record<string, Step>, name: string): T {
  assert.ok(results[name]?.ok, `${name}: ${results[name]?.error}`);
  return results[name].value as T;
}

/** What both engines must give. */
function assertCommon(results: Record<string, Step>): void {
  for (const name of value<string[]>(results, 'generatedNames')) assert.match(name, /^\/[a-z]+_[a-z]+(_[0-9a-f]+)?$/, `a generated name: ${name}`);
  assert.equal(value<{ Type: string }>(results, 'logConfig').Type, 'json-file');
  assert.deepEqual(value(results, 'laterAliasResolves'), { exitCode: 0, output: 'from-later\nfrom-later\n' }, 'both aliases of a later member');
  assert.deepEqual(value(results, 'copyBeforeStartAnyImage'), { exitCode: 0, output: 'copied\n' });
  assert.deepEqual(value(results, 'logFrames'), ['one\n', 'two\n', 'three\n'], 'a log frame per line');
}

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sleepy-'));
  try {
    writeFileSync(join(dir, 'Containerfile'), `FROM ${BUSYBOX}\nCMD ["sleep", "600"]\n`);
    const r = await runCommand('podman', ['build', '-t', SLEEPY, dir], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    await loadIntoNode(SLEEPY);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
after(async () => void (await runCommand('podman', ['rmi', SLEEPY])));

describe('testcontainers-node parity items against podman (reference)', () => {
  let engine: DockerEngine;
  before(async () => (engine = await startPodman()));
  after(async () => engine.stop());

  test('names, LogConfig, a later alias, copy before start; build, UDP and pulls as podman does them', async () => {
    const results = await runScenario(engine, { TESTCONTAINERS_RYUK_DISABLED: 'true', TC_ALIAS_TRIES: '10' });
    assertCommon(results);
    assert.equal(value<{ built: boolean }>(results, 'build').built, true, 'podman builds');
    assert.equal(value<{ started: boolean }>(results, 'udpBinding').started, true, 'podman publishes UDP');
    assert.deepEqual(value(results, 'execOtherUser'), { ran: true, output: 'nobody\n' });
  });
});

describe('testcontainers-node parity items against berth serve', () => {
  let engine: DockerEngine;
  let namespace = '';
  const instance = `tcp${process.pid}`;
  before(async () => {
    namespace = await freshNamespace('serve-tcp');
    engine = await startBerth(namespace, instance, { extra: ['--helper-image', BUSYBOX] });
  });
  after(() => stopAndCheckLeftovers(engine, namespace, instance));

  test('names, LogConfig, a later alias, copy before start, every pull an event; build (no --builder-image) and UDP answered at once', async () => {
    const { results, log } = await runScenarioLogged(engine, { TESTCONTAINERS_RYUK_DISABLED: 'true' });
    assertCommon(results);
    assert.equal(value(results, 'pullEvents'), 2, 'a re-pull is an event too');
    // testcontainers reads the build stream to its end, logs it, and then fails on the missing image.
    const build = value<{ built: boolean; error: string; ms: number }>(results, 'build');
    assert.equal(build.built, false);
    assert.match(build.error, /Failed to build image/);
    assert.match(log, /berth serve builds images in a builder pod: start it with --builder-image IMAGE/);
    assert.ok(build.ms < 30_000, `answered in ${build.ms} ms`);
    const udp = value<{ started: boolean; error: string }>(results, 'udpBinding');
    assert.equal(udp.started, false);
    assert.match(udp.error, /cannot publish 53\/udp: berth publishes TCP ports only/);
    // A Kubernetes exec cannot switch users: refused, never run as the container's user instead.
    const other = value<{ ran: boolean; error: string }>(results, 'execOtherUser');
    assert.equal(other.ran, false);
    assert.match(other.error, /exec as user "nobody" is not possible: a Kubernetes exec runs as the container's own user/);
  });

  test("Ryuk: a second session finds the first one's reaper by its label and reuses it", async () => {
    const env = { TESTCONTAINERS_RYUK_DISABLED: 'false', TESTCONTAINERS_RYUK_RECONNECTION_TIMEOUT: '30s' };
    const first = value<string[]>(await runScenario(engine, env), 'reaper');
    assert.equal(first.length, 1, 'one reaper, labelled org.testcontainers.ryuk=true');
    const second = value<string[]>(await runScenario(engine, env), 'reaper');
    assert.deepEqual(second, first, 'the same reaper: none was started for the second session');
  });
});
