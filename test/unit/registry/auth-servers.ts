// Debian's docker-registry on 127.0.0.1 in the two ways registries ask for credentials: token
// authentication against a small token server started here (anonymous pull tokens; push, and pull of
// `private/*`, only for the test account), and htpasswd Basic authentication. Plus a docker config
// folder and a docker-credential-* helper script, as `docker login` would leave them.
import { execFileSync } from 'node:child_process';
import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startRegistry, type Registry } from '../../e2e/catalog/servers.js';
import { scratchDir } from '../../util/scratch.js';

export const USER = 'berth';
export const PASSWORD = 's3cret-pass';
/** An identity token (OAuth2 refresh token) the token server also takes for the test account. */
export const IDENTITY_TOKEN = 'refresh-4c0ffee';
// bcrypt (cost 4) of PASSWORD: docker-registry's htpasswd takes only bcrypt. Made with
// python3 -c 'import crypt; print(crypt.crypt("s3cret-pass", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))'
// (`htpasswd -nbB -C 4 berth s3cret-pass` from apache2-utils gives an equivalent line).
const HTPASSWD = `${USER}:$2b$04$O5SK5SXc66UGn4dDdpuXa.SZvTyWiOEA1FM0v.zPlwDTUC.8cFg6W\n`;

export interface TokenServer {
  url: string;
  /** One line per token request: `anonymous|basic|refresh scope...` → granted actions. */
  log: string[];
  close(): Promise<void>;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/** Signs RS256 JWTs with a self-signed certificate that docker-registry trusts through rootcertbundle. */
async function startTokenServer(dir: string, service: string, issuer: string): Promise<TokenServer & { certFile: string }> {
  const key = path.join(dir, 'token.key');
  const certFile = path.join(dir, 'token.crt');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', certFile, '-days', '1', '-subj', '/CN=berth-token-issuer'],
    { stdio: 'ignore' },
  );
  const privateKey = createPrivateKey(readFileSync(key));
  const der = Buffer.from(readFileSync(certFile, 'utf8').replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const log: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const form = new URLSearchParams(req.method === 'POST' ? Buffer.concat(chunks).toString() : '');
      const params = req.method === 'POST' ? form : url.searchParams;
      let who = 'anonymous';
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      if (basic) {
        if (Buffer.from(basic[1], 'base64').toString() !== `${USER}:${PASSWORD}`) {
          log.push('basic (wrong password)');
          res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"details":"incorrect username or password"}');
          return;
        }
        who = 'basic';
      }
      if (params.get('grant_type') === 'refresh_token') {
        if (params.get('refresh_token') !== IDENTITY_TOKEN) {
          res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"details":"invalid refresh token"}');
          return;
        }
        who = 'refresh';
      }
      const access = params.getAll('scope').map((scope) => {
        const [type, name, actions] = scope.split(':');
        const wanted = actions.split(',');
        const granted = who === 'anonymous' ? (name.startsWith('private/') ? [] : wanted.filter((a) => a === 'pull')) : wanted;
        return { type, name, actions: granted };
      });
      log.push(`${who} ${params.getAll('scope').join(' ')} -> ${access.map((a) => a.actions.join(',') || '-').join(' ')}`);
      const now = Math.floor(Date.now() / 1000);
      const header = { typ: 'JWT', alg: 'RS256', x5c: [der.toString('base64')] };
      const claims = {
        iss: issuer,
        sub: who === 'anonymous' ? '' : USER,
        aud: params.get('service') ?? service,
        exp: now + 300,
        nbf: now - 10,
        iat: now,
        jti: randomUUID(),
        access,
      };
      const signed = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
      const token = `${signed}.${b64url(sign('sha256', Buffer.from(signed), privateKey))}`;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ token, expires_in: 300, issued_at: new Date(now * 1000).toISOString() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`,
    certFile,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface AuthRegistry extends Registry {
  tokenServer?: TokenServer;
}

export async function startTokenRegistry(opts: { deletes?: boolean } = {}): Promise<AuthRegistry> {
  const dir = scratchDir('berth-token-');
  const tokens = await startTokenServer(dir, 'berth-test', 'berth-test-issuer');
  const registry = await startRegistry({
    auth: `{token: {realm: "${tokens.url}", service: berth-test, issuer: berth-test-issuer, rootcertbundle: ${tokens.certFile}}}`,
    deletes: opts.deletes,
  });
  return {
    host: registry.host,
    tokenServer: tokens,
    close: async () => {
      await registry.close();
      await tokens.close();
    },
  };
}

export async function startHtpasswdRegistry(): Promise<AuthRegistry> {
  const dir = scratchDir('berth-htpasswd-');
  const file = path.join(dir, 'htpasswd');
  writeFileSync(file, HTPASSWD);
  return startRegistry({ auth: `{htpasswd: {realm: berth-test, path: ${file}}}` });
}

export interface DockerConfigDir {
  /** For DOCKER_CONFIG. */
  dir: string;
  /** A folder to put first on PATH (holds docker-credential-berthtest when a helper is used). */
  bin: string;
}

/** A docker config folder as `docker login` leaves it: `auths` with base64 user:password, or a helper. */
export function dockerConfig(registry: string, how: 'auths' | 'identitytoken' | 'credsStore' | 'credHelpers' | 'wrong-password' | 'none'): DockerConfigDir {
  const dir = scratchDir('berth-docker-config-');
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  const auth = (pw: string): string => Buffer.from(`${USER}:${pw}`).toString('base64');
  let config: unknown = {};
  if (how === 'auths') config = { auths: { [registry]: { auth: auth(PASSWORD) } } };
  if (how === 'wrong-password') config = { auths: { [`http://${registry}/v1/`]: { auth: auth('nope') } } };
  if (how === 'identitytoken') config = { auths: { [registry]: { identitytoken: IDENTITY_TOKEN } } };
  if (how === 'credsStore') config = { credsStore: 'berthtest', auths: { [registry]: {} } };
  if (how === 'credHelpers') config = { credHelpers: { [registry]: 'berthtest' }, auths: { 'other.example:5000': { auth: auth('unused') } } };
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  // The docker-credential-helpers protocol: `get`, the server URL on stdin, JSON on stdout; a miss exits 1.
  const helper = path.join(bin, 'docker-credential-berthtest');
  writeFileSync(
    helper,
    `#!/bin/sh\n[ "$1" = get ] || exit 2\nread -r server\necho "$server" >> "${dir}/helper.log"\nif [ "$server" = "${registry}" ]; then\n  printf '{"ServerURL":"%s","Username":"${USER}","Secret":"${PASSWORD}"}\\n' "$server"\nelse\n  echo "credentials not found in native keychain"; exit 1\nfi\n`,
  );
  chmodSync(helper, 0o755);
  return { dir, bin };
}
