import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  DOCKER_MANIFEST,
  OCI_INDEX,
  OCI_MANIFEST,
  ImageConfigSource,
  isLocalImage,
  parseManifest,
  readImageInfo,
  selectPlatformManifest,
} from '../../../../src/dockerapi/images/image-config.js';
import { mergeImageConfig, podUser } from '../../../../src/dockerapi/images/image-merge.js';
import { inspectImage } from '../../../../src/dockerapi/images/image-view.js';
import { parseBearerChallenge, registryBaseUrl, sha256Digest } from '../../../../src/registry/distribution.js';
import { parseImageReference } from '../../../../src/registry/reference.js';

// ---- merge ----

test('merge: ports united, env by key with the body winning, labels image then body', () => {
  const merged = mergeImageConfig(
    { Image: 'web', Env: ['A=body', 'C=3'], ExposedPorts: { '9090/tcp': {} }, Labels: { team: 'qa', tier: 'body' } },
    { Env: ['PATH=/bin', 'A=image'], ExposedPorts: { '8080/tcp': {} }, Labels: { tier: 'image', 'org.opencontainers.image.source': 'x' } },
  );
  assert.deepEqual(merged.ExposedPorts, { '8080/tcp': {}, '9090/tcp': {} });
  assert.deepEqual(merged.Env, ['A=body', 'C=3', 'PATH=/bin']);
  assert.deepEqual(merged.Labels, { tier: 'body', 'org.opencontainers.image.source': 'x', team: 'qa' });
});

test("merge: the image's Cmd and Entrypoint fill in only when the body names no Entrypoint", () => {
  const image = { Entrypoint: ['/entry'], Cmd: ['serve'] };
  assert.deepEqual(pick(mergeImageConfig({ Image: 'x' }, image)), { Entrypoint: ['/entry'], Cmd: ['serve'] });
  assert.deepEqual(pick(mergeImageConfig({ Image: 'x', Cmd: ['run'] }, image)), { Entrypoint: ['/entry'], Cmd: ['run'] });
  // A new entrypoint drops the image's CMD, as dockerd does (and as a pod's `command` does).
  assert.deepEqual(pick(mergeImageConfig({ Image: 'x', Entrypoint: ['sh'] }, image)), { Entrypoint: ['sh'], Cmd: undefined });
  assert.deepEqual(pick(mergeImageConfig({ Image: 'x', Entrypoint: [], Cmd: null }, image)), { Entrypoint: [], Cmd: ['serve'] });
});

test('merge: Healthcheck from the image unless the body sets one; zero fields inherited; NONE kept', () => {
  const image = { Healthcheck: { Test: ['CMD-SHELL', 'true'], Interval: 1e9, Retries: 2 } };
  assert.deepEqual(mergeImageConfig({ Image: 'x' }, image).Healthcheck, image.Healthcheck);
  assert.deepEqual(mergeImageConfig({ Image: 'x', Healthcheck: { Test: ['CMD', 'check'], Interval: 0, Timeout: 5e9 } }, image).Healthcheck, {
    Test: ['CMD', 'check'],
    Interval: 1e9,
    Timeout: 5e9,
    Retries: 2,
    StartPeriod: undefined,
  });
  assert.deepEqual(mergeImageConfig({ Image: 'x', Healthcheck: { Test: ['NONE'] } }, image).Healthcheck?.Test, ['NONE']);
});

test("merge: User and WorkingDir are the body's when given; a named image user never reaches the pod", () => {
  assert.equal(mergeImageConfig({ Image: 'x' }, { User: 'nginx', WorkingDir: '/srv' }).User, 'nginx');
  assert.equal(mergeImageConfig({ Image: 'x', User: '1000' }, { User: 'nginx' }).User, '1000');
  assert.equal(mergeImageConfig({ Image: 'x', WorkingDir: '/w' }, { WorkingDir: '/srv' }).WorkingDir, '/w');
  assert.equal(podUser('nginx'), undefined);
  assert.equal(podUser('65534:65534'), '65534:65534');
  assert.equal(podUser(''), undefined);
});

test('merge without a config leaves the body as it came', () => {
  const body = { Image: 'x', Cmd: ['a'] };
  assert.equal(mergeImageConfig(body, undefined), body);
});

