import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CatalogError, parseCatalog } from '../../../src/catalog/parse.js';
import { resolveFunction, explainResolution, ResolveError } from '../../../src/catalog/resolve.js';
import { ensureExecutable, selectPlatform } from '../../../src/catalog/exec.js';
import { sha256Digest } from '../../../src/catalog/oci.js';
import { loadCatalog, parseRef } from '../../../src/catalog/source.js';
import type { Catalog } from '../../../src/catalog/model.js';
import { scratchDir } from '../../util/scratch.js';

/** A catalog with one function per [kind, version, image] triple. */
function catalogYaml(name: string, fns: Array<{ kind: string; version?: string; image?: string; deprecated?: boolean; group?: string }>): string {
  const entries = fns
    .map(
      (f) => `  - group: ${f.group ?? 'fn.example.org'}
    names: {kind: ${f.kind}}
    description: test function
    publisher: ${name}.example.org
    versions:
    - name: ${f.version ?? 'v1'}
${f.deprecated ? '      deprecated: true\n' : ''}      license: Apache 2.0
      runtime:
        container: {image: "${f.image ?? `${name}/${f.kind.toLowerCase()}:1`}"}
`,
    )
    .join('');
  return `apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata:\n  name: ${name}\n  labels: {publisher: ${name}.example.org}\nspec:\n  krmFunctions:\n${entries}`;
}

const parse = (text: string, ref = 'mem.yaml'): Catalog => parseCatalog(text, { ref, base: 'file:///tmp/' });

test('a valid catalog parses into its functions and publisher', () => {
  const c = parse(catalogYaml('alpha', [{ kind: 'SetTeam' }, { kind: 'Other', version: 'v1beta1' }]));
  assert.equal(c.name, 'alpha');
  assert.equal(c.publisher, 'alpha.example.org');
  assert.deepEqual(
    c.functions.map((f) => `${f.group}/${f.versions[0].name} ${f.names.kind}`),
    ['fn.example.org/v1 SetTeam', 'fn.example.org/v1beta1 Other'],
  );
  assert.match(c.digest, /^sha256:[0-9a-f]{64}$/);
});

test('schema errors name the file, line, column and field', () => {
  const bad = catalogYaml('alpha', [{ kind: 'SetTeam' }])
    .replace('      license: Apache 2.0\n', '      license: MIT\n      colour: blue\n')
    .replace('    publisher: alpha.example.org\n', '');
  let err: unknown;
  try {
    parse(bad, 'cat.yaml');
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof CatalogError, String(err));
  const byField = Object.fromEntries(err.issues.map((i) => [i.field, i]));
  assert.equal(byField['spec.krmFunctions.0.publisher']?.message, 'missing required field "publisher"');
  assert.equal(byField['spec.krmFunctions.0.publisher']?.line, 8);
  assert.match(byField['spec.krmFunctions.0.versions.0.license']?.message ?? '', /must be one of "Apache 2.0"/);
  assert.equal(byField['spec.krmFunctions.0.versions.0.license']?.line, 13);
  assert.equal(byField['spec.krmFunctions.0.versions.0.colour']?.line, 14);
  assert.equal(byField['spec.krmFunctions.0.versions.0.colour']?.column, 7);
  assert.match(err.message, /cat\.yaml:13:16: spec\.krmFunctions\.0\.versions\.0\.license: must be one of/);
});

test('YAML syntax errors and wrong kinds are reported with a position', () => {
  assert.throws(
    () => parse('apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata: {name: x\n'),
    (e: unknown) => e instanceof CatalogError && /mem\.yaml:\d+:\d+/.test(e.message),
  );
  assert.throws(
    () => parse('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nspec: {}\n'),
    (e: unknown) =>
      e instanceof CatalogError &&
      /apiVersion: must be "config.kubernetes.io\/v1alpha1"/.test(e.message) &&
      /kind: must be one of "Catalog", "KRMFunctionDefinition"/.test(e.message),
  );
});

