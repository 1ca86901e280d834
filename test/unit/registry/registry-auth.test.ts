// Registries as people run them: Debian's docker-registry on 127.0.0.1 with token authentication (a
// token server of the test's own) and with htpasswd Basic authentication. Catalog push and pull, exec
// blobs and image configs all go through berth's one registry client: they work with credentials from
// a docker config file or a docker-credential-* helper, and without them fail with a sentence naming
// the registry and `docker login`.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { ensureExecutable } from '../../../src/catalog/exec.js';
import { parseOciRef, pullCatalogArtifact, pushBlob, pushCatalogArtifact, sha256Digest } from '../../../src/catalog/oci.js';
import { readImageInfo } from '../../../src/dockerapi/images/image-config.js';
import { RegistryClient } from '../../../src/registry/client.js';
import { clearTokenCache } from '../../../src/registry/token.js';
import { dockerConfig, startHtpasswdRegistry, startTokenRegistry, type AuthRegistry } from './auth-servers.js';
import { scratchDir } from '../../util/scratch.js';

const berth = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const CATALOG = Buffer.from(`apiVersion: config.kubernetes.io/v1alpha1
kind: Catalog
metadata:
  name: private-fns
spec:
  krmFunctions:
  - group: fn.example.org
    names: {kind: Stamp}
    description: a function from a registry that wants credentials
    publisher: berth-tests
    versions:
    - name: v1
      runtime:
        container: {image: "localhost/berth/busybox:1"}
`);
const EXECUTABLE = Buffer.from('#!/bin/sh\ncat\n');

const saved = { DOCKER_CONFIG: process.env.DOCKER_CONFIG, PATH: process.env.PATH };
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  clearTokenCache();
});

/** Uses a docker config made for `host` for what follows (and its helper folder first on PATH). */
function useCredentials(host: string, how: Parameters<typeof dockerConfig>[1]): string {
  const cfg = dockerConfig(host, how);
  process.env.DOCKER_CONFIG = cfg.dir;
  process.env.PATH = `${cfg.bin}:${saved.PATH}`;
  return cfg.dir;
}

function runBerth(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [berth, ...args],
      { env: { ...process.env, BERTH_CONFIG: '/nonexistent/berth.yaml', ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

/** Pushes a one-layer OCI image whose config says Cmd [httpd]; returns its config's digest. */
async function pushImage(host: string, repository: string): Promise<string> {
  const client = new RegistryClient(host);
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Cmd: ['httpd'] } }));
  const layer = Buffer.from('not really a layer');
  await pushBlob(client, repository, config);
  await pushBlob(client, repository, layer);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha256Digest(config), size: config.length },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: sha256Digest(layer), size: layer.length }],
    }),
  );
  await client.request(repository, 'pull,push', {
    method: 'PUT',
    path: `${repository}/manifests/1`,
    headers: { 'Content-Type': 'application/vnd.oci.image.manifest.v1+json' },
    body: manifest,
  });
  return sha256Digest(config);
}

