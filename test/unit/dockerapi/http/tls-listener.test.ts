import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import tls from 'node:tls';
import { Router } from '../../../../src/dockerapi/http/http.js';
import { checkListenerSecurity, parseListener, serveDockerApi } from '../../../../src/dockerapi/http/server.js';
import { loadListenerTls, type ListenerTls } from '../../../../src/dockerapi/http/tls-options.js';
import { makeDockerCerts, type DockerCerts } from '../../../e2e/serve/docker-certs.js';
import { scratchDir } from '../../../util/scratch.js';

const dir = scratchDir('berth-tls-unit-');
let certs: DockerCerts;
before(() => {
  certs = makeDockerCerts(dir);
});
after(() => rmSync(dir, { recursive: true, force: true }));

const verified = (): ListenerTls => loadListenerTls({ tlsverify: true, tlscacert: certs.caCert, tlscert: certs.serverCert, tlskey: certs.serverKey })!;

describe('listener checks', () => {
  test('a tcp listener without a port gets 2376 with TLS, 2375 without; explicit ports (0, 80) are kept', () => {
    assert.equal(parseListener('tcp://127.0.0.1').port, 2375);
    assert.equal(parseListener('tcp://127.0.0.1', { tls: true }).port, 2376);
    assert.equal(parseListener('tcp://127.0.0.1:0', { tls: true }).port, 0);
    assert.equal(parseListener('tcp://127.0.0.1:80').port, 80);
    assert.equal(parseListener('tcp://[::1]:2375').host, '::1');
    assert.throws(() => parseListener('tcp://:x'), /tcp:\/\/:x: not a tcp:\/\/host:port address/);
  });

  test('off loopback only with --tlsverify or --token; --tls alone is not enough', async () => {
    const remote = [parseListener('tcp://0.0.0.0:2376')];
    await assert.rejects(checkListenerSecurity(remote, {}), /0\.0\.0\.0:2376 is not a loopback address: give --tlsverify .* or --token/);
    const encryptOnly: ListenerTls = { ...verified(), verifyClients: false };
    await assert.rejects(checkListenerSecurity(remote, { tls: encryptOnly }), /--tls alone encrypts but accepts any client/);
    await checkListenerSecurity(remote, { tls: verified() });
    await checkListenerSecurity(remote, { token: 'a-token-of-24-characters' });
    await checkListenerSecurity([parseListener('tcp://127.0.0.1:0'), parseListener('tcp://LOCALHOST:0')], { resolve: async () => ['127.0.0.1', '::1'] });
  });

  test('TLS needs a tcp listener to apply to', async () => {
    await assert.rejects(checkListenerSecurity([parseListener('unix:///tmp/x.sock')], { tls: verified() }), /tcp listeners only .* add -H tcp:\/\//);
  });

  test('serveDockerApi itself refuses --tls alone off loopback', async () => {
    const tlsOnly: ListenerTls = { ...verified(), verifyClients: false };
    await assert.rejects(serveDockerApi({ listeners: [parseListener('tcp://0.0.0.0:0')], router: new Router(), tls: tlsOnly }), /not a loopback address/);
  });
});

describe('TLS files', () => {
  test('a missing file is named with its flag and path', () => {
    const missing = join(dir, 'nope.pem');
    assert.throws(
      () => loadListenerTls({ tlsverify: true, tlscacert: missing, tlscert: certs.serverCert, tlskey: certs.serverKey }),
      (err: Error) => {
        assert.match(err.message, /^--tlscacert \S+nope\.pem: cannot read it \(ENOENT\)/);
        return true;
      },
    );
    assert.throws(() => loadListenerTls({ tls: true, tlscert: missing, tlskey: certs.serverKey }), /^Error: --tlscert \S+nope\.pem: cannot read it/);
    assert.throws(() => loadListenerTls({ tls: true, tlscert: certs.serverCert, tlskey: missing }), /^Error: --tlskey \S+nope\.pem/);
  });

  test('files default to $DOCKER_CERT_PATH/{ca,cert,key}.pem', () => {
    const empty = mkdtempSync(join(dir, 'certpath-'));
    assert.throws(() => loadListenerTls({ tlsverify: true }, { DOCKER_CERT_PATH: empty }), new RegExp(`--tlscert ${empty}/cert\\.pem: cannot read it`));
    const loaded = loadListenerTls({ tlsverify: true }, { DOCKER_CERT_PATH: certs.clientDir });
    assert.equal(loaded?.verifyClients, true);
    assert.deepEqual(loaded?.ca, readFileSync(join(certs.clientDir, 'ca.pem')));
  });

  test('--tls alone reads no CA and verifies no client', () => {
    const loaded = loadListenerTls({ tls: true, tlscacert: join(dir, 'absent.pem'), tlscert: certs.serverCert, tlskey: certs.serverKey });
    assert.equal(loaded?.verifyClients, false);
    assert.equal(loaded?.ca, undefined);
  });

  test('not PEM, a key of another certificate, and TLS file flags without --tls are refused', () => {
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'hello');
    assert.throws(() => loadListenerTls({ tls: true, tlscert: junk, tlskey: certs.serverKey }), /--tlscert \S+junk\.pem: not PEM/);
    assert.throws(
      () => loadListenerTls({ tls: true, tlscert: certs.serverCert, tlskey: join(certs.clientDir, 'key.pem') }),
      /--tlscert \S+server-cert\.pem and --tlskey \S+client\/key\.pem do not make a certificate and its key/,
    );
    assert.throws(() => loadListenerTls({ tlscert: certs.serverCert }), /--tlscert given without --tls or --tlsverify/);
    assert.equal(loadListenerTls({}), undefined);
  });
});