test('a KRMFunctionDefinition alone is a catalog of one', () => {
  const c = parse(`apiVersion: config.kubernetes.io/v1alpha1
kind: KRMFunctionDefinition
metadata: {name: solo}
spec:
  group: fn.example.org
  names: {kind: Solo}
  description: d
  publisher: p
  versions:
  - name: v1
    runtime:
      exec:
        platforms:
        - {bin: solo, os: linux, arch: amd64, uri: solo.sh, sha256: ${'a'.repeat(64)}}
`);
  assert.equal(c.functions.length, 1);
  assert.equal(c.functions[0].versions[0].runtime.exec?.platforms[0].bin, 'solo');
});

test('resolution across three catalogs: group+version+kind, catalogs in order, first match wins', () => {
  const a = parse(catalogYaml('a', [{ kind: 'SetTeam', version: 'v2' }]));
  const b = parse(
    catalogYaml('b', [
      { kind: 'SetTeam', version: 'v1' },
      { kind: 'SetTeam', version: 'v1', image: 'b/second:1' },
    ]),
  );
  const c = parse(
    catalogYaml('c', [
      { kind: 'SetTeam', version: 'v1' },
      { kind: 'SetTeam', version: 'v1', group: 'other.org' },
    ]),
  );
  const r = resolveFunction({ apiVersion: 'fn.example.org/v1', kind: 'SetTeam' }, [a, b, c]);
  assert.equal(r.catalog.name, 'b');
  assert.equal(r.version.runtime.container?.image, 'b/settean:1'.replace('settean', 'setteam'));
  assert.deepEqual(
    r.matches.map((m) => `${m.catalog.name}:${m.version.runtime.container?.image}`),
    ['b:b/setteam:1', 'b:b/second:1', 'c:c/setteam:1'],
  );
  assert.equal(resolveFunction({ apiVersion: 'fn.example.org/v1', kind: 'SetTeam' }, [c, b, a]).catalog.name, 'c');
  assert.equal(resolveFunction({ apiVersion: 'other.org/v1', kind: 'SetTeam' }, [a, b, c]).catalog.name, 'c');
  assert.equal(resolveFunction({ apiVersion: 'fn.example.org/v2', kind: 'SetTeam' }, [c, b, a]).catalog.name, 'a');
  const explained = explainResolution(r, 'fn.example.org/v1', 'SetTeam');
  assert.match(explained, /3 match\(es\), first wins\n {2}\* b \(mem\.yaml\): container b\/setteam:1\n {4}b .*second.*\n {4}c /);
});

test('unknown kinds fail with the catalogs searched; untrusted-only matches name the catalog and the flag', () => {
  const trusted = parse(catalogYaml('mine', [{ kind: 'SetTeam' }]), 'mine.yaml');
  const other = parse(catalogYaml('theirs', [{ kind: 'Inject' }]), 'https://example.org/theirs.yaml');
  assert.throws(
    () => resolveFunction({ apiVersion: 'fn.example.org/v1', kind: 'Nope' }, [trusted], [other]),
    (e: unknown) => e instanceof ResolveError && /unknown function kind Nope .*searched mine/.test(e.message),
  );
  assert.throws(
    () => resolveFunction({ apiVersion: 'fn.example.org/v1', kind: 'Inject' }, [trusted], [other]),
    (e: unknown) =>
      e instanceof ResolveError &&
      /provided only by catalog theirs \(https:\/\/example\.org\/theirs\.yaml\), which is not trusted: pass --trusted-catalog https:\/\/example\.org\/theirs\.yaml/.test(
        e.message,
      ),
  );
  assert.throws(() => resolveFunction({ apiVersion: 'fn.example.org/v3', kind: 'SetTeam' }, [trusted]), /known: fn\.example\.org\/\{v1\} in mine/);
});

