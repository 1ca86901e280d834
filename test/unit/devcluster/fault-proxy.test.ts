import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { writeFileSync } from 'node:fs';
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { after, before, test } from 'node:test';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { renderKubeconfig } from '../../../src/devcluster/kubeconfig.js';
import { generateCa, issueServerCert } from '../../../src/devcluster/tls.js';
import { noFaults, type Faults } from '../../../src/devcluster/faults/faults.js';
import { startFaultProxy, type RunningFaultProxy } from '../../../src/devcluster/faults/fault-proxy.js';
import { eventually } from '../../util/eventually.js';
import { scratchDir } from '../../util/scratch.js';

const ADMIN = 'admin-token-0123456789';
const USER = 'user-token-9876543210';
const FAULTS_PATH = '/berth-dev/v1/faults';
const ca = generateCa();
const serving = issueServerCert(ca, []);

// ---- a fake kube-apiserver: echoes requests, serves an endless watch, echoes upgraded bytes ----

interface FakeUpstream {
  port: number;
  paths: string[];
  /** 'watch-closed' when a watch response is gone */
  events: EventEmitter;
  close(): Promise<void>;
}

function echoRequest(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const groups = req.rawHeaders.filter((_, i) => i % 2 === 1 && req.rawHeaders[i - 1]!.toLowerCase() === 'impersonate-group');
    const body = JSON.stringify({
      method: req.method,
      url: req.url,
      host: req.headers.host,
      authorization: req.headers.authorization ?? null,
      groups,
      body: Buffer.concat(chunks).toString(),
    });
    res.writeHead(req.method === 'POST' ? 201 : 200, { 'Content-Type': 'application/json', 'X-Upstream': 'fake' });
    res.end(body);
  });
}

function serveWatch(res: ServerResponse, events: EventEmitter, quiet = false): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  // as kube-apiserver: the head goes out at once, before any event
  res.flushHeaders();
  if (quiet) return void res.on('close', () => events.emit('watch-closed'));
  const event = () => res.write(`${JSON.stringify({ type: 'ADDED', object: { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p' } } })}\n`);
  event();
  const tick = setInterval(event, 20);
  res.on('close', () => {
    clearInterval(tick);
    events.emit('watch-closed');
  });
}

async function startFakeUpstream(): Promise<FakeUpstream> {
  const paths: string[] = [];
  const events = new EventEmitter();
  const upgraded = new Set<Duplex>();
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    paths.push(req.url ?? '');
    if (/[?&](watch=(true|1)|follow=true)/.test(req.url ?? '')) serveWatch(res, events, /[?&]quiet=1/.test(req.url ?? ''));
    else echoRequest(req, res);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    paths.push(req.url ?? '');
    upgraded.add(socket);
    socket.on('error', () => socket.destroy());
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${req.headers.upgrade}\r\n\r\n`);
    if (head.length > 0) socket.write(head);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
      for (const s of upgraded) s.destroy();
    });
  return { port: (server.address() as AddressInfo).port, paths, events, close };
}

// ---- clients ----

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** 'close', whether or not an error came first (events.once would reject on it) */
function closed(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => stream.once('close', () => resolve()));
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function open(port: number, method: string, path: string, headers: OutgoingHttpHeaders | string[] = {}): ClientRequest {
  return https.request({ host: '127.0.0.1', port, method, path, headers, ca: ca.certPem, agent: false });
}

function call(port: number, method: string, path: string, opts: { token?: string; body?: string; headers?: string[] } = {}): Promise<Reply> {
  const headers = ['Host', `127.0.0.1:${port}`, ...(opts.headers ?? []), ...(opts.token ? ['Authorization', `Bearer ${opts.token}`] : [])];
  const req = open(port, method, path, headers);
  const reply = new Promise<Reply>((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  req.end(opts.body);
  return within(reply, 5000, `${method} ${path}`);
}

/** a watch whose response has started; the caller reads it */
async function startWatch(port: number): Promise<IncomingMessage> {
  const req = open(port, 'GET', '/api/v1/namespaces/default/pods?watch=true', { Authorization: `Bearer ${USER}` });
  req.on('error', () => undefined);
  req.end();
  const [res] = (await within(once(req, 'response'), 5000, 'watch')) as [IncomingMessage];
  res.on('error', () => undefined);
  return res;
}

/** an upgrade written by hand, so that bytes after the request head arrive in the same packet (the `head`) */
async function rawUpgrade(port: number, path: string, trailing = ''): Promise<{ socket: TLSSocket; waitFor(text: string): Promise<string> }> {
  const socket = tlsConnect({ host: '127.0.0.1', port, ca: ca.certPem, ALPNProtocols: ['http/1.1'] });
  socket.on('error', () => undefined);
  await within(once(socket, 'secureConnect'), 5000, 'TLS connect');
  let got = '';
  const emitter = new EventEmitter();
  socket.on('data', (c: Buffer) => {
    got += c.toString();
    emitter.emit('data');
  });
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${USER}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n${trailing}`,
  );
  const waitFor = async (text: string) => {
    const seen = async () => {
      while (!got.includes(text)) await once(emitter, 'data');
      return got;
    };
    return within(seen(), 5000, `waiting for ${JSON.stringify(text)}`);
  };
  return { socket, waitFor };
}

