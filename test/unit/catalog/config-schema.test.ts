// KEP-2906 function configs are checked against their catalog entry's openAPIV3Schema before anything
// runs: `berth fn eval`, `fn render` and `catalog annotate` refuse a config that lacks a required field,
// has a forbidden one (`not: {required: [...]}`) or an unknown one (additionalProperties: false),
// naming the config file, line, column, field and catalog entry; the exec function (a .tgz provider
// that writes a marker when it runs) never starts. A valid config runs; --skip-schema runs it with a warning.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkFunctionConfig, ConfigSchemaError } from '../../../src/catalog/config-schema.js';
import { sha256Digest } from '../../../src/catalog/oci.js';
import { parseCatalog } from '../../../src/catalog/parse.js';
import { findMatches } from '../../../src/catalog/resolve.js';
import { tgz } from './tgz.js';
import { scratchDir } from '../../util/scratch.js';

const berth = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
let root = '';
let marker = '';
let catalogFile = '';

const SCHEMA = `
      schema:
        openAPIV3Schema:
          type: object
          required: [spec]
          properties:
            spec:
              type: object
              additionalProperties: false
              required: [team]
              properties:
                team: {type: string, minLength: 1}
                replicas: {type: integer}
                legacyOwner: {type: string}
              not: {required: [legacyOwner]}`;

before(async () => {
  root = scratchDir('berth-schema-');
  marker = path.join(root, 'ran.marker');
  // The function: records that it ran, then echoes its input (a valid ResourceList).
  const script = `#!/bin/sh\necho ran >> "${marker}"\ncat\n`;
  const archive = await tgz([
    { name: 'team-label/', type: 'directory', mode: 0o755 },
    { name: 'team-label/README.md', body: 'docs\n' },
    { name: 'team-label/team-label', body: script, mode: 0o755 },
  ]);
  writeFileSync(path.join(root, 'team-label-linux-amd64.tgz'), archive);
  catalogFile = path.join(root, 'catalog.yaml');
  writeFileSync(
    catalogFile,
    `apiVersion: config.kubernetes.io/v1alpha1
kind: Catalog
metadata: {name: teams}
spec:
  krmFunctions:
  - group: fn.example.org
    names: {kind: TeamLabel}
    description: labels resources with their team
    publisher: berth-tests
    versions:
    - name: v1${SCHEMA}
      runtime:
        exec:
          platforms:
          - {bin: team-label/team-label, os: linux, arch: amd64, uri: team-label-linux-amd64.tgz, sha256: "${sha256Digest(archive).slice(7)}"}
          - {bin: team-label/team-label, os: linux, arch: arm64, uri: team-label-linux-amd64.tgz, sha256: "${sha256Digest(archive).slice(7)}"}
`,
  );
});

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [berth, ...args],
      { env: { ...process.env, BERTH_CONFIG: '/nonexistent/berth.yaml', BERTH_CACHE_DIR: path.join(root, 'cache') }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

function pkg(config: string): string {
  const dir = mkdtempSync(path.join(root, 'pkg-'));
  writeFileSync(path.join(dir, 'service.yaml'), 'apiVersion: v1\nkind: Service\nmetadata:\n  name: cart\n');
  writeFileSync(path.join(dir, 'team.yaml'), config);
  return dir;
}

const HEAD = 'apiVersion: fn.example.org/v1\nkind: TeamLabel\nmetadata:\n  name: team\n';
const ENTRY = `TeamLabel fn.example.org/v1 in catalog teams (${'CATALOG'})`;
const entry = (): string => ENTRY.replace('CATALOG', catalogFile);

const BAD = [
  { what: 'a required field missing', spec: 'spec:\n  replicas: 2\n', at: '6:3', field: 'spec.team', problem: 'missing required field "team"' },
  {
    what: 'a forbidden field (not: required)',
    spec: 'spec:\n  team: shop\n  legacyOwner: bob\n',
    at: '7:3',
    field: 'spec.legacyOwner',
    problem: 'must not have the field "legacyOwner"',
  },
  {
    what: 'an unknown field (additionalProperties: false)',
    spec: 'spec:\n  team: shop\n  replicas: 2\n  colour: red\n',
    at: '8:3',
    field: 'spec.colour',
    problem: 'unknown field "colour"',
  },
];

for (const bad of BAD) {
  test(`fn eval refuses a config with ${bad.what}: file:line:column, field, catalog entry; the function never starts`, async () => {
    rmSync(marker, { force: true });
    const dir = pkg(HEAD + bad.spec);
    const config = path.join(dir, 'team.yaml');
    const r = await run(['fn', 'eval', dir, '--fn-config', config, '--trusted-catalog', catalogFile]);
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(`function config ${config} does not match the schema of ${entry()}`), r.stderr);
    assert.ok(r.stderr.includes(`${config}:${bad.at}: ${bad.field}: ${bad.problem}`), r.stderr);
    assert.ok(r.stderr.includes('--skip-schema'), r.stderr);
    assert.equal(existsSync(marker), false, 'the function ran');
  });
}

