// Test scaffolding for the stream protocol tests: a stub API server that routes upgrades to the stream
// handlers (and answers the few GETs kubectl makes first), fake and child-process sessions, and a
// WebSocket client that sorts frames by channel.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { PassThrough, Writable, type Duplex } from 'node:stream';
import WebSocket from 'ws';
import { KubeConfig } from '@kubernetes/client-node';
import type { ExitResult, StreamSession } from '../../../src/devcluster/types.js';

export type UpgradeRoute = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface StubServer {
  port: number;
  url: string;
  close(): Promise<void>;
}

const POD = (name: string, namespace: string) => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name, namespace, uid: '00000000-0000-0000-0000-000000000001', resourceVersion: '1' },
  spec: { containers: [{ name: 'main', image: 'localhost/berth/busybox:1' }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'main', ready: true, state: { running: {} } }] },
});

const DISCOVERY: Record<string, unknown> = {
  '/api': { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }] },
  '/apis': { kind: 'APIGroupList', apiVersion: 'v1', groups: [] },
  '/api/v1': {
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: [
      { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['get', 'list'], shortNames: ['po'] },
      { name: 'pods/exec', singularName: '', namespaced: true, kind: 'PodExecOptions', verbs: ['create', 'get'] },
      { name: 'pods/portforward', singularName: '', namespaced: true, kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
    ],
  },
  '/version': { major: '1', minor: '32', gitVersion: 'v1.32.0', platform: 'linux/amd64' },
};

/** an HTTP server answering pod GETs and discovery, and handing every upgrade to `route` */
export async function startStubServer(route: UpgradeRoute): Promise<StubServer> {
  const sockets = new Set<Duplex>();
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const pod = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(path);
    const body = pod ? POD(pod[2]!, pod[1]!) : DISCOVERY[path];
    if (body === undefined) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'NotFound', code: 404 }));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('upgrade', (req, socket, head) => route(req, socket, head));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** a TCP server that echoes, prefixing nothing; closes its side when the client does */
/** A kubeconfig for client-node pointing at a stub server, with no credentials. */
export function stubKubeConfig(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'stub', server: url, skipTLSVerify: true }],
    users: [{ name: 'nobody' }],
    contexts: [{ name: 'stub', cluster: 'stub', user: 'nobody' }],
    currentContext: 'stub',
  });
  return kc;
}

export async function startEchoServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer({ allowHalfOpen: true }, (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.pipe(s);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** a loopback port with nothing listening */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  server.close();
  await once(server, 'close');
  return port;
}

export interface FakeSession {
  session: StreamSession;
  stdout: PassThrough;
  stderr: PassThrough;
  /** everything written to stdin, resolved when stdin ends */
  stdinText: Promise<string>;
  exit(result: ExitResult): void;
  aborted: Promise<void>;
  isAborted(): boolean;
  resizes: { width: number; height: number }[];
}

/** a session whose output the test writes and whose exit the test decides */
export function fakeSession(opts: { stdin?: Writable; stderr?: boolean } = {}): FakeSession {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks: Buffer[] = [];
  const stdin =
    opts.stdin ??
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk);
        cb();
      },
    });
  const stdinText = new Promise<string>((resolve) => stdin.on('finish', () => resolve(Buffer.concat(chunks).toString())));
  let settle!: (r: ExitResult) => void;
  const done = new Promise<ExitResult>((resolve) => (settle = resolve));
  let abortedFlag = false;
  let markAborted!: () => void;
  const aborted = new Promise<void>((resolve) => (markAborted = resolve));
  const resizes: { width: number; height: number }[] = [];
  const session: StreamSession = {
    stdin,
    stdout,
    stderr: opts.stderr === false ? null : stderr,
    resize: (width, height) => resizes.push({ width, height }),
    done,
    abort: () => {
      abortedFlag = true;
      markAborted();
      stdout.end();
      stderr.end();
      settle({ exitCode: 137 });
    },
  };
  return {
    session,
    stdout,
    stderr,
    stdinText,
    exit: (result) => {
      stdout.end();
      stderr.end();
      settle(result);
    },
    aborted,
    isAborted: () => abortedFlag,
    resizes,
  };
}

/** a session backed by a local child process (a stand-in for a container exec) */
export function childSession(command: string, args: string[]): StreamSession {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const done = new Promise<ExitResult>((resolve) => {
    child.on('error', (err) => resolve({ error: err.message }));
    child.on('close', (code, signal) => resolve({ exitCode: code ?? (signal ? 128 + 9 : 1) }));
  });
  return {
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    resize: () => undefined,
    done,
    abort: () => child.kill('SIGKILL'),
  };
}

export interface ChannelClient {
  ws: WebSocket;
  protocol: string;
  /** payloads received per channel (base64 protocols decoded) */
  received: Map<number, Buffer[]>;
  text(channel: number): string;
  /** resolves with the close code once the socket is closed */
  closed: Promise<number>;
  send(channel: number, payload: Buffer | string): void;
}

/** connects and resolves once open; rejects with the HTTP status and body on a refused upgrade */
export function connectChannels(url: string, protocols: string[]): Promise<ChannelClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols);
    const received = new Map<number, Buffer[]>();
    const base64 = () => ws.protocol.includes('base64');
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    ws.on('message', (data: Buffer) => {
      if (data.length === 0) return;
      const channel = base64() ? data[0]! - 48 : data[0]!;
      const payload = base64() ? Buffer.from(data.subarray(1).toString(), 'base64') : data.subarray(1);
      const list = received.get(channel) ?? [];
      list.push(payload);
      received.set(channel, list);
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { statusCode: res.statusCode, body })));
    });
    ws.on('error', (err) => reject(err));
    ws.on('open', () =>
      resolve({
        ws,
        protocol: ws.protocol,
        received,
        text: (channel) => Buffer.concat(received.get(channel) ?? []).toString(),
        closed,
        send: (channel, payload) => {
          const data = Buffer.from(payload);
          if (base64()) ws.send(String.fromCharCode(48 + channel) + data.toString('base64'));
          else ws.send(Buffer.concat([Buffer.from([channel]), data]));
        },
      }),
    );
  });
}
