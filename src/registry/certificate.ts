/**
 * X.509 v3 certificates as RFC 5280 has them, built over der.ts and signed by Node: the parts every certificate of
 * berth's shares (names, validity, key identifiers, the signature), whoever signs it: the image server's
 * self-signed one (self-signed.ts) and those an image CA issues (image-ca.ts). Go's crypto/x509 (containerd)
 * refuses what OpenSSL forgives, so each part is in its canonical form.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import {
  derBitString,
  derBoolean,
  derElement,
  derExplicit,
  derImplicitPrimitive,
  derInteger,
  derOctetString,
  derOid,
  derSequence,
  derSet,
  derTime,
  derUtf8String,
} from './der.js';
import { derChildren, readDer } from './der-read.js';
import { ipAddressBytes } from './ip-bytes.js';

export const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  ecdsaWithSha384: '1.2.840.10045.4.3.3',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  nameConstraints: '2.5.29.30',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

export interface CertificateFields {
  /** The subject's distinguished name, DER (commonNameDn). */
  subject: Buffer;
  /** The issuer's distinguished name, DER: the subject's own for a self-signed certificate. */
  issuer: Buffer;
  /** The subject's public key. */
  publicKey: KeyObject;
  /** The issuer's private key. */
  signer: KeyObject;
  notBefore: Date;
  notAfter: Date;
  extensions: Buffer[];
}

/** The certificate, PEM. */
export function signCertificate(f: CertificateFields): string {
  if (!(f.notAfter.getTime() > f.notBefore.getTime()))
    throw new Error(`a certificate valid from ${f.notBefore.toISOString()} must end after it, not at ${f.notAfter.toISOString()}`);
  const { algorithm, digest } = signatureAlgorithm(f.signer);
  const tbs = derSequence(
    derExplicit(0, derInteger(2)), // v3
    derInteger(serialNumber()),
    algorithm,
    f.issuer,
    derSequence(derTime(f.notBefore), derTime(f.notAfter)),
    f.subject,
    f.publicKey.export({ type: 'spki', format: 'der' }),
    derExplicit(3, derSequence(...f.extensions)),
  );
  // Node signs ECDSA as the DER Ecdsa-Sig-Value that X.509 carries, RSA as PKCS #1 v1.5.
  return pem('CERTIFICATE', derSequence(tbs, algorithm, derBitString(sign(digest, tbs, f.signer))));
}

/**
 * A self-signed certificate of a fresh EC P-256 key, with the extensions `extensions` gives for that key; the
 * certificate and its private key (PKCS #8), both PEM.
 */
export function selfSigned(
  commonName: string,
  validity: { notBefore: Date; notAfter: Date },
  extensions: (publicKey: KeyObject) => Buffer[],
): { cert: string; key: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const name = commonNameDn(commonName);
  const cert = signCertificate({ subject: name, issuer: name, publicKey, signer: privateKey, ...validity, extensions: extensions(publicKey) });
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** The AlgorithmIdentifier a key signs with, and its digest: EC P-256 or P-384, or RSA. */
function signatureAlgorithm(key: KeyObject): { algorithm: Buffer; digest: string } {
  const curve = key.asymmetricKeyDetails?.namedCurve;
  // ECDSA's AlgorithmIdentifier has no parameters, not even NULL; RSA's has NULL.
  if (key.asymmetricKeyType === 'ec' && curve === 'prime256v1') return { algorithm: derSequence(derOid(OID.ecdsaWithSha256)), digest: 'sha256' };
  if (key.asymmetricKeyType === 'ec' && curve === 'secp384r1') return { algorithm: derSequence(derOid(OID.ecdsaWithSha384)), digest: 'sha384' };
  if (key.asymmetricKeyType === 'rsa') return { algorithm: derSequence(derOid(OID.sha256WithRsa), Buffer.from([0x05, 0x00])), digest: 'sha256' };
  throw new Error(
    `a ${key.asymmetricKeyType ?? 'unknown'}${curve ? ` ${curve}` : ''} key cannot sign berth's certificates: give an EC (P-256, P-384) or RSA key`,
  );
}

/** 16 random bytes, positive (high bit clear) and never shortened by a leading zero (RFC 5280 4.1.2.2). */
function serialNumber(): Buffer {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] & 0x7f) | 0x40;
  return bytes;
}