// ---- the proxy under test ----

let upstream: FakeUpstream;
let proxy: RunningFaultProxy;
const faults: Faults = noFaults();
const changes: Faults[] = [];

function proxyOptions(upstreamPort: number, f: Faults = faults) {
  return {
    listenHost: '127.0.0.1',
    listenPort: 0,
    tls: { cert: serving.certPem, key: serving.keyPem },
    upstream: { host: '127.0.0.1', port: upstreamPort, ca: ca.certPem },
    adminTokens: ['another-admin', ADMIN],
    faults: f,
    onChange: (c: Faults) => changes.push({ ...c }),
  };
}

function resetFaults(): void {
  Object.assign(faults, noFaults());
  changes.length = 0;
}

before(async () => {
  upstream = await startFakeUpstream();
  proxy = await startFaultProxy(proxyOptions(upstream.port));
});
after(async () => {
  await proxy.close();
  await upstream.close();
});

test('passes method, path, query, body, auth and repeated headers through, and the status and headers back', async () => {
  resetFaults();
  const body = JSON.stringify({ kind: 'ConfigMap', data: { big: 'x'.repeat(1 << 20) } });
  const headers = ['Content-Type', 'application/json', 'Impersonate-Group', 'a', 'Impersonate-Group', 'b'];
  const r = await call(proxy.port, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { token: USER, body, headers });
  assert.equal(r.status, 201);
  assert.equal(r.headers['x-upstream'], 'fake');
  const echo = JSON.parse(r.body);
  assert.equal(echo.method, 'POST');
  assert.equal(echo.url, '/api/v1/namespaces/default/configmaps?dryRun=All');
  assert.equal(echo.host, `127.0.0.1:${upstream.port}`);
  assert.equal(echo.authorization, `Bearer ${USER}`);
  assert.deepEqual(echo.groups, ['a', 'b']);
  assert.equal(echo.body, body);
  const del = JSON.parse((await call(proxy.port, 'DELETE', '/api/v1/namespaces/default/pods/p', { token: USER })).body);
  assert.equal(del.method, 'DELETE');
});