function pick(b: { Entrypoint?: unknown; Cmd?: unknown }): { Entrypoint: unknown; Cmd: unknown } {
  return { Entrypoint: b.Entrypoint, Cmd: b.Cmd };
}

// ---- references, challenges, manifests ----

test('image references resolve as the docker CLI does', () => {
  assert.deepEqual(parseImageReference('busybox'), {
    domain: 'docker.io',
    registry: 'registry-1.docker.io',
    repository: 'library/busybox',
    tag: undefined,
    digest: undefined,
    familiar: 'busybox',
  });
  assert.deepEqual(pickRef(parseImageReference('user/app:1')), ['registry-1.docker.io', 'user/app', '1', 'user/app']);
  assert.deepEqual(pickRef(parseImageReference('index.docker.io/redis:7')), ['registry-1.docker.io', 'library/redis', '7', 'redis']);
  assert.deepEqual(pickRef(parseImageReference('127.0.0.1:5000/berth-test/web:1')), ['127.0.0.1:5000', 'berth-test/web', '1', '127.0.0.1:5000/berth-test/web']);
  assert.deepEqual(pickRef(parseImageReference('localhost/berth/busybox:1')), ['localhost', 'berth/busybox', '1', 'localhost/berth/busybox']);
  const digest = `sha256:${'a'.repeat(64)}`;
  assert.equal(parseImageReference(`ghcr.io/x/y:2@${digest}`).digest, digest);
  assert.throws(() => parseImageReference('Busybox'), /not a repository name/);
});

function pickRef(r: ReturnType<typeof parseImageReference>): unknown[] {
  return [r.registry, r.repository, r.tag, r.familiar];
}

test('plain http for loopback and named insecure registries only', () => {
  assert.equal(registryBaseUrl('127.0.0.1:5000'), 'http://127.0.0.1:5000/v2');
  assert.equal(registryBaseUrl('localhost'), 'http://localhost/v2');
  assert.equal(registryBaseUrl('[::1]:5000'), 'http://[::1]:5000/v2');
  assert.equal(registryBaseUrl('reg.lan:5000'), 'https://reg.lan:5000/v2');
  assert.equal(registryBaseUrl('reg.lan:5000', ['reg.lan:5000']), 'http://reg.lan:5000/v2');
});

test('a Bearer challenge gives realm, service and scope; Basic gives nothing', () => {
  assert.deepEqual(parseBearerChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"'), {
    realm: 'https://auth.docker.io/token',
    service: 'registry.docker.io',
    scope: 'repository:library/busybox:pull',
  });
  assert.equal(parseBearerChallenge('Basic realm="Registry"'), undefined);
  assert.equal(parseBearerChallenge(undefined), undefined);
});

const INDEX = {
  schemaVersion: 2,
  mediaType: OCI_INDEX,
  manifests: [
    { mediaType: OCI_MANIFEST, digest: 'sha256:arm', platform: { os: 'linux', architecture: 'arm', variant: 'v7' } },
    { mediaType: OCI_MANIFEST, digest: 'sha256:arm64', platform: { os: 'linux', architecture: 'arm64' } },
    { mediaType: OCI_MANIFEST, digest: 'sha256:amd64', platform: { os: 'linux', architecture: 'amd64' } },
    {
      mediaType: OCI_MANIFEST,
      digest: 'sha256:att',
      platform: { os: 'unknown', architecture: 'unknown' },
      annotations: { 'vnd.docker.reference.type': 'attestation-manifest' },
    },
  ],
};

test('an index is narrowed to the platform: same os and architecture, variant preferred', () => {
  const idx = parseManifest(JSON.stringify(INDEX));
  assert.equal(idx.kind, 'index');
  const manifests = idx.kind === 'index' ? idx.manifests : [];
  assert.equal(selectPlatformManifest(manifests, { os: 'linux', architecture: 'amd64' }).digest, 'sha256:amd64');
  assert.equal(selectPlatformManifest(manifests, { os: 'linux', architecture: 'arm64', variant: 'v8' }).digest, 'sha256:arm64');
  assert.equal(selectPlatformManifest(manifests, { os: 'linux', architecture: 'arm', variant: 'v7' }).digest, 'sha256:arm');
  assert.throws(
    () => selectPlatformManifest(manifests, { os: 'linux', architecture: 's390x' }),
    /no linux\/s390x variant \(it has linux\/arm\/v7, linux\/arm64, linux\/amd64\)/,
  );
});

