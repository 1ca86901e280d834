// `berth serve` with dockerd's TLS flags: the installed docker CLI talks to a `--tlsverify` tcp listener
// with DOCKER_TLS_VERIFY/DOCKER_CERT_PATH (plain requests and the hijacked attach of `run -i`), clients
// without a certificate of the CA are refused at the handshake, and unsafe listeners stop berth at once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUSYBOX, berthCli, freshNamespace, kubeconfigPath, runCommand, type Result } from '../harness/cluster.js';
import { makeDockerCerts, type DockerCerts } from './docker-certs.js';
import { berthLeftovers, type DockerEngine, dropNamespace, startBerth } from './serve-env.js';

describe('berth serve --tlsverify', () => {
  const instance = `bs${process.pid}-tls`;
  const work = mkdtempSync(join(tmpdir(), 'berth-serve-tls-'));
  let certs: DockerCerts;
  let engine: DockerEngine | undefined;
  let namespace = '';
  let dockerHost = '';

  /** The docker CLI over TCP; `tlsEnv` are the DOCKER_TLS_* variables (none of the caller's leak in). */
  const docker = (args: string[], tlsEnv: Record<string, string>, input?: string): Promise<Result> => {
    const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: dockerHost, DOCKER_CONFIG: work, ...tlsEnv };
    if (!tlsEnv.DOCKER_TLS_VERIFY) delete env.DOCKER_TLS_VERIFY;
    if (!tlsEnv.DOCKER_CERT_PATH) delete env.DOCKER_CERT_PATH;
    return runCommand('docker', args, { env, input, timeoutMs: 90_000 });
  };
  const withClientCert = (): Record<string, string> => ({ DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: certs.clientDir });
  const ok = async (args: string[], input?: string): Promise<string> => {
    const r = await docker(args, withClientCert(), input);
    assert.equal(r.code, 0, `docker ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r.stdout;
  };

  before(async () => {
    certs = makeDockerCerts(work);
    namespace = await freshNamespace('serve-tls');
    engine = await startBerth(namespace, instance, {
      extra: ['-H', 'tcp://127.0.0.1:0', '--tlsverify', '--tlscacert', certs.caCert, '--tlscert', certs.serverCert, '--tlskey', certs.serverKey],
    });
    const m = await engine.waitForOutput(/listening on .*(tcp:\/\/127\.0\.0\.1:\d+).*\(tcp: TLS, client certificates required\)/);
    dockerHost = m[1]!;
    await ok(['pull', BUSYBOX]);
  });

  after(async () => {
    try {
      await engine?.stop();
    } finally {
      rmSync(work, { recursive: true, force: true });
      if (namespace) {
        const left = await berthLeftovers(namespace, instance);
        await dropNamespace(namespace);
        assert.deepEqual(left, [], 'berth serve left objects behind after SIGTERM');
      }
    }
  });

  test('docker version over TLS with a client certificate', async () => {
    assert.equal((await ok(['version', '--format', '{{.Server.APIVersion}}'])).trim(), '1.52');
  });

  test('run --rm -i: stdin in, output and exit code back through the hijacked attach over TLS', async () => {
    const r = await docker(['run', '--rm', '-i', BUSYBOX, 'sh', '-c', 'cat; exit 3'], withClientCert(), 'through tls\nsecond line\n');
    assert.equal(r.code, 3, `stderr: ${r.stderr}`);
    assert.equal(r.stdout, 'through tls\nsecond line\n');
  });

  test('clients without a certificate of the CA are refused at the handshake, plain HTTP is told to use TLS; the server keeps serving', async () => {
    const noCert = await docker(['--tls', '--tlscacert', certs.caCert, 'version', '--format', '{{.Server.APIVersion}}'], {});
    assert.notEqual(noCert.code, 0, noCert.stdout);
    assert.match(noCert.stderr, /certificate|tls|remote error/i);
    const foreign = await docker(['version', '--format', '{{.Server.APIVersion}}'], { DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: certs.foreignClientDir });
    assert.notEqual(foreign.code, 0, foreign.stdout);
    assert.match(foreign.stderr, /certificate|tls|remote error/i);
    const plain = await docker(['version', '--format', '{{.Server.APIVersion}}'], {});
    assert.notEqual(plain.code, 0, plain.stdout);
    assert.match(plain.stderr, /Client sent an HTTP request to an HTTPS server/);
    assert.equal((await ok(['version', '--format', '{{.Server.APIVersion}}'])).trim(), '1.52');
    await engine!.waitForOutput(/TLS handshake with 127\.0\.0\.1 refused/);
  });

  test('an unsafe or half-configured listener stops berth serve before it listens', async () => {
    const serve = (args: string[]): Promise<Result> =>
      runCommand(process.execPath, [berthCli, 'serve', '--kubeconfig', kubeconfigPath(), '-n', namespace, '--instance', `${instance}-refused`, ...args], {
        timeoutMs: 30_000,
      });
    const open = await serve(['-H', 'tcp://0.0.0.0:0']);
    assert.notEqual(open.code, 0);
    assert.match(open.stderr, /tcp:\/\/0\.0\.0\.0:0 is not a loopback address: give --tlsverify .* or --token/);
    const encryptOnly = await serve(['-H', 'tcp://0.0.0.0:0', '--tls', '--tlscert', certs.serverCert, '--tlskey', certs.serverKey]);
    assert.notEqual(encryptOnly.code, 0);
    assert.match(encryptOnly.stderr, /--tls alone encrypts but accepts any client/);
    const missing = join(work, 'missing-ca.pem');
    const noCa = await serve(['-H', 'tcp://127.0.0.1:0', '--tlsverify', '--tlscacert', missing, '--tlscert', certs.serverCert, '--tlskey', certs.serverKey]);
    assert.notEqual(noCa.code, 0);
    assert.ok(noCa.stderr.includes(`--tlscacert ${missing}: cannot read it (ENOENT)`), noCa.stderr);
  });
});