test('faults endpoint: admins read and change the switches, others are refused, bad input changes nothing', async () => {
  resetFaults();
  const forwarded = upstream.paths.length;
  assert.deepEqual(JSON.parse((await call(proxy.port, 'GET', FAULTS_PATH, { token: ADMIN })).body), noFaults());
  const put = await call(proxy.port, 'PUT', FAULTS_PATH, {
    token: ADMIN,
    body: JSON.stringify({ kind: 'Faults', apiVersion: 'berth-dev/v1', error500: 0.25, failPortForwards: 2, delayPodStartMs: 1500 }),
  });
  assert.equal(put.status, 200);
  const want = { ...noFaults(), error500: 0.25, failPortForwards: 2, delayPodStartMs: 1500 };
  assert.deepEqual(JSON.parse(put.body), want);
  assert.deepEqual(faults, want);
  assert.deepEqual(changes, [want]);

  const forbidden = await call(proxy.port, 'PUT', FAULTS_PATH, { token: USER, body: '{"error500":1}' });
  assert.equal(forbidden.status, 403);
  assert.deepEqual(
    { ...JSON.parse(forbidden.body), message: '' },
    { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: '', reason: 'Forbidden', code: 403 },
  );
  assert.match(JSON.parse(forbidden.body).message, /^forbidden: User .* cannot update path "\/berth-dev\/v1\/faults"$/);
  assert.equal((await call(proxy.port, 'GET', FAULTS_PATH, { token: USER })).status, 403);
  assert.equal(JSON.parse((await call(proxy.port, 'GET', FAULTS_PATH)).body).reason, 'Unauthorized');

  for (const bad of [
    '{"bogus":1}',
    '{"error500":1.5}',
    '{"dropStreams":"0.5"}',
    '{"failPortForwards":1.5}',
    '{"endWatchAfterMs":-1}',
    '{"error500":0.5,"containerLogCheckMs":-3}',
    '[1]',
    'not json',
  ]) {
    const r = await call(proxy.port, 'PUT', FAULTS_PATH, { token: ADMIN, body: bad });
    assert.equal(r.status, 400, bad);
    assert.equal(JSON.parse(r.body).reason, 'BadRequest');
  }
  assert.match(
    JSON.parse((await call(proxy.port, 'PUT', FAULTS_PATH, { token: ADMIN, body: '{"bogus":1}' })).body).message,
    /known: dropStreams, error500, throttle429, endWatchAfterMs/,
  );
  assert.deepEqual(faults, want, 'refused bodies change nothing');
  assert.equal(changes.length, 1);
  assert.equal((await call(proxy.port, 'POST', FAULTS_PATH, { token: ADMIN, body: '{}' })).status, 405);
  assert.equal(upstream.paths.length, forwarded, 'never forwarded');
});

test('kubectl replace --raw and get --raw change and read the faults', { skip: !hasKubectl() }, async () => {
  resetFaults();
  const dir = scratchDir('berth-fault-proxy-');
  const server = `https://127.0.0.1:${proxy.port}`;
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    renderKubeconfig({
      clusterName: 'proxy',
      server,
      caPem: ca.certPem,
      users: [
        { name: 'admin', token: ADMIN },
        { name: 'user', token: USER },
      ],
      currentUser: 'admin',
    }),
  );
  writeFileSync(join(dir, 'faults.json'), JSON.stringify({ endWatchAfterMs: 5000, dropStreams: 0.1 }));
  const replaced = await kubectl(kubeconfig, ['replace', '--raw', FAULTS_PATH, '-f', join(dir, 'faults.json')]);
  assert.equal(replaced.code, 0, replaced.stderr);
  assert.equal(JSON.parse(replaced.stdout).endWatchAfterMs, 5000);
  assert.equal(faults.dropStreams, 0.1);
  const got = await kubectl(kubeconfig, ['get', '--raw', FAULTS_PATH]);
  assert.deepEqual(JSON.parse(got.stdout), { ...noFaults(), endWatchAfterMs: 5000, dropStreams: 0.1 });
  const refused = await kubectl(kubeconfig, ['--context', 'proxy-user', 'replace', '--raw', FAULTS_PATH, '-f', join(dir, 'faults.json')]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /Forbidden|forbidden/);
});

test('error500=1 fails API requests with an InternalError Status, but not probes, /version, the faults or upgrades', async () => {
  resetFaults();
  faults.error500 = 1;
  const r = await call(proxy.port, 'GET', '/api/v1/pods', { token: USER });
  assert.equal(r.status, 500);
  const status = JSON.parse(r.body);
  assert.equal(status.kind, 'Status');
  assert.equal(status.reason, 'InternalError');
  assert.match(status.message, /injected/);
  for (const path of ['/healthz', '/readyz?verbose', '/livez/ping', '/version']) {
    assert.equal((await call(proxy.port, 'GET', path, { token: USER })).status, 200, path);
  }
  assert.equal((await call(proxy.port, 'GET', FAULTS_PATH, { token: ADMIN })).status, 200);
  const { socket, waitFor } = await rawUpgrade(proxy.port, '/api/v1/namespaces/default/pods/p/exec?command=sh');
  assert.match(await waitFor('\r\n\r\n'), /^HTTP\/1\.1 101 /);
  socket.destroy();
  resetFaults();
});

