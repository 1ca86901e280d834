// Port-forward: a TCP connection to the pod. The host reaches podman's bridge, so podIP:port works for
// listeners on the pod's interface. Listeners bound to 127.0.0.1 inside the pod (and pods without a
// network) are reached by running a tiny relay in the pod's network namespace (nsenter + this Node binary).
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { Duplex } from 'node:stream';

export function connectTcp(host: string, port: number, timeoutMs = 5000): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => socket.destroy(new Error(`dial tcp ${host}:${port}: i/o timeout`)), timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

const RELAY = `
const net = require('node:net');
const s = net.connect({ host: '127.0.0.1', port: Number(process.argv[1]) });
s.on('connect', () => { process.stderr.write('C'); process.stdin.pipe(s); s.pipe(process.stdout); });
s.on('error', (e) => { process.stderr.write('E' + e.message); process.exit(1); });
s.on('close', () => process.exit(0));
`;

/** a relay process inside the network namespace of `pid`, as a Duplex */
export function connectInNamespace(pid: number, port: number, timeoutMs = 5000): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const child = spawn('nsenter', ['-t', String(pid), '-n', '--', process.execPath, '-e', RELAY, String(port)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`dial tcp 127.0.0.1:${port}: i/o timeout`)), timeoutMs);
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.on('error', fail);
    child.on('close', () => fail(new Error(`dial tcp 127.0.0.1:${port}: connection refused`)));
    child.stdin.on('error', () => undefined);
    child.stderr.once('data', (b: Buffer) => {
      const text = b.toString();
      if (!text.startsWith('C')) return fail(new Error(`dial tcp 127.0.0.1:${port}: ${text.slice(1).trim() || 'connection refused'}`));
      settled = true;
      clearTimeout(timer);
      resolve(Duplex.from({ readable: child.stdout, writable: child.stdin }));
    });
  });
}
