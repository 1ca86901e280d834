// berth's port-forward client against a stand-in for the API server's port-forward (test/util/port-forward-server.ts:
// the kubelet's channel protocol, with refused upgrades and dropped forwards), and the published-port proxy on top of
// it: retries that lose no bytes, drops that end one connection.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, test } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeError } from '../../../src/kube/errors.js';
import { openPortForward } from '../../../src/kube/port-forward.js';
import { PortProxy } from '../../../src/dockerapi/networks/port-proxy.js';
import { startPortForwardServer, type PortForwardServer } from '../../util/port-forward-server.js';
import { stubKubeConfig } from '../../util/stub-kubeconfig.js';
import { closedPort, startEchoServer, type EchoServer } from '../../util/tcp.js';

let server: PortForwardServer;
let echo: EchoServer;

before(async () => {
  echo = await startEchoServer();
  server = await startPortForwardServer();
});
after(async () => {
  await server.close();
  await echo.close();
});

function kubeConfig(): KubeConfig {
  return stubKubeConfig(server.url);
}

function readAll(s: Duplex): Promise<{ data: string; error?: Error }> {
  return new Promise((resolve) => {
    let data = '';
    s.on('data', (d: Buffer) => (data += d.toString()));
    s.on('end', () => resolve({ data }));
    s.on('error', (error) => resolve({ data, error }));
  });
}

test('a forward carries bytes both ways without the port prefix', async () => {
  const fwd = await openPortForward(kubeConfig(), 'default', 'p', echo.port);
  fwd.write('hello through berth');
  let data = '';
  for await (const chunk of fwd) {
    data += (chunk as Buffer).toString();
    if (data.length >= 19) break;
  }
  assert.equal(data, 'hello through berth');
});

test('the pod side closing ends the stream in order, after its last bytes', async () => {
  const greeter = net.createServer((s) => s.end('bye'));
  greeter.listen(0, '127.0.0.1');
  await once(greeter, 'listening');
  try {
    const fwd = await openPortForward(kubeConfig(), 'default', 'p', (greeter.address() as AddressInfo).port);
    assert.deepEqual(await readAll(fwd), { data: 'bye' });
  } finally {
    greeter.close();
  }
});

test('a refused upgrade rejects with the 500 Status, and the next one goes through', async () => {
  server.faults.refuseUpgrades = 2;
  for (let i = 0; i < 2; i++) {
    await assert.rejects(openPortForward(kubeConfig(), 'default', 'p', echo.port), (err: unknown) => {
      assert.ok(err instanceof KubeError);
      assert.equal(err.code, 500);
      assert.match(err.message, /port-forward refused by the stub server/);
      return true;
    });
  }
  assert.equal(server.faults.refuseUpgrades, 0);
  const fwd = await openPortForward(kubeConfig(), 'default', 'p', echo.port);
  fwd.destroy();
});

test('nothing listening in the pod: the kubelet error ends the stream with its message', async () => {
  const fwd = await openPortForward(kubeConfig(), 'default', 'pod-x', await closedPort());
  const r = await readAll(fwd);
  assert.match(r.error?.message ?? '', /error forwarding port \d+ to pod pod-x/);
});

test('a forward cut mid-connection fails the stream, it does not end quietly', async () => {
  server.faults.dropForwards = true;
  try {
    const fwd = await openPortForward(kubeConfig(), 'default', 'p', echo.port);
    const got = readAll(fwd);
    fwd.write('lost');
    const r = await got;
    assert.match(r.error?.message ?? '', /port-forward to p:\d+ was dropped/);
    assert.equal(r.data, '');
  } finally {
    server.faults.dropForwards = false;
  }
});

async function publish(proxy: PortProxy, port: number): Promise<{ port: number; close(): void }> {
  const srv = net.createServer({ allowHalfOpen: true }, (s) => void proxy.handle(s, port, 'container t', async () => ({ podName: 'p' })));
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  return { port: (srv.address() as AddressInfo).port, close: () => srv.close() };
}

function ask(port: number, text: string, until: (data: string) => boolean): Promise<{ data: string; reset: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let data = '';
    let reset = false;
    s.on('data', (d: Buffer) => {
      data += d.toString();
      // a full close: over port-forward (v4) a half-close cannot reach the pod
      if (until(data)) s.destroy();
    });
    s.on('error', () => (reset = true));
    s.on('close', () => resolve({ data, reset }));
    s.write(text);
  });
}

test('published port over port-forward: refused upgrades are retried and the client bytes arrive whole', async () => {
  const logs: string[] = [];
  const proxy = new PortProxy({
    mode: 'forward',
    forward: (pod, port) => openPortForward(kubeConfig(), 'default', pod, port),
    log: (l) => logs.push(l),
    backoff: { initialMs: 10, maxMs: 50, budgetMs: 3000 },
  });
  const published = await publish(proxy, echo.port);
  try {
    server.faults.refuseUpgrades = 3;
    const before = server.upgrades;
    const r = await ask(published.port, 'first bytes', (d) => d.length >= 11);
    assert.deepEqual(r, { data: 'first bytes', reset: false });
    assert.equal(server.faults.refuseUpgrades, 0);
    assert.equal(server.upgrades - before, 4);

    // a drop resets that connection only; the next one opens a fresh forward
    server.faults.dropForwards = true;
    const dropped = await ask(published.port, 'x', () => false);
    server.faults.dropForwards = false;
    assert.equal(dropped.reset, true);
    assert.equal(dropped.data, '');
    assert.deepEqual(await ask(published.port, 'again', (d) => d.length >= 5), { data: 'again', reset: false });
    assert.equal(logs.length, 1, logs.join('\n'));
    assert.match(logs[0]!, /container t: a connection to port \d+ broke: the port-forward to p:\d+ was dropped/);
  } finally {
    server.faults.refuseUpgrades = 0;
    server.faults.dropForwards = false;
    published.close();
  }
});

test('a client that half-closes still gets the answer, and the forward closes once the pod side is quiet', async () => {
  const proxy = new PortProxy({
    mode: 'forward',
    forward: (pod, port) => openPortForward(kubeConfig(), 'default', pod, port),
    log: () => undefined,
    halfCloseIdleMs: 150,
  });
  const published = await publish(proxy, echo.port);
  try {
    const r = await new Promise<{ data: string; reset: boolean; ms: number }>((resolve) => {
      const s = net.connect({ port: published.port, host: '127.0.0.1', allowHalfOpen: true });
      let data = '';
      let reset = false;
      let ended = 0;
      s.on('data', (d: Buffer) => (data += d.toString()));
      s.on('error', () => (reset = true));
      s.on('end', () => {
        ended = Date.now();
        s.end();
      });
      s.on('close', () => resolve({ data, reset, ms: ended - sent }));
      const sent = Date.now();
      s.end('question, then FIN');
    });
    assert.equal(r.data, 'question, then FIN');
    assert.equal(r.reset, false);
    // the echo server never closes (v4 cannot pass the FIN on): the quiet period ends it, in order
    assert.ok(r.ms >= 150 && r.ms < 5000, `ended after ${r.ms} ms`);
  } finally {
    published.close();
  }
});