describe('an HTTPS listener with --tlsverify', () => {
  // A hijack that answers only after the client half-closed (as `docker run -i` does when stdin ends).
  const router = (): Router =>
    new Router()
      .add('GET', '/_ping', (call) => call.send(200, 'OK'))
      .add('POST', '/cat', async (call) => {
        const stream = call.openStream('application/vnd.docker.raw-stream');
        const chunks: Buffer[] = [];
        for await (const c of stream.input) chunks.push(c as Buffer);
        stream.out.write(`got ${Buffer.concat(chunks).toString()}`);
        stream.end();
      });

  const clientTls = (folder: string): tls.ConnectionOptions => ({
    ca: readFileSync(join(folder, 'ca.pem')),
    cert: readFileSync(join(folder, 'cert.pem')),
    key: readFileSync(join(folder, 'key.pem')),
  });

  function ping(port: number, opts: tls.ConnectionOptions): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port, path: '/_ping', agent: false, ...opts }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
  }

  test('clients without a certificate of the CA fail the handshake, plain HTTP gets a 400; signed ones get through, hijacks too', async () => {
    const logged: string[] = [];
    const server = await serveDockerApi({ listeners: [parseListener('tcp://127.0.0.1:0')], router: router(), tls: verified(), log: (l) => logged.push(l) });
    try {
      const port = Number(server.addresses[0].split(':').pop());
      assert.equal(await ping(port, clientTls(certs.clientDir)), 200);
      await assert.rejects(ping(port, { ca: readFileSync(certs.caCert) }), /certificate|handshake|socket hang up|ECONNRESET/i);
      await assert.rejects(ping(port, clientTls(certs.foreignClientDir)), /certificate|handshake|socket hang up|ECONNRESET|unknown ca/i);
      const plain = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: '/_ping', agent: false }, (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          })
          .on('error', reject);
      });
      assert.deepEqual(plain, { status: 400, body: 'Client sent an HTTP request to an HTTPS server.\n' });
      assert.equal(await ping(port, clientTls(certs.clientDir)), 200, 'the server keeps serving after refused handshakes');
      assert.ok(
        logged.some((l) => /TLS handshake with 127\.0\.0\.1 refused/.test(l)),
        logged.join('\n'),
      );

      const reply = await new Promise<string>((resolve, reject) => {
        const s = tls.connect({ host: '127.0.0.1', port, ...clientTls(certs.clientDir) }, () => {
          s.write('POST /cat HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n');
        });
        let data = '';
        let sent = false;
        s.on('data', (d: Buffer) => {
          data += d.toString();
          if (data.includes('\r\n\r\n') && !sent) {
            sent = true;
            s.write('hello');
            s.end(); // close_notify + FIN: stdin is over, the reply must still come
          }
        });
        s.on('end', () => resolve(data));
        s.on('error', reject);
        s.setTimeout(5000, () => s.destroy(new Error(`no reply; so far: ${data}`)));
      });
      assert.match(reply, /^HTTP\/1.1 101 UPGRADED/);
      assert.match(reply, /got hello$/);
    } finally {
      await server.close();
    }
  });
});
