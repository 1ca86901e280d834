// berth's catalogs end to end: catalogs over https (own CA) and as an OCI artifact, pinned, vendored
// with `catalog pull` and used with both sources stopped; `fn render` against the installed kpt through
// berth's shim; `catalog annotate` then `kubectl kustomize`; failures that leave the package as it was.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { berthCli, runCommand, type Result } from '../harness/cluster.js';
import { setUpShim, tempTree, type ShimEnv } from '../shim/shim-env.js';
import { pushCatalogArtifact, parseOciRef, sha256Digest } from '../../../src/catalog/oci.js';
import { startHttps, startRegistry, type HttpsSource, type Registry } from './servers.js';

let shim: ShimEnv;
let web: HttpsSource | undefined;
let registry: Registry | undefined;
let cacheDir: string;
before(async () => {
  shim = await setUpShim('catalog');
  cacheDir = mkdtempSync(path.join(tmpdir(), 'berth-cache-'));
});
after(async () => {
  await web?.close();
  await registry?.close();
  rmSync(cacheDir, { recursive: true, force: true });
  await shim?.close();
});
afterEach(async () => assert.deepEqual(await shim.leftovers(), [], 'berth left objects behind'));

function berth(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Result> {
  return runCommand(process.execPath, [berthCli, ...args], { env: shim.env('berth', { BERTH_CACHE_DIR: cacheDir, ...extraEnv }), timeoutMs: 180_000 });
}

const STAMP = '#!/bin/sh\n# exec provider: marks every value STAMP_ME\nexec sed "s/STAMP_ME/stamped/"\n';
const WRONG_PLATFORM = '#!/bin/sh\necho "wrong platform" >&2\nexit 99\n';

function fnEntry(kind: string, runtime: string): string {
  return `  - group: fn.example.org
    names: {kind: ${kind}}
    description: ${kind} for the e2e tests
    publisher: berth-tests
    versions:
    - name: v1
      license: Apache 2.0
      runtime:
${runtime}`;
}

function catalog(name: string, entries: string[]): string {
  return `apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata:\n  name: ${name}\n  labels: {publisher: berth-tests}\nspec:\n  krmFunctions:\n${entries.join('')}`;
}

const SERVICE = `# the cart service (comment must survive)
apiVersion: v1
kind: Service
metadata:
  name: cart
  labels: {team: shop}
  annotations: {note: STAMP_ME}
spec:
  ports:
  - port: 80 # http
`;

function filesOf(dir: string): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(path.join(dir, r)).isDirectory()) walk(r);
      else out[r] = YAML.parseAllDocuments(readFileSync(path.join(dir, r), 'utf8')).map((d) => d.toJS());
    }
  };
  walk('');
  return out;
}

