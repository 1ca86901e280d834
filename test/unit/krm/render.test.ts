// fn render / fn eval with exec providers (local processes: the repo's KRM test functions under node),
// so the pipeline, write-back and catalog logic is tested without a cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { sha256Digest } from '../../../src/catalog/oci.js';
import { parseCatalog } from '../../../src/catalog/parse.js';
import { renderPackage } from '../../../src/krm/render.js';
import { evalFunction } from '../../../src/krm/eval.js';
import { catalogResolver } from '../../../src/cli/fn-resolver.js';
import { pathToFileURL } from 'node:url';
import { scratchDir } from '../../util/scratch.js';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));

function tree(files: Record<string, string>): string {
  const dir = scratchDir('berth-render-');
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

/** A local executable running one of images/krm-fns; it leaves a marker file when it runs. */
function fnScript(dir: string, fn: string): { file: string; sha256: string; marker: string } {
  const file = path.join(dir, `${fn}.sh`);
  const marker = path.join(dir, `${fn}.ran`);
  // A copy outside the repo: the repo's package.json would make node read the CommonJS files as ESM.
  if (!existsSync(path.join(dir, 'fn'))) cpSync(path.join(repo, 'images/krm-fns/fn'), path.join(dir, 'fn'), { recursive: true });
  writeFileSync(file, `#!/bin/sh\ntouch ${marker}\nKRM_FN=${fn} NODE_PATH=${repo}node_modules exec ${process.execPath} ${dir}/fn/main.js\n`);
  chmodSync(file, 0o755);
  return { file, sha256: sha256Digest(readFileSync(file)), marker };
}

function catalogOf(dir: string, fns: Array<{ kind: string; script: { file: string; sha256: string } }>) {
  const text = `apiVersion: config.kubernetes.io/v1alpha1
kind: Catalog
metadata: {name: local}
spec:
  krmFunctions:
${fns
  .map(
    (f) => `  - group: fn.example.org
    names: {kind: ${f.kind}}
    description: d
    publisher: test
    versions:
    - name: v1
      runtime:
        exec:
          platforms:
          - {bin: ${f.kind.toLowerCase()}, os: linux, arch: arm64, uri: /nonexistent, sha256: '${'0'.repeat(64)}'}
          - {bin: ${f.kind.toLowerCase()}, os: linux, arch: amd64, uri: ${path.basename(f.script.file)}, sha256: ${f.script.sha256}}
`,
  )
  .join('')}`;
  return parseCatalog(text, { ref: path.join(dir, 'catalog.yaml'), base: pathToFileURL(path.join(dir, 'catalog.yaml')).href });
}

const KPTFILE = `# the root package
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: root
pipeline:
  mutators:
  - configPath: owner.yaml # resolved through the catalog
  validators:
  - configPath: require.yaml
`;
const SUB_KPTFILE = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: sub
pipeline:
  mutators:
  - configPath: tier.yaml
`;
const SERVICE = `# cart service, comment kept
apiVersion: v1
kind: Service
metadata:
  name: cart # the name
  labels: {team: shop}
spec:
  ports:
  - port: 80 # http
`;

function pkg(extra: Record<string, string> = {}): string {
  return tree({
    Kptfile: KPTFILE,
    'owner.yaml':
      'apiVersion: fn.example.org/v1\nkind: SetAnnotations\nmetadata:\n  name: owner\n  annotations: {config.kubernetes.io/local-config: "true"}\ndata: {owner: team-a}\n',
    'require.yaml':
      'apiVersion: fn.example.org/v1\nkind: RequireLabel\nmetadata:\n  name: require\n  annotations: {config.kubernetes.io/local-config: "true"}\ndata: {label: team, kinds: Service}\n',
    'service.yaml': SERVICE,
    'sub/Kptfile': SUB_KPTFILE,
    'sub/tier.yaml':
      'apiVersion: fn.example.org/v1\nkind: SetAnnotations\nmetadata:\n  name: tier\n  annotations: {config.kubernetes.io/local-config: "true"}\ndata: {tier: backend}\n',
    'sub/deploy.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels: {team: shop}\ndata:\n  # a comment inside data\n  mode: fast\n',
    ...extra,
  });
}

function setup() {
  const fnDir = scratchDir('berth-fns-');
  const setAnn = fnScript(fnDir, 'set-annotations');
  const require = fnScript(fnDir, 'require-label');
  const catalog = catalogOf(fnDir, [
    { kind: 'SetAnnotations', script: setAnn },
    { kind: 'RequireLabel', script: require },
  ]);
  return { fnDir, setAnn, require, catalog, cacheDir: path.join(fnDir, 'cache') };
}

test('render: nested packages, catalog-resolved exec functions, comments and key order kept', async () => {
  const s = setup();
  const dir = pkg();
  try {
    const report = new PassThrough();
    let log = '';
    report.on('data', (c: Buffer) => (log += c.toString()));
    await renderPackage(dir, {
      resolver: catalogResolver({ catalogs: { trusted: [s.catalog], untrusted: [], unreadable: [] }, cacheDir: s.cacheDir }),
      report,
    });
    const service = readFileSync(path.join(dir, 'service.yaml'), 'utf8');
    assert.equal(service, SERVICE.replace('  labels: {team: shop}\n', '  labels: {team: shop}\n  annotations:\n    owner: team-a\n'));
    const cm = readFileSync(path.join(dir, 'sub/deploy.yaml'), 'utf8');
    assert.match(cm, /# a comment inside data/);
    // The sub package's pipeline ran first, then the root's over both.
    assert.deepEqual(YAML.parse(cm).metadata.annotations, { tier: 'backend', owner: 'team-a' });
    assert.match(readFileSync(path.join(dir, 'Kptfile'), 'utf8'), /^# the root package\n/);
    assert.match(log, /\[PASS\] "requirelabel \(RequireLabel/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(s.fnDir, { recursive: true, force: true });
  }
});

test('render: a failing validator fails the render and the package on disk is unchanged', async () => {
  const s = setup();
  const dir = pkg({ 'service.yaml': SERVICE.replace('  labels: {team: shop}\n', '') });
  const before = readFileSync(path.join(dir, 'service.yaml'), 'utf8');
  try {
    const report = new PassThrough();
    let log = '';
    report.on('data', (c: Buffer) => (log += c.toString()));
    await assert.rejects(
      renderPackage(dir, { resolver: catalogResolver({ catalogs: { trusted: [s.catalog], untrusted: [], unreadable: [] }, cacheDir: s.cacheDir }), report }),
      /requirelabel \(RequireLabel fn.example.org\/v1, catalog local\) failed/,
    );
    assert.match(log, /\[error\] v1\/Service\/cart: Service cart has no label team/);
    assert.equal(readFileSync(path.join(dir, 'service.yaml'), 'utf8'), before);
    assert.doesNotMatch(readFileSync(path.join(dir, 'sub/deploy.yaml'), 'utf8'), /tier/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(s.fnDir, { recursive: true, force: true });
  }
});

test('render: an executable whose sha256 no longer matches is refused, nothing runs, nothing changes', async () => {
  const s = setup();
  const dir = pkg();
  try {
    writeFileSync(s.setAnn.file, `${readFileSync(s.setAnn.file, 'utf8')}# tampered\n`);
    await assert.rejects(
      renderPackage(dir, {
        resolver: catalogResolver({ catalogs: { trusted: [s.catalog], untrusted: [], unreadable: [] }, cacheDir: s.cacheDir }),
        report: new PassThrough(),
      }),
      /sha256 mismatch for set-annotations-?.*refusing to run it|sha256 mismatch for setannotations/,
    );
    assert.equal(existsSync(s.setAnn.marker), false, 'the function ran');
    assert.equal(readFileSync(path.join(dir, 'service.yaml'), 'utf8'), SERVICE);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(s.fnDir, { recursive: true, force: true });
  }
});

