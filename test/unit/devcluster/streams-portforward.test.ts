import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { connect as tcpConnect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { PassThrough, Writable, type Duplex } from 'node:stream';
import { KubeConfig, PortForward } from '@kubernetes/client-node';
import transport, { type SpdyConnection, type SpdyStream } from 'spdy-transport';
import { handlePortForwardUpgrade } from '../../../src/devcluster/streams/portforward.js';
import { closedPort, connectChannels, startEchoServer, startStubServer, type StubServer, stubKubeConfig } from './streams-harness.js';

let server: StubServer;
let echo: { port: number; close(): Promise<void> };
let refused: number;
const opened = new Set<Socket>();

function connectLoopback(port: number): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const s = tcpConnect(port, '127.0.0.1');
    s.once('connect', () => {
      opened.add(s);
      s.on('close', () => opened.delete(s));
      resolve(s);
    });
    s.once('error', (err) => reject(new Error(`failed to connect to localhost:${port} inside namespace: ${err.message}`)));
  });
}

before(async () => {
  echo = await startEchoServer();
  refused = await closedPort();
  server = await startStubServer((req: IncomingMessage, socket, head) => {
    const ports = new URL(req.url ?? '/', 'http://x').searchParams.getAll('ports').flatMap((p) => p.split(',')).map(Number);
    handlePortForwardUpgrade(req, socket, head, ports, connectLoopback);
  });
});
after(async () => {
  await server.close();
  await echo.close();
});

function kubeConfig(): KubeConfig {
  return stubKubeConfig(server.url);
}

function collector(): { stream: Writable; text(): string; wait(n: number): Promise<void> } {
  const chunks: Buffer[] = [];
  let waiter: { n: number; resolve: () => void } | undefined;
  const size = () => chunks.reduce((a, c) => a + c.length, 0);
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk);
      if (waiter && size() >= waiter.n) waiter.resolve();
      cb();
    },
  });
  return {
    stream,
    text: () => Buffer.concat(chunks).toString(),
    wait: (n) => (size() >= n ? Promise.resolve() : new Promise((resolve) => (waiter = { n, resolve }))),
  };
}

test('client-node PortForward (WebSocket v4) reaches a TCP server and strips the port prefix', async () => {
  const output = collector();
  const errors = collector();
  const input = new PassThrough();
  const ws = await new PortForward(kubeConfig()).portForward('default', 'p', [echo.port], output.stream, errors.stream, input);
  try {
    assert.equal((ws as any).protocol, 'v4.channel.k8s.io');
    input.write('ping through the forward');
    await output.wait(24);
    assert.equal(output.text(), 'ping through the forward');
    assert.equal(errors.text(), '');
  } finally {
    (ws as any).close();
  }
  await once(ws as any, 'close');
});

test('WebSocket v4: each channel opens with the port little-endian, a failed dial reports on the error channel and closes', async () => {
  const client = await connectChannels(`ws://127.0.0.1:${server.port}/api/v1/namespaces/default/pods/p/portforward?ports=${refused}`, ['v4.channel.k8s.io']);
  assert.equal(await client.closed, 1000);
  const [dataPrefix] = client.received.get(0)!;
  const [errorPrefix, ...message] = client.received.get(1)!;
  assert.equal(dataPrefix!.readUInt16LE(), refused);
  assert.equal(errorPrefix!.readUInt16LE(), refused);
  assert.match(Buffer.concat(message).toString(), new RegExp(`^error forwarding port ${refused} to pod p, uid : failed to connect`));
});

test('WebSocket v4: closing the WebSocket closes the TCP connection', async () => {
  const client = await connectChannels(`ws://127.0.0.1:${server.port}/api/v1/namespaces/default/pods/p/portforward?ports=${echo.port}`, ['v4.channel.k8s.io']);
  client.send(0, 'x');
  await new Promise<void>((resolve) => client.ws.on('message', (d: Buffer) => d[0] === 0 && d.length === 2 && d[1] === 'x'.charCodeAt(0) && resolve()));
  assert.equal(opened.size, 1);
  const [tcp] = opened;
  client.ws.close();
  await once(tcp!, 'close');
});

/** a SPDY client session over a raw `Upgrade: SPDY/3.1` request, as client-go's spdy round tripper makes */
async function spdyClient(): Promise<{ connection: SpdyConnection; socket: Duplex; headers: IncomingMessage['headers'] }> {
  const req = request({
    host: '127.0.0.1',
    port: server.port,
    method: 'POST',
    path: '/api/v1/namespaces/default/pods/p/portforward',
    headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'portforward.k8s.io' },
  });
  req.end();
  const [res, socket, head] = (await once(req, 'upgrade')) as [IncomingMessage, Duplex, Buffer];
  if (head.length > 0) socket.unshift(head);
  const connection = transport.connection.create(socket, { protocol: 'spdy', isServer: false });
  (connection as any).start(3);
  connection.on('error', () => undefined);
  return { connection, socket, headers: res.headers };
}

function openStream(connection: SpdyConnection, headers: Record<string, string>): Promise<SpdyStream> {
  return new Promise((resolve, reject) => {
    const stream = (connection as any).request({ method: 'POST', path: '/', headers }, (err: Error | null) => (err ? reject(err) : undefined)) as SpdyStream;
    stream.on('error', () => undefined);
    stream.once('response', () => resolve(stream));
  });
}

async function readAll(stream: SpdyStream): Promise<string> {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  await once(stream, 'end');
  return Buffer.concat(chunks).toString();
}

async function forwardOnce(connection: SpdyConnection, port: number, requestid: string, payload: string): Promise<{ data: string; error: string }> {
  const errorStream = await openStream(connection, { streamtype: 'error', port: String(port), requestid });
  errorStream.end();
  const error = readAll(errorStream);
  const dataStream = await openStream(connection, { streamtype: 'data', port: String(port), requestid });
  const data = readAll(dataStream);
  dataStream.end(payload); // write, then half-close like kubectl after its local copy ends
  return { data: await data, error: await error };
}

test('SPDY: the upgrade answers 101 with the negotiated protocol, and connections are independent', async () => {
  const { connection, socket, headers } = await spdyClient();
  try {
    assert.equal(headers['x-stream-protocol-version'], 'portforward.k8s.io');
    assert.equal(headers.upgrade, 'SPDY/3.1');
    const [a, failed] = await Promise.all([forwardOnce(connection, echo.port, '1', 'first'), forwardOnce(connection, refused, '2', 'lost')]);
    assert.deepEqual(a, { data: 'first', error: '' });
    assert.equal(failed.data, '');
    assert.match(failed.error, new RegExp(`^error forwarding port ${refused} to pod p, uid : failed to connect`));
    // the failure ended only its own pair: the session still forwards
    const big = 'x'.repeat(300 * 1024);
    const [b, c] = await Promise.all([forwardOnce(connection, echo.port, '3', big), forwardOnce(connection, echo.port, '4', 'fourth')]);
    assert.equal(b.data.length, big.length);
    assert.deepEqual(c, { data: 'fourth', error: '' });
  } finally {
    socket.destroy();
  }
});
