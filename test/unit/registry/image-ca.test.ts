// berth's image CA (src/registry/image-ca.ts): the certificates it issues verify with OpenSSL as a node's TLS client
// verifies them (chain, address, name constraints), one for an address outside its ranges or with a DNS name does
// not, and a CA the user brings (an RSA one made by openssl, with a subject of several parts) issues as well.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { basicConstraints, commonNameDn, keyUsage, serverAuth, signCertificate, subjectAltNames, subjectOf } from '../../../src/registry/certificate.js';
import { issueServerCertificate, makeImageCa, rangeBytes, readImageCa, writeImageCa, type ImageCa } from '../../../src/registry/image-ca.js';

const HOUR_MS = 3600_000;

function withDir(run: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'berth-image-ca-'));
  try {
    run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `openssl verify` of a server certificate against the CA, for an address or a host name: whether it passed, and what it said. */
function opensslVerify(ca: string, cert: string, name: { ip: string } | { host: string }): { ok: boolean; said: string } {
  let result = { ok: false, said: '' };
  withDir((dir) => {
    writeFileSync(join(dir, 'ca.pem'), ca);
    writeFileSync(join(dir, 'cert.pem'), cert);
    const check = 'ip' in name ? ['-verify_ip', name.ip] : ['-verify_hostname', name.host];
    const r = spawnSync('openssl', ['verify', '-purpose', 'sslserver', '-CAfile', join(dir, 'ca.pem'), ...check, join(dir, 'cert.pem')], { encoding: 'utf8' });
    result = { ok: r.status === 0, said: `${r.stdout}${r.stderr}`.trim() };
  });
  return result;
}

const ca = makeImageCa({ ipRanges: ['10.244.0.0/16', 'fd00:10:244::/56'], notAfter: new Date(Date.now() + 24 * HOUR_MS) });
const soon = (): Date => new Date(Date.now() + HOUR_MS);

test('the CA is a CA for no CA below it, and names only the ranges given: no DNS name', () => {
  const x509 = new X509Certificate(ca.cert);
  assert.equal(x509.ca, true);
  assert.equal(x509.subject, 'CN=berth image CA');
  const text = spawnSync('openssl', ['x509', '-noout', '-text'], { input: ca.cert, encoding: 'utf8' }).stdout;
  assert.match(text, /X509v3 Basic Constraints: critical\s+CA:TRUE, pathlen:0/);
  assert.match(
    text,
    /X509v3 Name Constraints: critical\s+Permitted:\s+IP:10\.244\.0\.0\/255\.255\.0\.0\s+IP:FD00:10:244:0:0:0:0:0\/FFFF:FFFF:FFFF:FF00:0:0:0:0\s+Excluded:\s+DNS:\s/,
  );
  assert.match(text, /Certificate Sign, CRL Sign/);
});

test('a server certificate for a pod address verifies against the CA for that address, IPv4 and IPv6; not for another', () => {
  const issued = issueServerCertificate(ca, { ipAddresses: ['10.244.1.7', 'fd00:10:244::7'], notAfter: soon() });
  const x509 = new X509Certificate(issued.cert);
  assert.equal(x509.verify(new X509Certificate(ca.cert).publicKey), true);
  assert.equal(x509.checkPrivateKey(createPrivateKey(issued.key)), true);
  assert.equal(x509.ca, false);
  assert.equal(x509.issuer, 'CN=berth image CA');
  const verified = opensslVerify(ca.cert, issued.cert, { ip: '10.244.1.7' });
  assert.ok(verified.ok && verified.said.endsWith(': OK'), verified.said);
  assert.equal(opensslVerify(ca.cert, issued.cert, { ip: 'fd00:10:244::7' }).ok, true);
  const other = opensslVerify(ca.cert, issued.cert, { ip: '10.244.1.8' });
  assert.equal(other.ok, false);
  assert.match(other.said, /IP address mismatch/);
});

test("an address outside the CA's ranges, or a DNS name signed with its key, fails verification: the name constraints hold", () => {
  const outside = issueServerCertificate(ca, { ipAddresses: ['10.96.0.1'], notAfter: soon() });
  const refused = opensslVerify(ca.cert, outside.cert, { ip: '10.96.0.1' });
  assert.equal(refused.ok, false);
  assert.match(refused.said, /permitted subtree violation/);
  // what a leaked key could sign: a registry's DNS name
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const forged = signCertificate({
    subject: commonNameDn('registry-1.docker.io'),
    issuer: subjectOf(new X509Certificate(ca.cert).raw),
    publicKey,
    signer: createPrivateKey(ca.key),
    notBefore: new Date(),
    notAfter: soon(),
    extensions: [basicConstraints(false), keyUsage(0), serverAuth(), subjectAltNames({ dnsNames: ['registry-1.docker.io'] })!],
  });
  const dns = opensslVerify(ca.cert, forged, { host: 'registry-1.docker.io' });
  assert.equal(dns.ok, false);
  assert.match(dns.said, /excluded subtree violation/);
});

test('a CA the user brings: RSA, made by openssl, its subject of several parts named as the issuer in its own bytes', () => {
  withDir((dir) => {
    const made = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/O=Example Corp/OU=Platform/CN=Example image CA',
        '-keyout',
        join(dir, 'tls.key'),
        '-out',
        join(dir, 'tls.crt'),
      ],
      { encoding: 'utf8' },
    );
    assert.equal(made.status, 0, made.stderr);
    const brought = readImageCa(dir, '--image-server-ca');
    const issued = issueServerCertificate(brought, { ipAddresses: ['10.244.3.3'], notAfter: soon() });
    assert.equal(new X509Certificate(issued.cert).issuer, 'O=Example Corp\nOU=Platform\nCN=Example image CA');
    assert.equal(opensslVerify(brought.cert, issued.cert, { ip: '10.244.3.3' }).ok, true);
  });
});

