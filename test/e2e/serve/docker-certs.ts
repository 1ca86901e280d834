// Certificates as `docker --tlsverify` setups use them, made with the installed openssl (EC keys: fast):
// a CA, a server certificate for 127.0.0.1 and a client certificate it signs, plus a client certificate
// of a foreign CA (to be refused). The client folders hold ca.pem, cert.pem and key.pem, the names
// DOCKER_CERT_PATH expects.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DockerCerts {
  /** ca.pem: the CA `berth serve --tlscacert` trusts. */
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** ca.pem, cert.pem, key.pem of a client the CA signed. */
  clientDir: string;
  /** ca.pem (the right CA, to trust the server), cert.pem, key.pem signed by another CA. */
  foreignClientDir: string;
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function makeCa(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}-key.pem`);
  openssl(['req', '-x509', ...EC_KEY, '-keyout', key, '-out', cert, '-days', '1', '-subj', `/CN=${name}`]);
  return { cert, key };
}

/** A certificate signed by `ca`, with the extensions in `ext` (openssl extfile lines). */
function issue(dir: string, name: string, ca: { cert: string; key: string }, ext: string[]): { cert: string; key: string } {
  const key = join(dir, `${name}-key.pem`);
  const cert = join(dir, `${name}-cert.pem`);
  const csr = join(dir, `${name}.csr`);
  const extFile = join(dir, `${name}.ext`);
  writeFileSync(extFile, ext.join('\n') + '\n');
  openssl(['req', '-new', ...EC_KEY, '-keyout', key, '-out', csr, '-subj', `/CN=${name}`]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-set_serial',
    String(Date.now()),
    '-days',
    '1',
    '-sha256',
    '-extfile',
    extFile,
    '-out',
    cert,
  ]);
  return { cert, key };
}

function clientFolder(dir: string, caCert: string, client: { cert: string; key: string }): string {
  mkdirSync(dir);
  copyFileSync(caCert, join(dir, 'ca.pem'));
  copyFileSync(client.cert, join(dir, 'cert.pem'));
  copyFileSync(client.key, join(dir, 'key.pem'));
  return dir;
}

/** Writes everything into `dir` (which must exist). */
export function makeDockerCerts(dir: string): DockerCerts {
  const ca = makeCa(dir, 'ca');
  const foreignCa = makeCa(dir, 'foreign-ca');
  const server = issue(dir, 'server', ca, ['subjectAltName=IP:127.0.0.1', 'extendedKeyUsage=serverAuth']);
  const client = issue(dir, 'client', ca, ['extendedKeyUsage=clientAuth']);
  const foreign = issue(dir, 'foreign-client', foreignCa, ['extendedKeyUsage=clientAuth']);
  return {
    caCert: ca.cert,
    serverCert: server.cert,
    serverKey: server.key,
    clientDir: clientFolder(join(dir, 'client'), ca.cert, client),
    foreignClientDir: clientFolder(join(dir, 'foreign-client'), ca.cert, foreign),
  };
}
