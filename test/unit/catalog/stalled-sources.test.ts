// A stalled https or OCI catalog source never hangs berth: every download fails within the fetch timeout
// (BERTH_FETCH_TIMEOUT_SECONDS, lowered here) naming the URL, and nothing partial is cached or vendored.
import { after, afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureExecutable } from '../../../src/catalog/exec.js';
import type { ExecPlatform } from '../../../src/catalog/model.js';
import { sha256Digest } from '../../../src/catalog/oci.js';
import { pullCatalogs } from '../../../src/catalog/pull.js';
import { loadCatalog, readCatalogBytes } from '../../../src/catalog/source.js';
import { fetchTimeoutMs, fetchUrl } from '../../../src/registry/http.js';
import { startChallengingRegistry, startHeadersThenStall, startSilentServer, startStallingRegistry, type StallingServer } from './stalling-servers.js';
import { scratchDir } from '../../util/scratch.js';

const berth = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const CATALOG = Buffer.from(`apiVersion: config.kubernetes.io/v1alpha1
kind: Catalog
metadata:
  name: stalled
spec:
  krmFunctions:
  - group: fn.example.org
    names: {kind: Stamp}
    description: a function whose catalog never fully arrives
    publisher: berth-tests
    versions:
    - name: v1
      license: Apache 2.0
      runtime:
        container: {image: "localhost/berth/busybox:1"}
`);

/** Temp folders of this file, removed when it ends. */
const temps: string[] = [];
const tempDir = (prefix: string): string => {
  const dir = scratchDir(prefix);
  temps.push(dir);
  return dir;
};
after(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

let servers: StallingServer[] = [];
let savedTimeout: string | undefined;
beforeEach(() => {
  savedTimeout = process.env.BERTH_FETCH_TIMEOUT_SECONDS;
  process.env.BERTH_FETCH_TIMEOUT_SECONDS = '0.5';
});
afterEach(async () => {
  if (savedTimeout === undefined) delete process.env.BERTH_FETCH_TIMEOUT_SECONDS;
  else process.env.BERTH_FETCH_TIMEOUT_SECONDS = savedTimeout;
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

function escapeRe(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => path.join(e.parentPath, e.name));
}

/** Awaits `work`, which must fail matching `message`, in at least the timeout and well under 10 times it. */
async function failsInTime(work: () => Promise<unknown>, message: RegExp): Promise<void> {
  const started = Date.now();
  await assert.rejects(work, message);
  const took = Date.now() - started;
  assert.ok(took >= 450 && took < 5000, `failed after ${took} ms; the timeout is 500 ms`);
}

test('an https source that accepts and never answers: "catalog source URL stalled: no data for 0.5 s"', async () => {
  const silent = await startSilentServer();
  servers.push(silent);
  await failsInTime(() => loadCatalog(`${silent.url}/cat.yaml`), new RegExp(`catalog source ${escapeRe(silent.url)}/cat\\.yaml stalled: no data for 0\\.5 s$`));
  assert.deepEqual(silent.requests, ['connection']);
});

test('an https source that sends headers and part of the body, then stalls: fails, and a pinned catalog is not cached', async () => {
  const web = await startHeadersThenStall(CATALOG.subarray(0, 60).toString());
  servers.push(web);
  const cacheDir = tempDir('berth-cache-');
  await failsInTime(
    () => readCatalogBytes(`${web.url}/cat.yaml@${sha256Digest(CATALOG)}`, { caFile: web.caFile, cacheDir }),
    new RegExp(`catalog source ${web.url}/cat\\.yaml stalled: no data for 0\\.5 s`),
  );
  assert.deepEqual(web.requests, ['/cat.yaml']);
  assert.deepEqual(filesUnder(cacheDir), []);
});

test('an executable download that stalls midway: fails naming the URL, nothing cached', async () => {
  const web = await startHeadersThenStall('#!/bin/sh\n');
  servers.push(web);
  const cacheDir = tempDir('berth-cache-');
  const platform: ExecPlatform = { bin: 'stamp', os: 'linux', arch: 'amd64', uri: 'bin/stamp', sha256: '0'.repeat(64) };
  await failsInTime(
    () => ensureExecutable(platform, { base: `${web.url}/`, name: 'web' }, { cacheDir, caFile: web.caFile }),
    new RegExp(`executable ${web.url}/bin/stamp stalled: no data for 0\\.5 s`),
  );
  assert.deepEqual(filesUnder(cacheDir), []);
});

test('a registry that stalls mid-blob: catalog pull fails naming the blob URL; nothing cached, nothing vendored', async () => {
  const registry = await startStallingRegistry('fns/catalog', '1', CATALOG);
  servers.push(registry);
  const cacheDir = tempDir('berth-cache-');
  const out = path.join(tempDir('berth-vendor-'), 'vendor');
  const ref = `oci://${registry.host}/fns/catalog:1@${registry.manifestDigest}`;
  const blobUrl = `${registry.url}/v2/fns/catalog/blobs/${registry.layerDigest}`;
  await failsInTime(
    () => pullCatalogs([ref], out, { cacheDir }),
    new RegExp(`catalog source ${escapeRe(ref)}: layer ${escapeRe(blobUrl)} stalled: no data for 0\\.5 s`),
  );
  assert.deepEqual(registry.requests, [`/v2/fns/catalog/manifests/${registry.manifestDigest}`, `/v2/fns/catalog/blobs/${registry.layerDigest}`]);
  assert.deepEqual(filesUnder(cacheDir), []);
  assert.equal(existsSync(out), false);
  assert.deepEqual(readdirSync(path.dirname(out)), [], 'no staging folder left behind');
});

function runBerth(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    // A hang is a failure of its own: killed at 20 s, well past the 1 s timeout.
    execFile(
      process.execPath,
      [berth, ...args],
      { env: { ...process.env, BERTH_CONFIG: '/nonexistent/berth.yaml', BERTH_FETCH_TIMEOUT_SECONDS: '1', ...env }, timeout: 20_000 },
      (err, _stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stderr, ms: Date.now() - started });
      },
    );
  });
}