test('render: a config kind that only an untrusted catalog provides is refused with the catalog and the flag', async () => {
  const s = setup();
  const dir = pkg();
  try {
    await assert.rejects(
      renderPackage(dir, {
        resolver: catalogResolver({ catalogs: { trusted: [], untrusted: [s.catalog], unreadable: [] }, cacheDir: s.cacheDir }),
        report: new PassThrough(),
      }),
      new RegExp(`provided only by catalog local \\(${s.catalog.ref.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\), which is not trusted: pass --trusted-catalog`),
    );
    assert.equal(readFileSync(path.join(dir, 'service.yaml'), 'utf8'), SERVICE);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(s.fnDir, { recursive: true, force: true });
  }
});

test('eval: key=value config over stdin and over a folder (written back, comments kept)', async () => {
  const s = setup();
  const dir = pkg();
  try {
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    const stdin = new PassThrough();
    stdin.end('apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n');
    const common = {
      catalogs: { trusted: [], untrusted: [], unreadable: [] },
      report: new PassThrough(),
      stdout,
      exec: s.setAnn.file,
      keyValues: ['stage=dev'],
    };
    await evalFunction('-', { ...common, stdin });
    assert.deepEqual(YAML.parse(out).items[0].metadata.annotations, { stage: 'dev' });
    await evalFunction(dir, { ...common, stdin: new PassThrough() });
    const service = readFileSync(path.join(dir, 'service.yaml'), 'utf8');
    assert.match(service, /^# cart service, comment kept\n/);
    assert.match(service, /name: cart # the name\n/);
    assert.match(service, /stage: dev/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(s.fnDir, { recursive: true, force: true });
  }
});
