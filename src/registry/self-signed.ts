/**
 * A self-signed X.509 v3 certificate and its EC P-256 key, for a server whose clients skip verification
 * but still speak TLS (a node's containerd pulling from berth's image server in a pod). It is its own CA
 * (basicConstraints cA, keyUsage keyCertSign), which is what lets a client check the signature against the
 * certificate itself.
 */
import { generateKeyPairSync } from 'node:crypto';
import { basicConstraints, commonNameDn, keyUsage, serverAuth, signCertificate, subjectAltNames, subjectKeyIdentifier } from './certificate.js';

export interface CertificateRequest {
  commonName: string;
  ipAddresses?: string[];
  dnsNames?: string[];
  /** Default: now. */
  notBefore?: Date;
  notAfter: Date;
}

/** A certificate and its private key (PKCS #8), both PEM. */
export function selfSignedCertificate(o: CertificateRequest): { cert: string; key: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const name = commonNameDn(o.commonName);
  const altNames = subjectAltNames(o);
  const cert = signCertificate({
    subject: name,
    issuer: name,
    publicKey,
    signer: privateKey,
    notBefore: o.notBefore ?? new Date(),
    notAfter: o.notAfter,
    // digitalSignature and keyCertSign
    extensions: [basicConstraints(true), keyUsage(0, 5), serverAuth(), subjectKeyIdentifier(publicKey), ...(altNames ? [altNames] : [])],
  });
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