test('berth catalog pull, fn render and fn eval (CLI) fail within the timeout naming the stalled URL', async () => {
  const registry = await startStallingRegistry('fns/catalog', '1', CATALOG);
  const silent = await startSilentServer();
  const web = await startHeadersThenStall(CATALOG.subarray(0, 60).toString());
  servers.push(registry, silent, web);
  const cacheDir = tempDir('berth-cache-');
  const out = path.join(tempDir('berth-vendor-'), 'vendor');
  const pkg = tempDir('berth-pkg-');
  writeFileSync(path.join(pkg, 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n  - configPath: stamp.yaml\n');
  writeFileSync(path.join(pkg, 'stamp.yaml'), 'apiVersion: fn.example.org/v1\nkind: Stamp\nmetadata:\n  name: stamp\n');

  const pull = await runBerth(['catalog', 'pull', '-o', out, `oci://${registry.host}/fns/catalog:1`], { BERTH_CACHE_DIR: cacheDir });
  assert.equal(pull.code, 1, pull.stderr);
  assert.ok(pull.stderr.includes(`${registry.url}/v2/fns/catalog/blobs/${registry.layerDigest} stalled: no data for 1 s`), pull.stderr);
  assert.equal(existsSync(out), false);

  const render = await runBerth(['fn', 'render', pkg, '--trusted-catalog', `${silent.url}/cat.yaml`], { BERTH_CACHE_DIR: cacheDir });
  assert.equal(render.code, 1, render.stderr);
  assert.ok(render.stderr.includes(`berth: catalog source ${silent.url}/cat.yaml stalled: no data for 1 s`), render.stderr);

  const evalRun = await runBerth(
    ['fn', 'eval', pkg, '--fn-config', path.join(pkg, 'stamp.yaml'), '--trusted-catalog', `${web.url}/cat.yaml`, '--ca-file', web.caFile!],
    { BERTH_CACHE_DIR: cacheDir },
  );
  assert.equal(evalRun.code, 1, evalRun.stderr);
  assert.ok(evalRun.stderr.includes(`catalog source ${web.url}/cat.yaml stalled: no data for 1 s`), evalRun.stderr);

  for (const r of [pull, render, evalRun]) assert.ok(r.ms < 10_000, `took ${r.ms} ms with a 1 s timeout`);
  assert.deepEqual(filesUnder(cacheDir), []);
});

test('berth fn eval (CLI) from a registry that stalls mid-blob, and from one whose token service never answers: fails within the timeout naming the URL', async () => {
  const registry = await startStallingRegistry('fns/catalog', '1', CATALOG);
  const silent = await startSilentServer();
  const realm = `${silent.url.replace('https:', 'http:')}/token`;
  const guarded = await startChallengingRegistry(realm);
  servers.push(registry, silent, guarded);
  const cacheDir = tempDir('berth-cache-');
  const pkg = tempDir('berth-pkg-');
  writeFileSync(path.join(pkg, 'stamp.yaml'), 'apiVersion: fn.example.org/v1\nkind: Stamp\nmetadata:\n  name: stamp\n');
  const fnEval = (catalog: string) =>
    runBerth(['fn', 'eval', pkg, '--fn-config', path.join(pkg, 'stamp.yaml'), '--trusted-catalog', catalog], { BERTH_CACHE_DIR: cacheDir });

  const blob = await fnEval(`oci://${registry.host}/fns/catalog:1@${registry.manifestDigest}`);
  assert.equal(blob.code, 1, blob.stderr);
  assert.ok(
    blob.stderr.includes(
      `berth: catalog source oci://${registry.host}/fns/catalog:1@${registry.manifestDigest}: layer ${registry.url}/v2/fns/catalog/blobs/${registry.layerDigest} stalled: no data for 1 s`,
    ),
    blob.stderr,
  );

  const token = await fnEval(`oci://${guarded.host}/fns/catalog:1`);
  assert.equal(token.code, 1, token.stderr);
  assert.ok(
    token.stderr.includes(
      `berth: token service of ${guarded.host}: GET ${realm}?service=stall&scope=repository%3Afns%2Fcatalog%3Apull stalled: no data for 1 s`,
    ),
    token.stderr,
  );
  assert.deepEqual(guarded.requests, ['/v2/fns/catalog/manifests/1']);

  for (const r of [blob, token]) assert.ok(r.ms < 10_000, `took ${r.ms} ms with a 1 s timeout`);
  assert.deepEqual(filesUnder(cacheDir), []);
});

test('BERTH_FETCH_TIMEOUT_SECONDS: default 30 s, fractions allowed, nonsense refused before any request', async () => {
  assert.equal(fetchTimeoutMs({}), 30_000);
  assert.equal(fetchTimeoutMs({ BERTH_FETCH_TIMEOUT_SECONDS: '2.5' }), 2500);
  for (const bad of ['0', '-1', 'ten'])
    assert.throws(
      () => fetchTimeoutMs({ BERTH_FETCH_TIMEOUT_SECONDS: bad }),
      new RegExp(`BERTH_FETCH_TIMEOUT_SECONDS=${bad} is not a positive number of seconds`),
    );
  process.env.BERTH_FETCH_TIMEOUT_SECONDS = 'ten';
  await assert.rejects(fetchUrl('https://127.0.0.1:1/x'), /BERTH_FETCH_TIMEOUT_SECONDS=ten/);
});
