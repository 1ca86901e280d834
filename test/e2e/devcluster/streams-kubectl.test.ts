// The stream handlers against the real kubectl (1.32): exec over WebSocket v5, port-forward over the SPDY
// WebSocket tunnel and over the raw SPDY upgrade. The API server is a stub that answers discovery and the
// pod GET and routes upgrades to the handlers; exec runs local processes, port-forward dials loopback.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { handlePortForwardUpgrade } from '../../../src/devcluster/streams/portforward.js';
import { handleRemoteCommandUpgrade } from '../../../src/devcluster/streams/remotecommand.js';
import { noFaults } from '../../../src/devcluster/types.js';
import { childSession, closedPort, startEchoServer, startStubServer, type StubServer } from '../../unit/devcluster/streams-harness.js';

let server: StubServer;
let echo: { port: number; close(): Promise<void> };
let refused: number;
/** how each upgrade arrived: 'websocket <protocols>' or 'spdy <protocols>' */
const upgrades: string[] = [];
const children = new Set<ChildProcess>();

// the pod's ports as kubectl names them, mapped to loopback servers
const POD_ECHO_PORT = 8080;
const POD_CLOSED_PORT = 9;

before(async () => {
  echo = await startEchoServer();
  refused = await closedPort();
  server = await startStubServer((req: IncomingMessage, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const spdy = (req.headers.upgrade ?? '').toLowerCase().startsWith('spdy');
    upgrades.push(spdy ? `spdy ${req.headers['x-stream-protocol-version']}` : `websocket ${req.headers['sec-websocket-protocol']}`);
    if (url.pathname.endsWith('/portforward')) {
      const ports = url.searchParams.getAll('ports').map(Number);
      handlePortForwardUpgrade(req, socket, head, ports, (port) => dialPod(port));
      return;
    }
    const command = url.searchParams.getAll('command');
    handleRemoteCommandUpgrade(req, socket, head, async () => childSession(command[0]!, command.slice(1)), noFaults());
  });
});

after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await server.close();
  await echo.close();
});

function dialPod(port: number): Promise<Socket> {
  const target = port === POD_ECHO_PORT ? echo.port : port === POD_CLOSED_PORT ? refused : -1;
  return new Promise((resolve, reject) => {
    if (target < 0) return reject(new Error(`nothing listens on ${port}`));
    const s = connect(target, '127.0.0.1');
    s.once('connect', () => resolve(s));
    s.once('error', (err) => reject(new Error(`failed to connect to localhost:${port} inside namespace: ${err.message}`)));
  });
}

function kubectl(args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn('kubectl', [`--server=${server.url}`, '--kubeconfig=/dev/null', ...args], { env: { ...process.env, ...env }, stdio: 'pipe' });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

async function run(args: string[], input?: Buffer, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  const child = kubectl(args, env);
  const out: Buffer[] = [];
  let err = '';
  child.stdout!.on('data', (c: Buffer) => out.push(c));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  child.stdin!.end(input);
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout: Buffer.concat(out), stderr: err };
}

/** starts `kubectl port-forward` and resolves with the local ports, in the order of `mappings` */
async function portForward(mappings: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; localPorts: number[]; stderr: () => string; exited: Promise<number | null> }> {
  const child = kubectl(['port-forward', 'pod/p', ...mappings], env);
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = once(child, 'close').then(([code]) => code as number | null);
  const localPorts = await new Promise<number[]>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const found = mappings.map((m) => new RegExp(`127\\.0\\.0\\.1:(\\d+) -> ${m.split(':')[1]}\\n`).exec(out)?.[1]);
      if (found.every((p) => p !== undefined)) resolve(found.map(Number));
    });
    void exited.then((code) => reject(new Error(`kubectl exited ${code}: ${err}`)));
  });
  return { child, localPorts, stderr: () => err, exited };
}

/** one TCP connection through the forward: send, half-close, read until the far end closes */
function roundTrip(port: number, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = connect(port, '127.0.0.1');
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => resolve(Buffer.concat(chunks)));
    s.on('error', reject);
    s.on('connect', () => s.end(payload));
  });
}

