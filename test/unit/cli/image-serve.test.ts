// `berth image-serve DIR` as a pod runs it (on 127.0.0.1 here): one line on stdout once it serves, a certificate
// naming $POD_IP, a clean exit on SIGTERM; a bad folder or a taken port is one line on stderr and exit 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import https from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { podAddresses } from '../../../src/cli/image-serve.js';
import { writeOciLayout } from '../../../src/registry/layout-entries.js';
import { folderWriter, layeredImage } from '../registry/image-fixtures.js';
import { scratchDir } from '../../util/scratch.js';
import { writeFileSync } from 'node:fs';
import { issueServerCertificate, makeImageCa } from '../../../src/registry/image-ca.js';

const main = path.join(import.meta.dirname, '../../../src/cli/main.js');

function berth(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, [main, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

async function firstLine(child: ChildProcess): Promise<string> {
  let text = '';
  for await (const chunk of child.stdout!) {
    text += String(chunk);
    if (text.includes('\n')) return text.slice(0, text.indexOf('\n'));
  }
  throw new Error(`berth image-serve ended before it said it serves: ${text}`);
}

async function exited(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => (stdout += String(c)));
  child.stderr!.on('data', (c) => (stderr += String(c)));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

async function layout(): Promise<{ dir: string; digest: string }> {
  const image = await layeredImage([{ 'bin/hello': 'hi\n' }]);
  const dir = scratchDir('berth-image-serve-');
  await writeOciLayout(image, folderWriter(dir).add);
  return { dir, digest: image.manifest.digest };
}

test('it says what it serves, serves it with a certificate naming $POD_IP for 7 days, and exits 0 on SIGTERM', { timeout: 30_000 }, async () => {
  const { dir, digest } = await layout();
  const child = berth(['image-serve', dir, '--listen', '127.0.0.1', '--port', '0'], { POD_IP: '10.9.8.7' });
  const line = await firstLine(child);
  const served = new RegExp(`^berth image-serve: serving ${digest} from ${dir} on https://127\\.0\\.0\\.1:(\\d+)$`).exec(line);
  assert.ok(served, line);
  const answer = await new Promise<{ status: number; peer: ReturnType<TLSSocket['getPeerX509Certificate']> }>((resolve, reject) =>
    https
      .get({ host: '127.0.0.1', port: Number(served[1]), path: `/v2/step/manifests/${digest}`, rejectUnauthorized: false, agent: false }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, peer: (res.socket as TLSSocket).getPeerX509Certificate() });
      })
      .on('error', reject),
  );
  assert.equal(answer.status, 200);
  assert.equal(answer.peer?.subject, 'CN=berth-image-server');
  assert.match(answer.peer?.subjectAltName ?? '', /^IP Address:10\.9\.8\.7(, |$)/);
  const from = new Date(answer.peer!.validFrom).getTime();
  const to = new Date(answer.peer!.validTo).getTime();
  assert.ok(Math.abs(Date.now() - 5 * 60_000 - from) < 60_000, answer.peer!.validFrom);
  assert.equal(to - from, (7 * 24 * 60 + 5) * 60_000);
  const end = exited(child);
  child.kill('SIGTERM');
  const { code, stderr } = await end;
  assert.equal(code, 0, stderr);
  assert.match(stderr, new RegExp(`^berth image-serve: GET /v2/step/manifests/${digest} 200$`, 'm'));
});

test(
  '--cert and --key: it presents the certificate the image CA issued, which a client trusting only that CA accepts; one without the other is refused',
  { timeout: 30_000 },
  async () => {
    const { dir, digest } = await layout();
    const ca = makeImageCa({ ipRanges: ['127.0.0.0/8'], notAfter: new Date(Date.now() + 3600_000) });
    const issued = issueServerCertificate(ca, { ipAddresses: ['127.0.0.1'], notAfter: new Date(Date.now() + 600_000) });
    const tls = scratchDir('berth-image-serve-tls-');
    writeFileSync(path.join(tls, 'tls.crt'), issued.cert);
    writeFileSync(path.join(tls, 'tls.key'), issued.key, { mode: 0o600 });
    const child = berth(['image-serve', dir, '--listen', '127.0.0.1', '--port', '0', '--cert', path.join(tls, 'tls.crt'), '--key', path.join(tls, 'tls.key')]);
    const port = Number(/:(\d+)$/.exec(await firstLine(child))?.[1]);
    try {
      const status = await new Promise<number>((resolve, reject) =>
        https
          .get({ host: '127.0.0.1', port, path: `/v2/step/manifests/${digest}`, ca: ca.cert, agent: false }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
          .on('error', reject),
      );
      assert.equal(status, 200, 'verified against the CA alone, for the address');
    } finally {
      child.kill('SIGTERM');
    }
    const half = await exited(berth(['image-serve', dir, '--port', '0', '--cert', path.join(tls, 'tls.crt')]));
    assert.deepEqual([half.code, half.stderr], [1, 'berth image-serve: --cert and --key go together: give both, or neither for a self-signed certificate\n']);
  },
);

test('a folder that is no image layout, or a port in use: one line on stderr, exit 1', { timeout: 30_000 }, async () => {
  const missing = path.join(scratchDir('berth-none-'), 'layout');
  const bad = await exited(berth(['image-serve', missing, '--listen', '127.0.0.1', '--port', '0']));
  assert.deepEqual([bad.code, bad.stdout, bad.stderr], [1, '', `berth image-serve: ${missing}: missing: no such folder\n`]);

  const { dir } = await layout();
  const taken = createServer().listen(0, '127.0.0.1');
  await once(taken, 'listening');
  const port = (taken.address() as AddressInfo).port;
  try {
    const busy = await exited(berth(['image-serve', dir, '--listen', '127.0.0.1', '--port', String(port)]));
    assert.equal(busy.code, 1);
    assert.match(busy.stderr, new RegExp(`^berth image-serve: cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE.*\\n$`));
  } finally {
    taken.close();
  }
  const nonsense = await exited(berth(['image-serve', dir, '--port', 'https']));
  assert.deepEqual([nonsense.code, nonsense.stderr], [1, 'berth image-serve: --port https: give a port number (0-65535)\n']);
});

test('--help says what it is for', () => {
  const r = spawnSync(process.execPath, [main, 'image-serve', '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Usage: berth image-serve \[options\] <dir>/);
  assert.match(r.stdout.replace(/\s+/g, ' '), /run by berth itself in the image pods of --image-server/);
  assert.match(r.stdout, /--port <n>.*\(default: "5443"\)/);
  assert.match(r.stdout, /--listen <address>.*IPv6 and IPv4/s);
});

test("podAddresses: $POD_IP first, then the interfaces' addresses but loopback, each once", () => {
  const nic = (address: string, internal = false): import('node:os').NetworkInterfaceInfo =>
    ({ address, internal, family: address.includes(':') ? 'IPv6' : 'IPv4', netmask: '', mac: '', cidr: null }) as import('node:os').NetworkInterfaceInfo;
  const interfaces = { lo: [nic('127.0.0.1', true), nic('::1', true)], eth0: [nic('10.244.1.7'), nic('fd00::7')], eth1: undefined };
  assert.deepEqual(podAddresses(interfaces, '10.244.1.7'), ['10.244.1.7', 'fd00::7']);
  assert.deepEqual(podAddresses(interfaces, undefined), ['10.244.1.7', 'fd00::7']);
  assert.deepEqual(podAddresses(interfaces, ' '), ['10.244.1.7', 'fd00::7']);
  assert.throws(() => podAddresses(interfaces, 'pod-7'), /\$POD_IP "pod-7" is not an IP address/);
});
