import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { runDockerShim, SHIM_DOCKER_VERSION } from '../../../src/shim/shim.js';
import { applySettings, loadRunSettings, parseDuration, SettingsError } from '../../../src/runtime/settings.js';
import { scratchDir } from '../../util/scratch.js';

function io() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (c: Buffer) => out.push(c.toString()));
  stderr.on('data', (c: Buffer) => err.push(c.toString()));
  return { io: { stdin: new PassThrough(), stdout, stderr }, out: () => out.join(''), err: () => err.join('') };
}

test('version answers kpt preflight with a version ≥ 20.10', async () => {
  const s = io();
  assert.equal(await runDockerShim(['version', '--format', '{{.Client.Version}}'], {}, s.io), 0);
  assert.equal(s.out(), `${SHIM_DOCKER_VERSION}\n`);
  const [major, minor] = s.out().trim().split('.').map(Number);
  assert.ok(major > 20 || (major === 20 && minor >= 10));
});

test('unknown flag exits 125 with docker wording on stderr; image preflight answers succeed', async () => {
  const s = io();
  assert.equal(await runDockerShim(['run', '--foo', 'img'], {}, s.io), 125);
  assert.equal(s.err(), "docker: unknown flag: --foo\nSee 'docker run --help'.\n");
  const p = io();
  assert.equal(await runDockerShim(['image', 'ls', '--filter', 'reference=x', '--format', '{{ .Tag }}'], {}, p.io), 0);
  assert.equal(p.out(), '');
  const table = io();
  assert.equal(await runDockerShim(['images'], {}, table.io), 0);
  assert.equal(table.out(), 'REPOSITORY   TAG       IMAGE ID   CREATED   SIZE\n', 'docker prints its header over an empty table');
  assert.equal(await runDockerShim(['image', 'inspect', 'x:1'], {}, io().io), 0);
});

test('config file + env: env wins, durations parse, pod template from file is applied', async (t) => {
  const dir = scratchDir('berth-cfg-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tpl = path.join(dir, 'tpl.yaml');
  writeFileSync(
    tpl,
    'apiVersion: v1\nkind: PodTemplate\nmetadata: {name: t}\ntemplate:\n  metadata: {labels: {tier: fn}}\n  spec: {nodeSelector: {pool: fn}, containers: []}\n',
  );
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, `namespace: from-file\nstartTimeout: 2m\nlabels: {a: "1"}\nresources: {memory: 128Mi}\nkeepFailedPods: true\npodTemplate: ${tpl}\n`);
  const config = loadRunSettings({ BERTH_CONFIG: file, BERTH_NAMESPACE: 'from-env', BERTH_LABELS: 'b=2' });
  assert.equal(config.namespace, 'from-env');
  assert.equal(config.startTimeoutSeconds, 120);
  assert.deepEqual(config.labels, { a: '1', b: '2' });
  assert.equal(config.keepFailedPods, true);
  const w = await applySettings({ image: 'x', labels: { b: 'cli' }, resources: { cpus: '1' } }, config, {
    readPodTemplate: () => Promise.reject(new Error('not used')),
  });
  assert.deepEqual(w.labels, { a: '1', b: 'cli' });
  assert.deepEqual(w.resources, { memory: '128Mi', cpus: '1' });
  assert.equal(w.startTimeoutSeconds, 120);
  assert.deepEqual(w.podTemplate?.template.metadata?.labels, { tier: 'fn' });
  assert.equal(parseDuration('1h30m', 'x'), 5400);
  assert.throws(() => parseDuration('soon', 'startTimeout'), SettingsError);
  assert.throws(() => loadRunSettings({ BERTH_CONFIG: path.join(dir, 'nope.yaml') }), /does not exist/);
});

test('durations: ms is milliseconds (rounded up to a second), not minutes followed by a stray s', () => {
  assert.equal(parseDuration('500ms', 'startTimeout'), 1);
  assert.equal(parseDuration('1m500ms', 'startTimeout'), 61);
  assert.equal(parseDuration('90s', 'startTimeout'), 90);
  assert.throws(() => parseDuration('5mss', 'startTimeout'), SettingsError);
});

test('help as the docker CLI gives it: bare, --help, -h and help print usage and exit 0; run --help lists run flags', async () => {
  for (const argv of [[], ['--help'], ['-h'], ['help']]) {
    const s = io();
    assert.equal(await runDockerShim(argv, {}, s.io), 0, argv.join(' '));
    assert.match(s.out(), /^Usage: {2}docker \[OPTIONS\] COMMAND/);
    assert.match(s.out(), /Run 'docker COMMAND --help'/);
    assert.equal(s.err(), '');
  }
  const run = io();
  assert.equal(await runDockerShim(['run', '--rm', '--help'], {}, run.io), 0);
  assert.match(run.out(), /^Usage: {2}docker run \[OPTIONS\] IMAGE/);
  assert.match(run.out(), /--network network/);
  // after IMAGE, --help belongs to the container's command: not berth's help
  const parsed = io();
  assert.equal(await runDockerShim(['run', '--foo', 'img', '--help'], {}, parsed.io), 125);
});
