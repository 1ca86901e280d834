// `berth dev-cluster`'s options: what the retired TypeScript cluster took is refused with the reason before anything
// happens, sizes and fault switches are read as the kubelet and the faults endpoint read them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { logSize } from '../../../src/cli/dev-cluster.js';
import { initialFaults, retiredOptionProblem } from '../../../src/cli/dev-cluster-up.js';
import { scratchDir } from '../../util/scratch.js';

const cli = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

test('sizes as the kubelet writes them; anything else refused', () => {
  assert.equal(logSize('10Mi'), 10 * 1024 * 1024);
  assert.equal(logSize('1048576'), 1048576);
  assert.equal(logSize('1.5Ki'), 1536);
  assert.equal(logSize('2M'), 2_000_000);
  for (const bad of ['10MB', '-1', 'ten', '']) assert.throws(() => logSize(bad), /expected a size such as 10Mi/, bad);
});

test('the --fault-* flags become the switches they name; none set is no switch at all', () => {
  const none = { faultDropStreams: 0, faultError500: 0, faultThrottle429: 0, faultEndWatchAfter: 0, faultDelayPodStart: 0 };
  assert.equal(initialFaults(none), undefined);
  assert.deepEqual(initialFaults({ ...none, faultError500: 0.25, faultDelayPodStart: 1500 }), { error500: 0.25, delayPodStartMs: 1500 });
  assert.deepEqual(initialFaults({ ...none, faultThrottle429: 0.5 }), { throttle429: 0.5 });
  assert.deepEqual(initialFaults({ ...none, faultDropStreams: 1, faultEndWatchAfter: 200 }), { dropStreams: 1, endWatchAfterMs: 200 });
});

test('each option of the TypeScript cluster is named with why it no longer applies', () => {
  assert.equal(retiredOptionProblem({}), undefined);
  assert.match(retiredOptionProblem({ foreground: true })!, /^--foreground no longer applies: .*berth dev-cluster down/);
  assert.match(retiredOptionProblem({ podman: 'podman' })!, /^--podman no longer applies: .*containerd/);
  assert.match(retiredOptionProblem({ watchHistory: '500' })!, /^--watch-history no longer applies: .*410 Expired/);
});

test('berth dev-cluster up --foreground, --podman, --watch-history: exit 1 with the sentence, nothing made', (t) => {
  const dir = scratchDir('berth-retired-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const state = join(dir, 'state');
  for (const [flag, why] of [
    [['--foreground'], /--foreground no longer applies/],
    [['--podman', 'podman'], /--podman no longer applies/],
    [['--watch-history', '500'], /--watch-history no longer applies/],
  ] as const) {
    const r = spawnSync(process.execPath, [cli, 'dev-cluster', 'up', '--state-dir', state, ...flag], { encoding: 'utf8' });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, why);
    assert.equal(existsSync(state), false, `${flag[0]} made the state folder`);
  }
  const down = spawnSync(process.execPath, [cli, 'dev-cluster', 'down', '--state-dir', state, '--podman', 'podman'], { encoding: 'utf8' });
  assert.equal(down.status, 1);
  assert.match(down.stderr, /--podman no longer applies/);
});

test('the options that remain are in --help; the retired ones are not', () => {
  const help = spawnSync(process.execPath, [cli, 'dev-cluster', 'up', '--help'], { encoding: 'utf8' }).stdout;
  for (const flag of ['--state-dir', '--port', '--host', '--users', '--load', '--split-log-streams', '--container-log-max-size', '--fault-drop-streams'])
    assert.ok(help.includes(flag), flag);
  for (const flag of ['--foreground', '--podman', '--watch-history', '--upstream']) assert.ok(!help.includes(flag), flag);
});

test('the fault proxy refuses a switch the faults endpoint would refuse', () => {
  const r = spawnSync(process.execPath, [cli, 'dev-cluster', 'fault-proxy', '--state-dir', '/nonexistent', '--faults', '{"bogus":1}'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--faults: unknown fault "bogus"/);
});
