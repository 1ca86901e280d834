/**
 * A self-signed X.509 v3 certificate and its EC P-256 key, for a server whose clients skip verification
 * but still speak TLS (a node's containerd pulling from berth's image server in a pod). It is its own CA
 * (basicConstraints cA, keyUsage keyCertSign), which is what lets a client check the signature against the
 * certificate itself.
 */
import { basicConstraints, keyUsage, selfSigned, serverAuth, subjectAltNames, subjectKeyIdentifier } from './certificate.js';

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
  const altNames = subjectAltNames(o);
  // digitalSignature and keyCertSign
  return selfSigned(o.commonName, { notBefore: o.notBefore ?? new Date(), notAfter: o.notAfter }, (publicKey) => [
    basicConstraints(true),
    keyUsage(0, 5),
    serverAuth(),
    subjectKeyIdentifier(publicKey),
    ...(altNames ? [altNames] : []),
  ]);
}