test('fn eval runs a valid config (the .tgz provider unpacked and run); --skip-schema runs a bad one with a warning', async () => {
  rmSync(marker, { force: true });
  const good = pkg(`${HEAD}spec:\n  team: shop\n`);
  const ok = await run(['fn', 'eval', good, '--fn-config', path.join(good, 'team.yaml'), '--trusted-catalog', catalogFile]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(readFileSync(marker, 'utf8'), 'ran\n');
  const bad = pkg(`${HEAD}spec:\n  replicas: 2\n`);
  const skipped = await run(['fn', 'eval', bad, '--fn-config', path.join(bad, 'team.yaml'), '--trusted-catalog', catalogFile, '--skip-schema']);
  assert.equal(skipped.code, 0, skipped.stderr);
  assert.match(skipped.stderr, /warning: --skip-schema: function configs are not checked/);
  assert.equal(readFileSync(marker, 'utf8'), 'ran\nran\n');
});

test('fn render checks every pipeline config before the first function runs: a bad second step stops the first', async () => {
  rmSync(marker, { force: true });
  const dir = pkg(`${HEAD}spec:\n  team: shop\n`);
  writeFileSync(path.join(dir, 'bad.yaml'), `# a second config\n${HEAD.replace('name: team', 'name: bad')}spec:\n  team: ""\n`);
  writeFileSync(
    path.join(dir, 'Kptfile'),
    'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n  - configPath: team.yaml\n  - configPath: bad.yaml\n',
  );
  const before = readFileSync(path.join(dir, 'service.yaml'), 'utf8');
  const r = await run(['fn', 'render', dir, '--trusted-catalog', catalogFile]);
  assert.equal(r.code, 1, r.stderr);
  assert.ok(r.stderr.includes(`${path.join(dir, 'bad.yaml')}:7:9: spec.team: must NOT have fewer than 1 characters`), r.stderr);
  assert.equal(existsSync(marker), false, 'the first mutator ran although a later config was refused');
  assert.equal(readFileSync(path.join(dir, 'service.yaml'), 'utf8'), before);
  writeFileSync(path.join(dir, 'bad.yaml'), `${HEAD.replace('name: team', 'name: bad')}spec:\n  team: web\n`);
  const fixed = await run(['fn', 'render', dir, '--trusted-catalog', catalogFile]);
  assert.equal(fixed.code, 0, fixed.stderr);
  assert.equal(readFileSync(marker, 'utf8'), 'ran\nran\n');
});

test('catalog annotate refuses a config its schema refuses, writing nothing; --skip-schema annotates with a warning', async () => {
  const dir = pkg(`${HEAD}spec:\n  team: shop\n  legacyOwner: bob\n`);
  writeFileSync(path.join(dir, 'kustomization.yaml'), 'resources: [service.yaml]\ntransformers: [team.yaml]\n');
  const r = await run(['catalog', 'annotate', dir, '--trusted-catalog', catalogFile]);
  assert.equal(r.code, 1, r.stderr);
  assert.ok(r.stderr.includes(`${path.join(dir, 'team.yaml')}:7:3: spec.legacyOwner: must not have the field "legacyOwner"`), r.stderr);
  assert.equal(readFileSync(path.join(dir, 'team.yaml'), 'utf8').includes('config.kubernetes.io/function'), false);
  assert.equal(existsSync(path.join(dir, '.berth')), false);
  const skipped = await run(['catalog', 'annotate', dir, '--trusted-catalog', catalogFile, '--skip-schema']);
  assert.equal(skipped.code, 0, skipped.stderr);
  assert.match(skipped.stderr, /warning: --skip-schema/);
  assert.match(readFileSync(path.join(dir, 'team.yaml'), 'utf8'), /config\.kubernetes\.io\/function/);
});

test('checkFunctionConfig: apiVersion/kind/metadata always allowed at the root; a second document located by its index; no file: fields only', () => {
  const catalog = parseCatalog(readFileSync(catalogFile, 'utf8'), { ref: catalogFile, base: `file://${catalogFile}` });
  const [match] = findMatches([catalog], 'fn.example.org/v1', 'TeamLabel');
  const strict = {
    ...match,
    version: { ...match.version, schema: { openAPIV3Schema: { type: 'object', additionalProperties: false, properties: { data: { type: 'object' } } } } },
  };
  assert.doesNotThrow(() => checkFunctionConfig({ apiVersion: 'fn.example.org/v1', kind: 'TeamLabel', metadata: { name: 'x' }, data: {} }, strict));
  const text = `${HEAD}spec: {team: a}\n---\n${HEAD}spec:\n  team: 5\n`;
  assert.throws(
    () =>
      checkFunctionConfig({ apiVersion: 'fn.example.org/v1', kind: 'TeamLabel', metadata: { name: 'team' }, spec: { team: 5 } }, match, {
        file: 'two.yaml',
        text,
        index: 1,
      }),
    (err: unknown) =>
      err instanceof ConfigSchemaError &&
      err.issues.length === 1 &&
      err.issues[0].line === 12 &&
      err.issues[0].column === 9 &&
      err.issues[0].field === 'spec.team',
  );
  assert.throws(() => checkFunctionConfig({ kind: 'TeamLabel', spec: {} }, match), /function config \(no file\): spec\.team: missing required field "team"/);
  mkdirSync(path.join(root, 'unused'), { recursive: true });
});