test('throttle429=1 answers API requests and watches as APF rejects them, but not logs, exec, probes or the faults', async () => {
  resetFaults();
  faults.throttle429 = 1;
  for (const path of ['/api/v1/pods', '/api/v1/namespaces/default/pods?watch=true']) {
    const r = await call(proxy.port, 'GET', path, { token: USER });
    assert.equal(r.status, 429, path);
    assert.equal(r.headers['retry-after'], '1');
    assert.equal(r.body, 'Too many requests, please try again later.\n');
  }
  for (const path of ['/healthz', '/version']) assert.equal((await call(proxy.port, 'GET', path, { token: USER })).status, 200, path);
  assert.equal((await call(proxy.port, 'GET', FAULTS_PATH, { token: ADMIN })).status, 200);
  assert.notEqual((await call(proxy.port, 'GET', '/api/v1/namespaces/default/pods/p/log?container=c', { token: USER })).status, 429);
  const { socket, waitFor } = await rawUpgrade(proxy.port, '/api/v1/namespaces/default/pods/p/exec?command=sh');
  assert.match(await waitFor('\r\n\r\n'), /^HTTP\/1\.1 101 /);
  socket.destroy();
  resetFaults();
});

test('an upgrade is tunnelled: the head bytes and later bytes both ways', async () => {
  resetFaults();
  const { socket, waitFor } = await rawUpgrade(proxy.port, '/api/v1/namespaces/default/pods/p/exec?command=sh&stdin=true', 'early-bytes');
  assert.match(await waitFor('early-bytes'), /^HTTP\/1\.1 101 Switching Protocols\r\n[^]*\r\n\r\nearly-bytes$/);
  socket.write('ping-1');
  await waitFor('ping-1');
  socket.write('ping-2');
  await waitFor('ping-2');
  socket.destroy();
});

test('failPortForwards=1 refuses one port-forward upgrade with a 500 Status, then lets the next through', async () => {
  resetFaults();
  faults.failPortForwards = 1;
  const path = '/api/v1/namespaces/default/pods/p/portforward?ports=80';
  const refused = await rawUpgrade(proxy.port, path);
  const text = await refused.waitFor('"code":500}');
  assert.match(text, /^HTTP\/1\.1 500 Internal Server Error\r\n/);
  assert.equal(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).reason, 'InternalError');
  await within(closed(refused.socket), 5000, 'refused socket closing');
  assert.equal(faults.failPortForwards, 0);
  const next = await rawUpgrade(proxy.port, path);
  assert.match(await next.waitFor('\r\n\r\n'), /^HTTP\/1\.1 101 /);
  next.socket.write('through');
  await next.waitFor('through');
  next.socket.destroy();
});

test('dropStreams=1 cuts an upgraded stream while it is in use', async () => {
  resetFaults();
  faults.dropStreams = 1;
  const { socket, waitFor } = await rawUpgrade(proxy.port, '/api/v1/namespaces/default/pods/p/attach?stdin=true');
  assert.match(await waitFor('\r\n\r\n'), /^HTTP\/1\.1 101 /);
  // the cut comes 50-500 ms after the switch, so the echo may or may not make it back first
  socket.write('in-use');
  await within(closed(socket), 3000, 'the dropped stream closing');
  resetFaults();
});

test('endWatchAfterMs ends a watch cleanly and aborts the upstream watch', async () => {
  resetFaults();
  faults.endWatchAfterMs = 150;
  const upstreamClosed = once(upstream.events, 'watch-closed');
  const started = Date.now();
  const res = await startWatch(proxy.port);
  let body = '';
  res.on('data', (c: Buffer) => (body += c.toString()));
  await within(once(res, 'end'), 3000, 'the watch ending');
  assert.ok(res.complete, 'the chunked response was terminated properly');
  assert.ok(Date.now() - started >= 140);
  const lines = body.split('\n').filter(Boolean);
  assert.ok(lines.length >= 1);
  for (const line of lines) assert.equal(JSON.parse(line).type, 'ADDED');
  await within(upstreamClosed, 3000, 'the upstream watch closing');
  resetFaults();
});

