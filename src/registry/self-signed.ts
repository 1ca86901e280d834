/**
 * A self-signed X.509 v3 certificate and its EC P-256 key, for a server whose clients skip verification
 * but still speak TLS (a node's containerd pulling from berth's image server in a pod). It follows RFC 5280
 * to the letter because Go's crypto/x509 refuses what OpenSSL forgives. It is its own CA (basicConstraints
 * cA, keyUsage keyCertSign), which is what lets a client check the signature against the certificate itself.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import {
  derBitString,
  derBoolean,
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
import { ipAddressBytes } from './ip-bytes.js';

export interface CertificateRequest {
  commonName: string;
  ipAddresses?: string[];
  dnsNames?: string[];
  /** Default: now. */
  notBefore?: Date;
  notAfter: Date;
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

/** A certificate and its private key (PKCS #8), both PEM. */
export function selfSignedCertificate(o: CertificateRequest): { cert: string; key: string } {
  const notBefore = o.notBefore ?? new Date();
  if (!(o.notAfter.getTime() > notBefore.getTime()))
    throw new Error(`a certificate valid from ${notBefore.toISOString()} must end after it, not at ${o.notAfter.toISOString()}`);
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const tbs = tbsCertificate(o, notBefore, publicKey);
  const algorithm = derSequence(derOid(OID.ecdsaWithSha256));
  // Node signs ECDSA as the DER Ecdsa-Sig-Value that X.509 carries.
  const der = derSequence(tbs, algorithm, derBitString(sign('sha256', tbs, privateKey)));
  return { cert: pem('CERTIFICATE', der), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

function tbsCertificate(o: CertificateRequest, notBefore: Date, publicKey: KeyObject): Buffer {
  const name = derSequence(derSet(derSequence(derOid(OID.commonName), derUtf8String(o.commonName))));
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return derSequence(
    derExplicit(0, derInteger(2)), // v3
    derInteger(serialNumber()),
    derSequence(derOid(OID.ecdsaWithSha256)), // ECDSA's AlgorithmIdentifier has no parameters, not even NULL
    name,
    derSequence(derTime(notBefore), derTime(o.notAfter)),
    name,
    spki,
    derExplicit(3, derSequence(...extensions(o, spki))),
  );
}

/** 16 random bytes, positive (high bit clear) and never shortened by a leading zero (RFC 5280 4.1.2.2). */
function serialNumber(): Buffer {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] & 0x7f) | 0x40;
  return bytes;
}

function extensions(o: CertificateRequest, spki: Buffer): Buffer[] {
  const names = [
    ...(o.dnsNames ?? []).map((dns) => derImplicitPrimitive(2, dnsNameBytes(dns))),
    ...(o.ipAddresses ?? []).map((ip) => derImplicitPrimitive(7, ipAddressBytes(ip))),
  ];
  return [
    extension(OID.basicConstraints, true, derSequence(derBoolean(true))),
    // digitalSignature (bit 0) and keyCertSign (bit 5): 0b10000100, its last two bits unused.
    extension(OID.keyUsage, true, derBitString(Buffer.from([0x84]), 2)),
    extension(OID.extKeyUsage, false, derSequence(derOid(OID.serverAuth))),
    extension(OID.subjectKeyIdentifier, false, derOctetString(keyIdentifier(spki))),
    ...(names.length ? [extension(OID.subjectAltName, false, derSequence(...names))] : []),
  ];
}

/** A dNSName is an IA5String: ASCII, and a host name has no spaces or controls. */
function dnsNameBytes(dns: string): Buffer {
  if (!/^[\x21-\x7e]+$/.test(dns)) throw new Error(`not a DNS name a certificate can hold: ${JSON.stringify(dns)}`);
  return Buffer.from(dns, 'ascii');
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  // critical is DEFAULT FALSE, and DER leaves a default value out.
  return derSequence(derOid(oid), ...(critical ? [derBoolean(true)] : []), derOctetString(value));
}

/** RFC 5280 4.2.1.2's method 1: SHA-1 of the subjectPublicKey bits (the SPKI's BIT STRING content). */
function keyIdentifier(spki: Buffer): Buffer {
  // A P-256 SPKI ends in its BIT STRING: 65 bytes of uncompressed point after the unused-bits byte.
  return createHash('sha1')
    .update(spki.subarray(spki.length - 65))
    .digest();
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