test('a CA folder: written with the key for its owner only, read back; missing files, a non-CA or a key of another fail naming the flag and the fix', () => {
  withDir((dir) => {
    writeImageCa(join(dir, 'ca'), ca);
    assert.equal(statSync(join(dir, 'ca', 'tls.key')).mode & 0o777, 0o600);
    assert.deepEqual(readImageCa(join(dir, 'ca'), '--image-server-ca'), ca);
    assert.throws(
      () => readImageCa(join(dir, 'none'), '--image-server-ca'),
      /^Error: --image-server-ca .*none: cannot read tls\.crt \(ENOENT\): .*berth image-ca DIR makes one/,
    );
    const leaf = issueServerCertificate(ca, { ipAddresses: ['10.244.1.1'], notAfter: soon() });
    writeImageCa(join(dir, 'leaf'), leaf);
    assert.throws(
      () => readImageCa(join(dir, 'leaf'), '$BERTH_IMAGE_SERVER_CA'),
      /^Error: \$BERTH_IMAGE_SERVER_CA .*: the certificate of CN=berth-image-server is not a CA's/,
    );
    const other = makeImageCa({ ipRanges: [], notAfter: soon() });
    writeImageCa(join(dir, 'mixed'), { cert: ca.cert, key: other.key } satisfies ImageCa);
    assert.throws(() => readImageCa(join(dir, 'mixed'), '--image-server-ca'), /the key given is not the key of CN=berth image CA/);
  });
});

test('rangeBytes: a CIDR as its address and mask; a range with host bits, no prefix or a bad prefix is refused with an example', () => {
  assert.equal(rangeBytes('10.244.0.0/16').toString('hex'), '0af40000ffff0000');
  assert.equal(rangeBytes('0.0.0.0/0').toString('hex'), '0000000000000000');
  assert.equal(rangeBytes('fd00::/8').toString('hex'), `fd${'00'.repeat(15)}ff${'00'.repeat(15)}`);
  assert.throws(() => rangeBytes('10.244.1.0/16'), /bits set past the \/16/);
  for (const bad of ['10.244.0.0', '10.244.0.0/33', 'pods/16', '10.244.0.0/16/1'])
    assert.throws(() => rangeBytes(bad), /not an address range: .* \(give one as 10\.244\.0\.0\/16/);
});

test('a certificate outliving its CA is cut to the CA end', () => {
  const shortCa = makeImageCa({ ipRanges: [], notAfter: new Date(Date.now() + HOUR_MS) });
  const issued = issueServerCertificate(shortCa, { ipAddresses: ['10.0.0.1'], notAfter: new Date(Date.now() + 48 * HOUR_MS) });
  assert.equal(new X509Certificate(issued.cert).validTo, new X509Certificate(shortCa.cert).validTo);
});