test('manifests: docker schema 2 and OCI name their config; schema 1 is refused; the media type may come from Content-Type', () => {
  const docker = parseManifest(JSON.stringify({ schemaVersion: 2, mediaType: DOCKER_MANIFEST, config: { digest: 'sha256:c', size: 2 }, layers: [] }));
  assert.deepEqual(docker, { kind: 'image', config: { digest: 'sha256:c', size: 2 } });
  assert.equal(parseManifest(JSON.stringify({ schemaVersion: 2, manifests: [] }), `${OCI_INDEX}; charset=utf-8`).kind, 'index');
  assert.throws(() => parseManifest(JSON.stringify({ schemaVersion: 1, fsLayers: [] })), /schema 1/);
  assert.throws(() => parseManifest('<html>'), /not JSON/);
});

test('image inspect shows the config read from the registry, and the bare record otherwise', () => {
  const record = { id: 'sha256:1', ref: 'web:1', tags: new Set(['web:1']), created: new Date(0) };
  const bare = inspectImage(record, 'amd64', '1.44') as { Config: Record<string, unknown>; RepoDigests: string[] };
  assert.deepEqual(bare.RepoDigests, []);
  assert.equal(bare.Config.ExposedPorts, null);
  const info = {
    config: { ExposedPorts: { '8080/tcp': {} }, Healthcheck: { Test: ['CMD-SHELL', 'true'] }, User: '65534' },
    configDigest: 'sha256:c',
    repoDigest: 'web@sha256:m',
    architecture: 'amd64',
    os: 'linux',
  };
  const full = inspectImage({ ...record, info }, 'amd64', '1.44') as { Config: Record<string, unknown>; RepoDigests: string[] };
  assert.deepEqual(full.RepoDigests, ['web@sha256:m']);
  assert.deepEqual(full.Config.ExposedPorts, { '8080/tcp': {} });
  assert.deepEqual(full.Config.Healthcheck, { Test: ['CMD-SHELL', 'true'] });
  assert.equal(full.Config.User, '65534');
});

// ---- a registry on loopback that wants an anonymous bearer token and serves a multi-platform image ----

const CONFIG = Buffer.from(
  JSON.stringify({ architecture: 'amd64', os: 'linux', created: '2024-01-02T03:04:05Z', config: { ExposedPorts: { '8080/tcp': {} }, Cmd: ['httpd'] } }),
);
const MANIFEST = Buffer.from(
  JSON.stringify({
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha256Digest(CONFIG), size: CONFIG.length },
    layers: [],
  }),
);
const TOP = Buffer.from(
  JSON.stringify({ ...INDEX, manifests: INDEX.manifests.map((m) => (m.digest === 'sha256:amd64' ? { ...m, digest: sha256Digest(MANIFEST) } : m)) }),
);
let server: http.Server;
let registry = '';
const seen: string[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push(`${req.method} ${url.pathname} ${req.headers.authorization ?? '-'} ${req.headers.accept ?? '-'}`);
    if (url.pathname === '/token') {
      const ok = url.searchParams.get('scope') === 'repository:team/web:pull' && url.searchParams.get('service') === 'test';
      res.writeHead(ok ? 200 : 400, { 'Content-Type': 'application/json' }).end(JSON.stringify(ok ? { token: 'anon' } : {}));
      return;
    }
    if (req.headers.authorization !== 'Bearer anon') {
      res.writeHead(401, { 'WWW-Authenticate': `Bearer realm="http://${registry}/token",service="test",scope="repository:team/web:pull"` }).end();
      return;
    }
    const bodies: Record<string, Buffer> = {
      '/v2/team/web/manifests/1': TOP,
      [`/v2/team/web/manifests/${sha256Digest(MANIFEST)}`]: MANIFEST,
      [`/v2/team/web/blobs/${sha256Digest(CONFIG)}`]: CONFIG,
      '/v2/team/web/manifests/tampered': Buffer.from(
        JSON.stringify({ schemaVersion: 2, mediaType: OCI_MANIFEST, config: { digest: `sha256:${'0'.repeat(64)}` } }),
      ),
      [`/v2/team/web/blobs/sha256:${'0'.repeat(64)}`]: CONFIG,
    };
    const body = bodies[url.pathname];
    if (!body) res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"errors":[{"code":"MANIFEST_UNKNOWN"}]}');
    else res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  registry = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('readImageInfo: anonymous token after the challenge, index → amd64 manifest → config, digests checked', async () => {
  seen.length = 0;
  const info = await readImageInfo(`${registry}/team/web:1`, { platform: { os: 'linux', architecture: 'amd64' } });
  assert.deepEqual(info.config, { ExposedPorts: { '8080/tcp': {} }, Cmd: ['httpd'] });
  assert.equal(info.repoDigest, `${registry}/team/web@${sha256Digest(TOP)}`);
  assert.equal(info.configDigest, sha256Digest(CONFIG));
  assert.equal(info.created, '2024-01-02T03:04:05Z');
  assert.match(
    seen[0],
    /^GET \/v2\/team\/web\/manifests\/1 - .*application\/vnd\.oci\.image\.index\.v1\+json.*application\/vnd\.docker\.distribution\.manifest\.v2\+json/,
  );
  assert.match(seen[1], /^GET \/token/);
  assert.ok(
    seen.slice(2).every((l) => l.includes('Bearer anon')),
    seen.join('\n'),
  );
  await assert.rejects(readImageInfo(`${registry}/team/web:tampered`), /does not match its digest/);
  await assert.rejects(readImageInfo(`${registry}/team/web:2`), /answered 404/);
});