test('kubectl exec -i: stdin reaches cat and ends (v5 CLOSE), output comes back whole, exit 0', async () => {
  upgrades.length = 0;
  const input = Buffer.from('line one\n'.repeat(100_000)); // ~900 KiB
  const result = await run(['exec', '-i', 'p', '--', 'cat'], input);
  assert.equal(result.code, 0, result.stderr);
  assert.ok(result.stdout.equals(input), `got ${result.stdout.length} of ${input.length} bytes`);
  assert.match(upgrades[0]!, /^websocket .*v5\.channel\.k8s\.io/);
});

test('kubectl exec: stdout and stderr apart, the exit code through the status frame', async () => {
  const result = await run(['exec', 'p', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
  assert.equal(result.code, 3);
  assert.equal(result.stdout.toString(), 'out\n');
  assert.match(result.stderr, /^err\n/);
  assert.match(result.stderr, /command terminated with exit code 3/);
});

test('kubectl exec over raw SPDY (KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false): stdin EOF, output, exit code', async () => {
  upgrades.length = 0;
  const spdy = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' };
  const input = Buffer.from('spdy stdin\n'.repeat(50_000));
  const cat = await run(['exec', '-i', 'p', '--', 'cat'], input, spdy);
  assert.equal(cat.code, 0, cat.stderr);
  assert.ok(cat.stdout.equals(input), `got ${cat.stdout.length} of ${input.length} bytes`);
  assert.match(upgrades[0]!, /^spdy .*v4\.channel\.k8s\.io/);
  const failing = await run(['exec', 'p', '--', 'sh', '-c', 'echo out; echo err >&2; exit 4'], undefined, spdy);
  assert.equal(failing.code, 4);
  assert.equal(failing.stdout.toString(), 'out\n');
  assert.match(failing.stderr, /^err\n/);
});

for (const [name, env, expected] of [
  ['SPDY tunnelled in WebSocket', {}, /^websocket SPDY\/3\.1\+portforward\.k8s\.io$/],
  ['raw SPDY upgrade', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }, /^spdy portforward\.k8s\.io$/],
] as const) {
  test(`kubectl port-forward over ${name}: two concurrent connections, 4 MiB each way`, async () => {
    upgrades.length = 0;
    const pf = await portForward([`0:${POD_ECHO_PORT}`], env);
    try {
      const big = Buffer.alloc(4 * 1024 * 1024, 'z');
      const [small, large] = await Promise.all([roundTrip(pf.localPorts[0]!, Buffer.from('hello')), roundTrip(pf.localPorts[0]!, big)]);
      assert.equal(small.toString(), 'hello');
      assert.ok(large.equals(big), `got ${large.length} bytes`);
      assert.deepEqual(upgrades.length, 1);
      assert.match(upgrades[0]!, expected);
    } finally {
      pf.child.kill();
      await pf.exited;
    }
  });
}

test('kubectl port-forward to a closed port: the pod-side error reaches kubectl, which ends the forward as against a real cluster', async () => {
  const pf = await portForward([`0:${POD_ECHO_PORT}`, `0:${POD_CLOSED_PORT}`]);
  try {
    const [echoPort, closedLocal] = pf.localPorts as [number, number];
    assert.equal((await roundTrip(echoPort, Buffer.from('before'))).toString(), 'before');
    const failed = await roundTrip(closedLocal, Buffer.from('lost')).catch(() => Buffer.alloc(0));
    assert.equal(failed.length, 0);
    // client-go ends the whole forward on any error-stream message ("lost connection to pod", since
    // kubernetes#103526), exactly as against a real cluster; the server keeps other pairs (see unit test)
    const code = await pf.exited;
    assert.match(pf.stderr(), new RegExp(`error forwarding port ${POD_CLOSED_PORT} to pod p, uid : failed to connect`));
    assert.equal(code, 1);
  } finally {
    pf.child.kill();
  }
});
