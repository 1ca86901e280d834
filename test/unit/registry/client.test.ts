// The registry client against small loopback registries: how credentials are found (as the docker CLI
// finds them), tokens kept per scope until they expire, Basic sent once asked for, refusals in words,
// and the progress line of large downloads.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { RegistryClient } from '../../../src/registry/client.js';
import { credentialServerKey, findCredentials, loginCommand } from '../../../src/registry/credentials.js';
import { fetchUrl } from '../../../src/registry/http.js';
import { formatBytes, terminalProgress, withProgress } from '../../../src/registry/progress.js';
import { clearTokenCache } from '../../../src/registry/token.js';
import { scratchDir } from '../../util/scratch.js';

afterEach(() => clearTokenCache());

function configDir(config: unknown, helpers: Record<string, string> = {}): { env: NodeJS.ProcessEnv; dir: string } {
  const dir = scratchDir('berth-dockercfg-');
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  for (const [name, script] of Object.entries(helpers)) {
    writeFileSync(path.join(bin, `docker-credential-${name}`), `#!/bin/sh\n${script}\n`);
    chmodSync(path.join(bin, `docker-credential-${name}`), 0o755);
  }
  return { dir, env: { DOCKER_CONFIG: dir, PATH: `${bin}:${process.env.PATH}`, HOME: '/nonexistent' } };
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

test('credentials as the docker CLI finds them: DOCKER_CONFIG, auths by host or URL, Docker Hub under index.docker.io/v1/, credHelpers before credsStore', () => {
  const { env, dir } = configDir({
    auths: {
      'https://index.docker.io/v1/': { auth: b64('hubuser:hubpw') },
      'http://reg.example:5000/v2/': { auth: b64('u:p:with:colons') },
      'tok.example': { identitytoken: 'refresh-1' },
    },
  });
  assert.deepEqual(findCredentials('registry-1.docker.io', env), { username: 'hubuser', password: 'hubpw', source: path.join(dir, 'config.json') });
  assert.equal(findCredentials('reg.example:5000', env)?.password, 'p:with:colons');
  assert.deepEqual(findCredentials('tok.example', env), { identityToken: 'refresh-1', source: path.join(dir, 'config.json') });
  assert.equal(findCredentials('other.example', env), undefined);
  assert.equal(findCredentials('x', { HOME: '/nonexistent' }), undefined, 'no docker config at all');
  assert.equal(credentialServerKey('docker.io'), 'https://index.docker.io/v1/');
  assert.equal(loginCommand('registry-1.docker.io'), 'docker login');
  assert.equal(loginCommand('ghcr.io'), 'docker login ghcr.io');
  assert.equal(new RegistryClient('docker.io').base, 'https://registry-1.docker.io/v2', 'Docker Hub as the docker CLI reaches it');
  assert.equal(new RegistryClient('127.0.0.1:5000').base, 'http://127.0.0.1:5000/v2', 'loopback over plain http');

  const helped = configDir(
    { credsStore: 'store', credHelpers: { 'ghcr.io': 'gh' }, auths: { 'ghcr.io': { auth: b64('file:ignored') } } },
    {
      gh: 'read s; [ "$1" = get ] && printf \'{"ServerURL":"%s","Username":"<token>","Secret":"id-token-for-%s"}\' "$s" "$s"',
      store:
        'read s; if [ "$s" = "https://index.docker.io/v1/" ]; then printf \'{"ServerURL":"%s","Username":"hub","Secret":"pw"}\' "$s"; else echo "credentials not found in native keychain"; exit 1; fi',
    },
  );
  assert.deepEqual(
    findCredentials('ghcr.io', helped.env),
    { identityToken: 'id-token-for-ghcr.io', source: 'docker-credential-gh' },
    'username <token>: an identity token',
  );
  assert.deepEqual(findCredentials('docker.io', helped.env), { username: 'hub', password: 'pw', source: 'docker-credential-store' });
  assert.equal(findCredentials('quay.io', helped.env), undefined, "the helper's not-found answer is no credentials");
  const broken = configDir({ credsStore: 'missing' });
  assert.throws(
    () => findCredentials('quay.io', broken.env),
    /the docker config names the credential helper missing, but docker-credential-missing could not be run/,
  );
});

interface FakeRegistry {
  host: string;
  /** Tokens the registry no longer takes (revoked before their expiry). */
  revoked: Set<string>;
  seen: string[];
  tokens: string[];
  close(): Promise<void>;
}

/** A registry on loopback: Bearer (tokens from /token with expires_in `expires`) or Basic (user:pw). */
async function fakeRegistry(scheme: 'bearer' | 'basic', expires = 300): Promise<FakeRegistry> {
  const seen: string[] = [];
  const tokens: string[] = [];
  const revoked = new Set<string>();
  let host = '';
  let issued = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/token') {
      tokens.push(`${url.searchParams.get('scope')} ${req.headers.authorization ?? 'anonymous'}`);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ token: `t${++issued}`, expires_in: expires }));
      return;
    }
    seen.push(`${req.method} ${url.pathname} ${req.headers.authorization ?? '-'}`);
    const ok =
      scheme === 'basic'
        ? req.headers.authorization === `Basic ${b64('u:pw')}`
        : /^Bearer t\d+$/.test(req.headers.authorization ?? '') && !revoked.has(req.headers.authorization!.slice(7));
    if (!ok) {
      const challenge = scheme === 'basic' ? 'Basic realm="fake"' : `Bearer realm="http://${host}/token",service="fake"`;
      res
        .writeHead(401, { 'WWW-Authenticate': challenge, 'Content-Type': 'application/json' })
        .end('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}');
      return;
    }
    if (url.pathname.includes('/denied/'))
      res.writeHead(403, { 'Content-Type': 'application/json' }).end('{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}');
    else if (url.pathname.endsWith('/manifests/missing'))
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}');
    else res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { host, seen, tokens, revoked, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

test('Bearer: one token per scope, reused by later clients until it expires; push asks for pull,push', async () => {
  const reg = await fakeRegistry('bearer');
  try {
    const env = configDir({}).env;
    for (let i = 0; i < 3; i++)
      assert.equal((await new RegistryClient(reg.host, { env }).request('team/app', 'pull', { path: 'team/app/manifests/1' })).body.toString(), 'ok');
    await new RegistryClient(reg.host, { env }).request('team/app', 'pull,push', { method: 'PUT', path: 'team/app/manifests/1', body: Buffer.from('{}') });
    assert.deepEqual(reg.tokens, ['repository:team/app:pull anonymous', 'repository:team/app:pull,push anonymous']);
    assert.deepEqual(reg.seen.slice(0, 4), [
      `GET /v2/team/app/manifests/1 -`,
      'GET /v2/team/app/manifests/1 Bearer t1',
      'GET /v2/team/app/manifests/1 Bearer t1',
      'GET /v2/team/app/manifests/1 Bearer t1',
    ]);
  } finally {
    await reg.close();
  }
  const withCreds = await fakeRegistry('bearer');
  try {
    const { env, dir } = configDir({ auths: { [withCreds.host]: { auth: b64('u:pw') } } });
    for (let i = 0; i < 3; i++) await new RegistryClient(withCreds.host, { env }).request('team/app', 'pull', { path: 'team/app/manifests/1' });
    assert.deepEqual(withCreds.tokens, [`repository:team/app:pull Basic ${b64('u:pw')}`], 'a token got with credentials serves later clients too');
    withCreds.revoked.add('t1');
    await new RegistryClient(withCreds.host, { env }).request('team/app', 'pull', { path: 'team/app/manifests/1' });
    assert.equal(withCreds.tokens.length, 2, 'a cached token the registry refuses is replaced');
    assert.equal(withCreds.seen.at(-1), 'GET /v2/team/app/manifests/1 Bearer t2');
    assert.ok(dir);
  } finally {
    await withCreds.close();
  }
  const shortLived = await fakeRegistry('bearer', 1);
  try {
    const env = configDir({}).env;
    await new RegistryClient(shortLived.host, { env }).request('team/app', 'pull', { path: 'team/app/manifests/1' });
    await new RegistryClient(shortLived.host, { env }).request('team/app', 'pull', { path: 'team/app/manifests/1' });
    assert.equal(shortLived.tokens.length, 2, 'a token about to expire is not reused');
  } finally {
    await shortLived.close();
  }
});

test('Basic: credentials from the docker config, sent with every request once asked for; without them the refusal names docker login', async () => {
  const reg = await fakeRegistry('basic');
  try {
    const { env } = configDir({ auths: { [reg.host]: { auth: b64('u:pw') } } });
    const client = new RegistryClient(reg.host, { env });
    await client.request('team/app', 'pull', { path: 'team/app/manifests/1' });
    await client.request('team/app', 'pull', { path: 'team/app/blobs/sha256:1' });
    assert.deepEqual(reg.seen, [
      'GET /v2/team/app/manifests/1 -',
      `GET /v2/team/app/manifests/1 Basic ${b64('u:pw')}`,
      `GET /v2/team/app/blobs/sha256:1 Basic ${b64('u:pw')}`,
    ]);
    await assert.rejects(
      new RegistryClient(reg.host, { env: configDir({}).env }).request('team/app', 'pull', { path: 'team/app/manifests/1' }),
      new RegExp(
        `^RegistryError: registry ${reg.host} refused to pull team/app \\(answered 401: UNAUTHORIZED: authentication required\\): it needs credentials: run docker login ${reg.host}$`,
      ),
    );
    await assert.rejects(
      client.request('team/denied/x', 'pull,push', { method: 'PUT', path: 'team/denied/x/manifests/1' }),
      /registry .* refused to push to team\/denied\/x \(answered 403: DENIED: requested access to the resource is denied\): the account from .*config\.json may not push to team\/denied\/x/,
    );
    await assert.rejects(
      client.request('team/app', 'pull', { path: 'team/app/manifests/missing' }),
      /registry .* refused to find manifest missing in team\/app \(answered 404: MANIFEST_UNKNOWN: manifest unknown\): check the name/,
    );
  } finally {
    await reg.close();
  }
});

test('progress: one line rewritten in place on a terminal for bodies over 1 MiB; nothing when stderr is not a terminal', async () => {
  const big = Buffer.alloc(3 * 1024 * 1024, 7);
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Length': String(big.length) });
    // In pieces, so the line has something to follow.
    for (let i = 0; i < 6; i++) res.write(big.subarray(i * 512 * 1024, (i + 1) * 512 * 1024));
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/big`;
  try {
    const written: string[] = [];
    const tty = { isTTY: true, write: (s: string) => written.push(s) > 0 };
    const body = await withProgress('executable big', async (onProgress) => (await fetchUrl(url, { onProgress })).body, tty);
    assert.equal(body.length, big.length);
    assert.ok(written.length >= 2, written.join('|'));
    assert.ok(
      written.every((w) => w.startsWith('\r\x1b[2K')),
      'every write rewrites the one line',
    );
    assert.ok(
      written.some((w) => w.includes('executable big 3.0 MiB / 3.0 MiB')),
      written.join('|'),
    );
    assert.equal(written.at(-1), '\r\x1b[2K', 'the line is cleared at the end');
    const piped: string[] = [];
    await withProgress('executable big', async (onProgress) => (await fetchUrl(url, { onProgress })).body, {
      isTTY: false,
      write: (s: string) => piped.push(s) > 0,
    });
    assert.deepEqual(piped, []);
    const small: string[] = [];
    const p = terminalProgress('small', { isTTY: true, write: (s: string) => small.push(s) > 0 });
    p.update(1000, 1000);
    p.done();
    assert.deepEqual(small, [], 'nothing for a small body');
    assert.equal(formatBytes(1536), '1.5 KiB');
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
