// Certificates for the dev cluster's HTTPS endpoint: a private CA and a server certificate it signs.
// Keys come from node:crypto (native, fast); node-forge builds and signs the X.509 certificates.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

export interface PemPair {
  certPem: string;
  keyPem: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
// tolerate clocks that disagree a little between the cluster and its clients
const BACKDATE_MS = 60 * 60 * 1000;

function rsaKey(): { keyPem: string; privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  return { keyPem, privateKey: forgeKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e) };
}

/** A positive serial of 16 random bytes (RFC 5280 allows 20; Go rejects negative ones). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

function newCertificate(publicKey: forge.pki.rsa.PublicKey, validDays: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serialNumber();
  const now = Date.now();
  cert.validity.notBefore = new Date(now - BACKDATE_MS);
  cert.validity.notAfter = new Date(now + validDays * DAY_MS);
  return cert;
}

export function generateCa(commonName = 'berth-dev-cluster-ca'): PemPair {
  const key = rsaKey();
  const cert = newCertificate(key.publicKey, 3650);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.keyPem };
}

/** A serving certificate for 127.0.0.1, ::1, localhost and `hosts` (IP addresses and DNS names), signed by `ca`. */
export function issueServerCert(ca: PemPair, hosts: string[]): PemPair {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const key = rsaKey();
  const cert = newCertificate(key.publicKey, 365);
  cert.setSubject([{ name: 'commonName', value: 'berth-dev-cluster-apiserver' }]);
  cert.setIssuer(caCert.subject.attributes);

  const names = [...new Set(['127.0.0.1', '::1', 'localhost', ...hosts].map((h) => h.trim()).filter(Boolean))];
  const altNames = names.map((h) => (isIP(h) ? { type: 7, ip: h } : { type: 2, value: h }));
  const caKeyId = caCert.generateSubjectKeyIdentifier().getBytes();
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames },
    { name: 'authorityKeyIdentifier', keyIdentifier: caKeyId },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.keyPem };
}

/** A client certificate for `commonName` in `groups` (the API server reads them as user and groups), signed by `ca`. */
export function issueClientCert(ca: PemPair, commonName: string, groups: string[] = []): PemPair {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const key = rsaKey();
  const cert = newCertificate(key.publicKey, 365);
  cert.setSubject([{ name: 'commonName', value: commonName }, ...groups.map((g) => ({ name: 'organizationName', value: g }))]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', clientAuth: true },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.keyPem };
}