/** A distinguished name of one common name. */
export function commonNameDn(commonName: string): Buffer {
  return derSequence(derSet(derSequence(derOid(OID.commonName), derUtf8String(commonName))));
}

export function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  // critical is DEFAULT FALSE, and DER leaves a default value out.
  return derSequence(derOid(oid), ...(critical ? [derBoolean(true)] : []), derOctetString(value));
}

/** basicConstraints: a CA (with a path length: 0, no CA below it) or not. */
export function basicConstraints(ca: boolean, pathLength?: number): Buffer {
  const fields = ca ? [derBoolean(true), ...(pathLength === undefined ? [] : [derInteger(pathLength)])] : [];
  return extension(OID.basicConstraints, true, derSequence(...fields));
}

/** keyUsage from its bits (RFC 5280 4.2.1.3: digitalSignature 0, keyCertSign 5, cRLSign 6). */
export function keyUsage(...bits: number[]): Buffer {
  const byte = bits.reduce((b, bit) => b | (0x80 >> bit), 0);
  const unused = byte === 0 ? 7 : Math.min(7, 7 - Math.max(...bits));
  return extension(OID.keyUsage, true, derBitString(Buffer.from([byte]), unused));
}

export function serverAuth(): Buffer {
  return extension(OID.extKeyUsage, false, derSequence(derOid(OID.serverAuth)));
}

export function subjectKeyIdentifier(publicKey: KeyObject): Buffer {
  return extension(OID.subjectKeyIdentifier, false, derOctetString(keyIdentifier(publicKey)));
}

export function authorityKeyIdentifier(issuerKey: KeyObject): Buffer {
  return extension(OID.authorityKeyIdentifier, false, derSequence(derImplicitPrimitive(0, keyIdentifier(issuerKey))));
}

/** subjectAltName of DNS names and IP addresses; undefined when there are none. */
export function subjectAltNames(o: { ipAddresses?: string[]; dnsNames?: string[] }): Buffer | undefined {
  const names = [
    ...(o.dnsNames ?? []).map((dns) => derImplicitPrimitive(2, dnsNameBytes(dns))),
    ...(o.ipAddresses ?? []).map((ip) => derImplicitPrimitive(7, ipAddressBytes(ip))),
  ];
  return names.length ? extension(OID.subjectAltName, false, derSequence(...names)) : undefined;
}

/** A dNSName is an IA5String: ASCII, and a host name has no spaces or controls. */
function dnsNameBytes(dns: string): Buffer {
  if (!/^[\x21-\x7e]+$/.test(dns)) throw new Error(`not a DNS name a certificate can hold: ${JSON.stringify(dns)}`);
  return Buffer.from(dns, 'ascii');
}

/** RFC 5280 4.2.1.2's method 1: SHA-1 of the subjectPublicKey bits (the SPKI's BIT STRING, past its unused-bits byte). */
export function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = readDer(publicKey.export({ type: 'spki', format: 'der' }));
  const bits = derChildren(spki)[1];
  return createHash('sha1').update(bits.content.subarray(1)).digest();
}

/** The subject name of a certificate (DER), in its own bytes: the issuer of what it signs. */
export function subjectOf(certificateDer: Buffer): Buffer {
  const [tbs] = derChildren(readDer(certificateDer));
  const fields = derChildren(tbs);
  // version [0] is there in v3 (and absent in v1): serial, signature, issuer, validity, subject follow it
  const at = fields[0].tag === 0xa0 ? 1 : 0;
  return fields[at + 4].whole;
}

/** A constructed context-specific element: `[n] IMPLICIT` of a SEQUENCE (OF). */
export function derImplicitConstructed(n: number, content: Buffer): Buffer {
  return derElement(0xa0 | n, content);
}

export function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