test('a deprecated version still resolves, with a warning naming the newer one', () => {
  const c = parse(
    catalogYaml('a', [{ kind: 'SetTeam', version: 'v1beta1', deprecated: true }]).replace(
      '    - name: v1beta1',
      '    - name: v1\n      runtime: {container: {image: new:1}}\n    - name: v1beta1',
    ),
  );
  const r = resolveFunction({ apiVersion: 'fn.example.org/v1beta1', kind: 'SetTeam' }, [c]);
  assert.deepEqual(r.warnings, ['SetTeam fn.example.org/v1beta1 is deprecated in catalog a; use fn.example.org/v1']);
  assert.deepEqual(resolveFunction({ apiVersion: 'fn.example.org/v1', kind: 'SetTeam' }, [c]).warnings, []);
});

test('platform selection picks the os/arch entry, nothing else', () => {
  const platforms = [
    { bin: 'f', os: 'linux' as const, arch: 'arm64' as const, uri: 'a', sha256: '1' },
    { bin: 'f', os: 'linux' as const, arch: 'amd64' as const, uri: 'b', sha256: '2' },
    { bin: 'f', os: 'darwin' as const, arch: 'arm64' as const, uri: 'c', sha256: '3' },
  ];
  assert.equal(selectPlatform(platforms, { os: 'linux', arch: 'amd64' })?.uri, 'b');
  assert.equal(selectPlatform(platforms, { os: 'darwin', arch: 'arm64' })?.uri, 'c');
  assert.equal(selectPlatform(platforms, { os: 'windows', arch: 'amd64' }), undefined);
});

test('executables are verified by sha256: a mismatch is refused and nothing is cached', async () => {
  const dir = scratchDir('berth-exec-');
  try {
    writeFileSync(path.join(dir, 'fn.sh'), '#!/bin/sh\ncat\n');
    const good = sha256Digest(readFileSync(path.join(dir, 'fn.sh')));
    const catalog = { name: 'c', base: pathToFileURL(`${dir}/catalog.yaml`).href };
    const cache = path.join(dir, 'cache');
    const file = await ensureExecutable({ bin: 'fn', os: 'linux', arch: 'amd64', uri: 'fn.sh', sha256: good }, catalog, { cacheDir: cache });
    assert.equal(readFileSync(file, 'utf8'), '#!/bin/sh\ncat\n');
    await assert.rejects(
      ensureExecutable({ bin: 'fn', os: 'linux', arch: 'amd64', uri: 'fn.sh', sha256: 'b'.repeat(64) }, catalog, { cacheDir: cache }),
      /sha256 mismatch for fn .*refusing to run it/,
    );
    assert.equal(existsSync(path.join(cache, 'exec', `sha256-${'b'.repeat(64)}`)), false);
    // A cached file changed after download is caught on the next use.
    writeFileSync(file, '#!/bin/sh\necho evil\n');
    await assert.rejects(
      ensureExecutable({ bin: 'fn', os: 'linux', arch: 'amd64', uri: 'fn.sh', sha256: good }, catalog, { cacheDir: cache }),
      /sha256 mismatch/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('references: pins parse, and a file whose digest differs from its pin is refused', async () => {
  assert.deepEqual(parseRef(`https://h/c.yaml@sha256:${'c'.repeat(64)}`), { kind: 'https', location: 'https://h/c.yaml', pin: `sha256:${'c'.repeat(64)}` });
  assert.equal(parseRef(`oci://127.0.0.1:5000/fns/cat:1@sha256:${'d'.repeat(64)}`).pin, `sha256:${'d'.repeat(64)}`);
  assert.throws(() => parseRef('git://x/y'), /file, an https:\/\/ URL or an oci:\/\/ reference/);
  const dir = scratchDir('berth-cat-');
  try {
    const text = catalogYaml('pinned', [{ kind: 'SetTeam' }]);
    writeFileSync(path.join(dir, 'c.yaml'), text);
    const ok = await loadCatalog(`${path.join(dir, 'c.yaml')}@${sha256Digest(text)}`);
    assert.equal(ok.name, 'pinned');
    await assert.rejects(loadCatalog(`${path.join(dir, 'c.yaml')}@sha256:${'e'.repeat(64)}`), /not the pinned sha256:e+: refusing it/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