for (const mode of ['token', 'htpasswd'] as const) {
  describe(`docker-registry with ${mode} authentication`, () => {
    let registry: AuthRegistry;
    let host = '';
    let configDigest = '';
    const blobRef = (): string => `oci://${host}/private/fns@${sha256Digest(EXECUTABLE)}`;
    const loginHint = (): RegExp =>
      new RegExp(`registry ${host.replace(/\./g, '\\.')} refused to (pull|push to|find [^)]*) .*run docker login ${host.replace(/\./g, '\\.')}`);

    before(async () => {
      registry = mode === 'token' ? await startTokenRegistry() : await startHtpasswdRegistry();
      host = registry.host;
    });
    after(() => registry.close());

    test('without credentials a push is refused, naming the registry and docker login', async () => {
      useCredentials(host, 'none');
      await assert.rejects(pushCatalogArtifact(parseOciRef(`oci://${host}/private/catalog:1`), CATALOG), loginHint());
    });

    test('with credentials from the docker config (auths): catalog push and pull, exec blob, image config', async () => {
      useCredentials(host, 'auths');
      const digest = await pushCatalogArtifact(parseOciRef(`oci://${host}/private/catalog:1`), CATALOG);
      const pulled = await pullCatalogArtifact(parseOciRef(`oci://${host}/private/catalog:1@${digest}`));
      assert.equal(pulled.layer.toString(), CATALOG.toString());
      await pushBlob(new RegistryClient(host), 'private/fns', EXECUTABLE);
      const cacheDir = scratchDir('berth-cache-');
      const file = await ensureExecutable(
        { bin: 'stamp', os: 'linux', arch: 'amd64', uri: blobRef(), sha256: sha256Digest(EXECUTABLE) },
        { base: 'file:///', name: 'private-fns' },
        { cacheDir },
      );
      assert.equal(readFileSync(file, 'utf8'), EXECUTABLE.toString());
      configDigest = await pushImage(host, 'private/web');
      const info = await readImageInfo(`${host}/private/web:1`, { platform: { os: 'linux', architecture: 'amd64' } });
      assert.deepEqual(info.config.Cmd, ['httpd']);
      assert.equal(info.configDigest, configDigest);
      if (registry.tokenServer)
        assert.ok(
          registry.tokenServer.log.some((l) => l.startsWith('basic repository:private/catalog:pull,push -> pull,push')),
          registry.tokenServer.log.join('\n'),
        );
    });

    test('without credentials: catalog pull, exec blob and image config are refused, naming the registry and docker login', async () => {
      useCredentials(host, 'none');
      await assert.rejects(pullCatalogArtifact(parseOciRef(`oci://${host}/private/catalog:1`)), loginHint());
      const cacheDir = scratchDir('berth-cache-');
      await assert.rejects(
        ensureExecutable(
          { bin: 'stamp', os: 'linux', arch: 'amd64', uri: blobRef(), sha256: sha256Digest(EXECUTABLE) },
          { base: 'file:///', name: 'private-fns' },
          { cacheDir },
        ),
        loginHint(),
      );
      assert.equal(existsSync(path.join(cacheDir, 'exec')), false, 'nothing cached');
      await assert.rejects(readImageInfo(`${host}/private/web:1`), loginHint());
    });

    test('a wrong password: the refusal says which credentials were refused', async () => {
      const dir = useCredentials(host, 'wrong-password');
      await assert.rejects(pullCatalogArtifact(parseOciRef(`oci://${host}/private/catalog:1`)), (err: Error) => {
        assert.ok(err.message.includes(`registry ${host} refused`), err.message);
        assert.ok(err.message.includes(`the credentials from ${path.join(dir, 'config.json')} were not accepted: run docker login ${host} again`), err.message);
        return true;
      });
    });

    for (const how of ['credsStore', 'credHelpers'] as const) {
      test(`credentials from a docker-credential-* helper on PATH (${how}): catalog pull, exec blob, image config`, async () => {
        const dir = useCredentials(host, how);
        const pulled = await pullCatalogArtifact(parseOciRef(`oci://${host}/private/catalog:1`));
        assert.equal(pulled.layer.toString(), CATALOG.toString());
        const cacheDir = scratchDir('berth-cache-');
        await ensureExecutable(
          { bin: 'stamp', os: 'linux', arch: 'amd64', uri: blobRef(), sha256: sha256Digest(EXECUTABLE) },
          { base: 'file:///', name: 'private-fns' },
          { cacheDir },
        );
        assert.deepEqual((await readImageInfo(`${host}/private/web:1`)).config.Cmd, ['httpd']);
        // The helper was asked with the server URL on stdin, as docker asks it.
        assert.match(readFileSync(path.join(dir, 'helper.log'), 'utf8'), new RegExp(`^${host}$`, 'm'));
      });
    }

    test('berth catalog push / pull (CLI): with a docker config, and without one (exit 1, docker login named)', async () => {
      const withCreds = dockerConfig(host, 'auths');
      const none = dockerConfig(host, 'none');
      const dir = scratchDir('berth-cli-');
      const file = path.join(dir, 'catalog.yaml');
      writeFileSync(file, CATALOG);
      const ref = `oci://${host}/private/cli:1`;
      const refused = await runBerth(['catalog', 'push', file, ref], { DOCKER_CONFIG: none.dir });
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, loginHint());
      const pushed = await runBerth(['catalog', 'push', file, ref], { DOCKER_CONFIG: withCreds.dir });
      assert.equal(pushed.code, 0, pushed.stderr);
      const pinned = /--trusted-catalog (\S+)/.exec(pushed.stdout)?.[1];
      assert.match(pinned ?? '', new RegExp(`^${ref}@sha256:[0-9a-f]{64}$`));
      const denied = await runBerth(['catalog', 'pull', '-o', path.join(dir, 'vendor'), pinned!], {
        DOCKER_CONFIG: none.dir,
        BERTH_CACHE_DIR: path.join(dir, 'cache'),
      });
      assert.equal(denied.code, 1, denied.stderr);
      assert.match(denied.stderr, loginHint());
      assert.equal(existsSync(path.join(dir, 'vendor')), false);
      const vendored = await runBerth(['catalog', 'pull', '-o', path.join(dir, 'vendor'), pinned!], {
        DOCKER_CONFIG: withCreds.dir,
        BERTH_CACHE_DIR: path.join(dir, 'cache'),
      });
      assert.equal(vendored.code, 0, vendored.stderr);
      assert.deepEqual(YAML.parse(readFileSync(path.join(dir, 'vendor', 'private-fns.yaml'), 'utf8')), YAML.parse(CATALOG.toString()));
    });

    test('berth fn eval (CLI): a catalog in the registry whose exec provider is a registry blob, run with credentials; refused without', async () => {
      const creds = useCredentials(host, 'auths');
      await pushBlob(new RegistryClient(host), 'private/fns', EXECUTABLE);
      const catalog = Buffer.from(
        `apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionDefinition\nmetadata: {name: blob-fns}\nspec:\n  group: fn.example.org\n  names: {kind: Echo}\n  description: echoes\n  publisher: berth-tests\n  versions:\n  - name: v1\n    runtime:\n      exec:\n        platforms:\n        - {bin: echo-fn, os: linux, arch: amd64, uri: "${blobRef()}", sha256: "${sha256Digest(EXECUTABLE).slice(7)}"}\n        - {bin: echo-fn, os: linux, arch: arm64, uri: "${blobRef()}", sha256: "${sha256Digest(EXECUTABLE).slice(7)}"}\n`,
      );
      const ref = `oci://${host}/private/blob-fns:1`;
      await pushCatalogArtifact(parseOciRef(ref), catalog);
      const dir = scratchDir('berth-fn-');
      writeFileSync(path.join(dir, 'svc.yaml'), 'apiVersion: v1\nkind: Service\nmetadata:\n  name: cart\n');
      const config = path.join(dir, 'echo.yaml');
      writeFileSync(config, 'apiVersion: fn.example.org/v1\nkind: Echo\nmetadata:\n  name: echo\n');
      const args = ['fn', 'eval', dir, '--fn-config', config, '--trusted-catalog', ref, '-o', 'stdout'];
      const none = dockerConfig(host, 'none');
      const refused = await runBerth(args, { DOCKER_CONFIG: none.dir, BERTH_CACHE_DIR: path.join(dir, 'cache') });
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, loginHint());
      const ran = await runBerth(args, { DOCKER_CONFIG: creds, BERTH_CACHE_DIR: path.join(dir, 'cache') });
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.stdout, /kind: Service[\s\S]*name: cart/);
    });

    if (mode === 'token') {
      test('token: anonymous pull tokens for public repositories; an identity token (refresh grant) for private ones; tokens reused per scope', async () => {
        useCredentials(host, 'auths');
        await pushCatalogArtifact(parseOciRef(`oci://${host}/public/catalog:1`), CATALOG);
        useCredentials(host, 'none');
        clearTokenCache();
        const log = registry.tokenServer!.log;
        log.length = 0;
        for (let i = 0; i < 3; i++)
          assert.equal((await pullCatalogArtifact(parseOciRef(`oci://${host}/public/catalog:1`))).layer.toString(), CATALOG.toString());
        assert.deepEqual(log, ['anonymous repository:public/catalog:pull -> pull'], 'one token for the scope, reused until it expires');
        useCredentials(host, 'identitytoken');
        assert.equal((await pullCatalogArtifact(parseOciRef(`oci://${host}/private/catalog:1`))).layer.toString(), CATALOG.toString());
        assert.ok(log.includes('refresh repository:private/catalog:pull -> pull'), log.join('\n'));
      });
    }
  });
}