test('ImageConfigSource: a failure is reported once and cached; a pull (fresh) asks again', async () => {
  const lines: string[] = [];
  const source = new ImageConfigSource({ log: (l) => lines.push(l), platform: { os: 'linux', architecture: 'amd64' } });
  const ref = `${registry}/team/web:missing`;
  assert.ok('reason' in (await source.lookUp(ref)));
  seen.length = 0;
  assert.ok('reason' in (await source.lookUp(ref)));
  assert.deepEqual(seen, [], 'the cached failure asked the registry again');
  assert.ok('reason' in (await source.lookUp(ref, true)));
  assert.ok(seen.length > 0, 'a fresh lookup asks the registry');
  assert.equal(lines.length, 1, lines.join('\n'));
  assert.match(lines[0], /image config of .*team\/web:missing not read \(.*404/);
  const found = await source.lookUp(`${registry}/team/web:1`);
  assert.ok('info' in found && found.info.config.Cmd?.[0] === 'httpd');
});

test('--insecure-registry takes host[:port] only', () => {
  assert.throws(
    () => new ImageConfigSource({ log: () => undefined, insecure: ['http://reg.lan:5000'] }),
    /--insecure-registry http:\/\/reg.lan:5000: give host\[:port\]/,
  );
  assert.doesNotThrow(() => new ImageConfigSource({ log: () => undefined, insecure: ['reg.lan:5000', 'reg', '[fd00::1]:5000'] }));
});

test('an unreachable registry fails fast with the cause', async () => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const t0 = Date.now();
  await assert.rejects(readImageInfo(`127.0.0.1:${port}/x/y:1`), /ECONNREFUSED/);
  assert.ok(Date.now() - t0 < 2000);
});

test("podman's local images (localhost/ without a port) are not looked up, and say so without a log line", async () => {
  const lines: string[] = [];
  const source = new ImageConfigSource({ log: (l) => lines.push(l), platform: { os: 'linux', architecture: 'amd64' } });
  const found = await source.lookUp('localhost/berth/busybox:1');
  assert.ok('reason' in found && /built on the node/.test(found.reason));
  assert.deepEqual(lines, []);
  assert.equal(isLocalImage('localhost/berth/busybox:1'), true);
  assert.equal(isLocalImage('localhost:5000/berth/busybox:1'), false);
  assert.equal(isLocalImage('busybox'), false);
});

test("a bare Env key (`-e VAR` with VAR unset in the client) unsets VAR: the image's value goes and nothing is set", () => {
  const merged = mergeImageConfig({ Image: 'i', Env: ['KEEP=1', 'PATH', 'GONE'] }, { Env: ['PATH=/usr/bin', 'HOME=/root'] });
  assert.deepEqual(merged.Env, ['KEEP=1', 'HOME=/root']);
  assert.deepEqual(mergeImageConfig({ Image: 'i', Env: ['A=1', 'B'] }, undefined).Env, ['A=1'], "without the image's config too");
});