test('dropStreams=1 cuts a followed log mid-stream, and leaves watches to endWatchAfterMs', async () => {
  resetFaults();
  faults.dropStreams = 1;
  const req = open(proxy.port, 'GET', '/api/v1/namespaces/default/pods/p/log?follow=true', { Authorization: `Bearer ${USER}` });
  req.on('error', () => undefined);
  req.end();
  const [log] = (await within(once(req, 'response'), 5000, 'followed log')) as [IncomingMessage];
  log.on('error', () => undefined);
  log.resume();
  await within(closed(log), 3000, 'the dropped log closing');
  assert.equal(log.complete, false);
  const watch = await startWatch(proxy.port);
  let bytes = 0;
  watch.on('data', (d: Buffer) => (bytes += d.length));
  // the fake API server sends an event every 20 ms: a watch still open after more than the drop's longest delay
  // (500 ms) and still receiving was not dropped
  const started = Date.now();
  await within(
    new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (bytes > 0 && !watch.destroyed && Date.now() - started > 700) {
          clearInterval(check);
          resolve();
        }
      }, 50);
    }),
    3000,
    'the watch staying open',
  );
  watch.destroy();
  resetFaults();
});

test('an unreachable API server gives 503 naming it', async () => {
  const closed = await closedPort();
  const lonely = await startFaultProxy(proxyOptions(closed, noFaults()));
  try {
    const r = await call(lonely.port, 'GET', '/api/v1/pods', { token: USER });
    assert.equal(r.status, 503);
    assert.match(JSON.parse(r.body).message, new RegExp(`API server at 127\\.0\\.0\\.1:${closed} cannot be reached`));
    const up = await rawUpgrade(lonely.port, '/api/v1/namespaces/default/pods/p/exec');
    assert.match(await up.waitFor('"code":503}'), /^HTTP\/1\.1 503 /);
  } finally {
    await lonely.close();
  }
});

test('close() resolves promptly with a watch and a tunnel open', async () => {
  const own = await startFaultProxy(proxyOptions(upstream.port, noFaults()));
  const res = await startWatch(own.port);
  res.resume();
  const tunnel = await rawUpgrade(own.port, '/api/v1/namespaces/default/pods/p/exec');
  await tunnel.waitFor('\r\n\r\n');
  const clientsClosed = Promise.all([closed(res), closed(tunnel.socket)]);
  await within(own.close(), 3000, 'close()');
  await within(clientsClosed, 3000, 'the client side closing');
});

function closedPort(): Promise<number> {
  const server = https.createServer();
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function hasKubectl(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

function kubectl(kubeconfig: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, '--request-timeout', '10s', ...args],
      { timeout: 20_000, env: { ...process.env, KUBECONFIG: '' } },
      (err, stdout, stderr) => {
        resolve({ code: err ? 1 : 0, stdout, stderr });
      },
    );
  });
}

test('a watch with no event yet: its response head reaches the client at once, as kube-apiserver sends it', async () => {
  const req = open(proxy.port, 'GET', '/api/v1/namespaces/default/pods?watch=true&quiet=1', { Authorization: `Bearer ${USER}` });
  req.on('error', () => undefined);
  req.end();
  const [res] = (await within(once(req, 'response'), 2000, 'the head of a quiet watch')) as [IncomingMessage];
  assert.equal(res.statusCode, 200);
  req.destroy();
});

test('the request tally: admins read each request by verb and resource and the watches open now; others are refused', async () => {
  const tally = async () =>
    JSON.parse((await call(proxy.port, 'GET', '/berth-dev/v1/requests', { token: ADMIN })).body) as {
      requests: Record<string, number>;
      total: number;
      openWatches: Record<string, number>;
    };
  const before = await tally();
  await call(proxy.port, 'GET', '/api/v1/namespaces/default/pods/p1', { token: USER });
  await call(proxy.port, 'DELETE', '/api/v1/namespaces/default/pods/p1', { token: USER });
  const watch = await startWatch(proxy.port);
  const during = await tally();
  const grew = (k: string) => (during.requests[k] ?? 0) - (before.requests[k] ?? 0);
  assert.equal(grew('get pods'), 1);
  assert.equal(grew('delete pods'), 1);
  assert.equal(grew('watch pods'), 1);
  assert.equal(during.openWatches.pods, (before.openWatches.pods ?? 0) + 1);
  watch.destroy();
  await eventually('the watch counted as ended', async () => ((await tally()).openWatches.pods ?? 0) === (before.openWatches.pods ?? 0));
  assert.equal((await call(proxy.port, 'GET', '/berth-dev/v1/requests', { token: USER })).status, 403);
  assert.equal((await call(proxy.port, 'GET', '/berth-dev/v1/requests')).status, 401);
});