test('https and OCI catalogs, pinned by digest, vendored by catalog pull, then rendered with both sources stopped', async () => {
  web = await startHttps();
  registry = await startRegistry();
  web.files.set('/bin/stamp-amd64', Buffer.from(STAMP));
  web.files.set('/bin/stamp-arm64', Buffer.from(WRONG_PLATFORM));
  const httpsCatalog = Buffer.from(
    catalog('web-fns', [
      fnEntry(
        'Stamp',
        `        exec:\n          platforms:\n          - {bin: stamp, os: linux, arch: arm64, uri: bin/stamp-arm64, sha256: ${sha256Digest(WRONG_PLATFORM).slice(7)}}\n          - {bin: stamp, os: linux, arch: amd64, uri: bin/stamp-amd64, sha256: ${sha256Digest(STAMP).slice(7)}}\n`,
      ),
    ]),
  );
  web.files.set('/web-fns.yaml', httpsCatalog);
  const ociCatalog = Buffer.from(catalog('oci-fns', [fnEntry('SetAnnotations', '        container: {image: "localhost/berth/krm-set-annotations:1"}\n')]));
  const ociRef = `oci://${registry.host}/fns/catalog:1`;
  const manifestDigest = await pushCatalogArtifact(parseOciRef(ociRef), ociCatalog);

  const vendor = mkdtempSync(path.join(tmpdir(), 'berth-vendor-'));
  const pkg = tempTree({
    'pkg/Kptfile':
      'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n  - configPath: stamp.yaml\n  - configPath: owner.yaml\n',
    'pkg/stamp.yaml': 'apiVersion: fn.example.org/v1\nkind: Stamp\nmetadata:\n  name: stamp\n  annotations: {config.kubernetes.io/local-config: "true"}\n',
    'pkg/owner.yaml':
      'apiVersion: fn.example.org/v1\nkind: SetAnnotations\nmetadata:\n  name: owner\n  annotations: {config.kubernetes.io/local-config: "true"}\ndata: {owner: oci}\n',
    'pkg/service.yaml': SERVICE,
  });
  try {
    const pull = await berth([
      'catalog',
      'pull',
      '--ca-file',
      web.caFile,
      '-o',
      vendor,
      `${web.url}/web-fns.yaml@${sha256Digest(httpsCatalog)}`,
      `${ociRef}@${manifestDigest}`,
    ]);
    assert.equal(pull.code, 0, pull.stderr);
    const trusted = [...pull.stdout.matchAll(/--trusted-catalog (\S+)/g)].map((m) => m[1]);
    assert.equal(trusted.length, 2, pull.stdout);

    await web.close();
    await registry.close();
    web = undefined;
    registry = undefined;

    const dir = path.join(pkg.dir, 'pkg');
    const render = await berth([
      'fn',
      'render',
      dir,
      ...trusted.flatMap((t) => ['--trusted-catalog', t]),
      '--cache-dir',
      mkdtempSync(path.join(cacheDir, 'fresh-')),
    ]);
    assert.equal(render.code, 0, render.stderr);
    const service = readFileSync(path.join(dir, 'service.yaml'), 'utf8');
    assert.match(service, /^# the cart service \(comment must survive\)\n/);
    assert.match(service, /- port: 80 # http\n/);
    // amd64 was chosen (the arm64 binary would have failed the render), the container ran as a pod.
    assert.deepEqual(YAML.parse(service).metadata.annotations, { note: 'stamped', owner: 'oci' });
  } finally {
    rmSync(vendor, { recursive: true, force: true });
    pkg.remove();
  }
});

test("berth fn render gives the same resources as kpt fn render through berth's shim, comments kept", async () => {
  const KPTFILE = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
pipeline:
  mutators:
  - image: localhost/berth/krm-set-annotations:1
    configMap: {owner: render-e2e}
  validators:
  - image: localhost/berth/krm-require-label:1
    configMap: {label: team, kinds: Service}
`;
  const SUB =
    'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\npipeline:\n  mutators:\n  - image: localhost/berth/krm-set-annotations:1\n    configMap: {tier: backend}\n';
  const src = tempTree({
    Kptfile: KPTFILE,
    'service.yaml': SERVICE,
    'sub/Kptfile': SUB,
    'sub/settings.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings # inline comment\ndata:\n  mode: fast\n',
  });
  const work = mkdtempSync(path.join(tmpdir(), 'berth-render-'));
  try {
    cpSync(src.dir, path.join(work, 'kpt'), { recursive: true });
    cpSync(src.dir, path.join(work, 'berth'), { recursive: true });
    const kpt = await shim.run('berth', 'kpt', ['fn', 'render', path.join(work, 'kpt')], { timeoutMs: 180_000 });
    assert.equal(kpt.code, 0, kpt.stderr);
    const ours = await berth(['fn', 'render', path.join(work, 'berth')]);
    assert.equal(ours.code, 0, ours.stderr);
    assert.deepEqual(filesOf(path.join(work, 'berth')), filesOf(path.join(work, 'kpt')));
    assert.equal(YAML.parse(readFileSync(path.join(work, 'berth/sub/settings.yaml'), 'utf8')).metadata.annotations.tier, 'backend');
    assert.match(readFileSync(path.join(work, 'berth/service.yaml'), 'utf8'), /^# the cart service \(comment must survive\)\n/);
    assert.match(readFileSync(path.join(work, 'berth/sub/settings.yaml'), 'utf8'), /name: settings # inline comment/);
  } finally {
    rmSync(work, { recursive: true, force: true });
    src.remove();
  }
});

test('catalog annotate, then kubectl kustomize --enable-alpha-plugins runs configs that named only apiVersion/kind', async () => {
  const pkg = tempTree({
    'catalog.yaml': catalog('local-fns', [fnEntry('SetAnnotations', '        container: {image: "localhost/berth/krm-set-annotations:1"}\n')]),
    'app/kustomization.yaml': 'resources:\n- service.yaml\ntransformers:\n- owner.yaml\n',
    'app/service.yaml': SERVICE,
    'app/owner.yaml': '# who owns it\napiVersion: fn.example.org/v1\nkind: SetAnnotations\nmetadata:\n  name: owner\ndata: {owner: kustomize-e2e}\n',
  });
  try {
    const app = path.join(pkg.dir, 'app');
    const before = await runCommand('kubectl', ['kustomize', '--enable-alpha-plugins', app], { env: shim.env('berth') });
    assert.notEqual(before.code, 0, 'kustomize cannot run a config that names no function');
    const annotate = await berth(['catalog', 'annotate', app, '--trusted-catalog', path.join(pkg.dir, 'catalog.yaml')]);
    assert.equal(annotate.code, 0, annotate.stderr);
    const owner = readFileSync(path.join(app, 'owner.yaml'), 'utf8');
    assert.match(owner, /^# who owns it\n/);
    assert.match(owner, /config\.kubernetes\.io\/function: \|\n\s+container:\n\s+image: localhost\/berth\/krm-set-annotations:1/);
    const built = await runCommand('kubectl', ['kustomize', '--enable-alpha-plugins', app], { env: shim.env('berth'), timeoutMs: 180_000 });
    assert.equal(built.code, 0, built.stderr);
    assert.equal(YAML.parse(built.stdout).metadata.annotations.owner, 'kustomize-e2e');
  } finally {
    pkg.remove();
  }
});

test('malformed catalogs, unknown kinds and a download cut midway: clear errors, the package unchanged', async () => {
  web ??= await startHttps();
  web.files.set('/cut.yaml', 'cut');
  const pkg = tempTree({
    'bad.yaml':
      'apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata: {name: bad}\nspec:\n  krmFunctions:\n  - group: fn.example.org\n    names: {kind: X}\n    description: d\n    versions: []\n',
    'pkg/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n  - configPath: cfg.yaml\n',
    'pkg/cfg.yaml': 'apiVersion: fn.example.org/v1\nkind: Unknown\nmetadata:\n  name: cfg\n',
    'pkg/service.yaml': SERVICE,
    'good.yaml': catalog('good', [fnEntry('SetAnnotations', '        container: {image: "localhost/berth/krm-set-annotations:1"}\n')]),
  });
  const dir = path.join(pkg.dir, 'pkg');
  const snapshot = filesOf(dir);
  try {
    const validate = await berth(['catalog', 'validate', path.join(pkg.dir, 'bad.yaml')]);
    assert.equal(validate.code, 1);
    assert.match(validate.stderr, /bad\.yaml:6:5: spec\.krmFunctions\.0\.publisher: missing required field "publisher"/);
    assert.match(validate.stderr, /bad\.yaml:9:15: spec\.krmFunctions\.0\.versions: must NOT have fewer than 1 items/);

    const unknown = await berth(['fn', 'render', dir, '--trusted-catalog', path.join(pkg.dir, 'good.yaml')]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /unknown function kind Unknown \(fn\.example\.org\/v1\): no trusted catalog provides it; searched good/);

    const cut = await berth(['fn', 'render', dir, '--ca-file', web.caFile, '--trusted-catalog', `${web.url}/cut.yaml`]);
    assert.equal(cut.code, 1);
    assert.match(cut.stderr, /download of https:\/\/127\.0\.0\.1:\d+\/cut\.yaml failed midway \(\d+ of 4096 bytes\)/);
    assert.deepEqual(filesOf(dir), snapshot);
  } finally {
    pkg.remove();
  }
});
