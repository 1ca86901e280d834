import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { KubeConfig, VersionApi } from '@kubernetes/client-node';
import { renderKubeconfig } from '../../../src/devcluster/kubeconfig.js';
import { generateCa, issueServerCert } from '../../../src/devcluster/tls.js';
import { scratchDir } from '../../util/scratch.js';

const started = Date.now();
const ca = generateCa();
const serving = issueServerCert(ca, ['10.88.0.1', 'berth.test']);
const generationMs = Date.now() - started;

function get(url: string, options: https.RequestOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    https
      .get(url, options, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

test('CA and server certificate: fast, well-formed, with the expected names', () => {
  assert.ok(generationMs < 2000, `generating the CA and the server certificate took ${generationMs} ms`);
  const caCert = new X509Certificate(ca.certPem);
  const cert = new X509Certificate(serving.certPem);
  assert.equal(caCert.ca, true);
  assert.equal(cert.ca, false);
  assert.ok(cert.verify(caCert.publicKey), 'signed by the CA');
  assert.ok(cert.checkIssued(caCert));
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'serverAuth');
  assert.equal(cert.subjectAltName, 'IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:localhost, IP Address:10.88.0.1, DNS:berth.test');
  assert.equal(cert.checkIP('::1'), '::1');
  assert.equal(cert.checkHost('localhost'), 'localhost');
  assert.ok(BigInt(`0x${cert.serialNumber}`) > 0n);
});

test('node TLS accepts the server only with the CA', async (t) => {
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  assert.equal(await get(`https://127.0.0.1:${port}/`, { ca: ca.certPem }), 'ok');
  assert.equal(await get(`https://localhost:${port}/`, { ca: ca.certPem }), 'ok');
  await assert.rejects(get(`https://127.0.0.1:${port}/`, {}), /self-signed|unable to verify|self signed/);
  const otherCa = generateCa('other');
  await assert.rejects(get(`https://127.0.0.1:${port}/`, { ca: otherCa.certPem }), /unable to verify|self-signed|self signed/);
});

/** an HTTPS server that answers /version as an API server does, and records each request's Authorization */
async function versionServer(): Promise<{ url: string; authorizations: string[]; close(): Promise<void> }> {
  const authorizations: string[] = [];
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    authorizations.push(req.headers.authorization ?? '');
    const found = req.url?.startsWith('/version');
    res.writeHead(found ? 200 : 404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(found ? { major: '1', minor: '36', gitVersion: 'v1.36.0-test', platform: 'linux/amd64' } : { kind: 'Status', code: 404 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    authorizations,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function kubectl(args: string[], kubeconfig: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr })),
  );
}

test('kubeconfig: kubectl (Go TLS) and client-node connect with it, one context per user', async (t) => {
  const api = await versionServer();
  const dir = scratchDir('berth-kubeconfig-');
  t.after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const text = renderKubeconfig({
    clusterName: 'berth',
    server: api.url,
    caPem: ca.certPem,
    users: [
      { name: 'admin', token: 'admin-token' },
      { name: 'shim', token: 's3cret' },
    ],
    currentUser: 'shim',
    namespace: 'ci',
  });
  const file = join(dir, 'kubeconfig');
  writeFileSync(file, text, { mode: 0o600 });

  const view = await new Promise<string>((resolve, reject) =>
    execFile('kubectl', ['config', 'view', '--kubeconfig', file, '-o', 'json'], (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout))),
  );
  const config = JSON.parse(view);
  assert.equal(config['current-context'], 'berth');
  const contexts = config.contexts.map((c: any) => [c.name, c.context.user, c.context.namespace]).sort();
  assert.deepEqual(contexts, [
    ['berth', 'berth-shim', 'ci'],
    ['berth-admin', 'berth-admin', 'ci'],
  ]);
  assert.equal(config.clusters[0].cluster['certificate-authority-data'], 'DATA+OMITTED');

  const version = await kubectl(['version', '-o', 'json'], file);
  assert.equal(version.code, 0, version.stderr);
  assert.equal(JSON.parse(version.stdout).serverVersion.gitVersion, 'v1.36.0-test');
  assert.ok(api.authorizations.includes('Bearer s3cret'), 'kubectl sent the current user token');
  const asAdmin = await kubectl(['version', '-o', 'json', '--context', 'berth-admin'], file);
  assert.equal(asAdmin.code, 0, asAdmin.stderr);
  assert.ok(api.authorizations.includes('Bearer admin-token'));

  const kc = new KubeConfig();
  kc.loadFromString(text);
  assert.equal(kc.getCurrentContext(), 'berth');
  assert.equal(kc.getCurrentUser()?.token, 's3cret');
  assert.equal(kc.getContextObject('berth')?.namespace, 'ci');
  const info = await kc.makeApiClient(VersionApi).getCode();
  assert.equal(info.gitVersion, 'v1.36.0-test');

  assert.throws(() => renderKubeconfig({ clusterName: 'b', server: api.url, caPem: ca.certPem, users: [], currentUser: 'x' }), /current user "x"/);
});
