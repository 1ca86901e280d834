/**
 * berth's image CA: the certificate authority a cluster's nodes trust for the registries berth serves from pods
 * (`--image-server` with `--image-server-ca DIR`), instead of pulling from unknown hosts without verifying them.
 * berth issues each image pod a certificate for its address once the pod has one. The CA berth makes
 * (`berth image-ca DIR`) may vouch only for IP addresses, within the pod ranges given: its name constraints exclude
 * every DNS name, so its key, if it leaked, could not impersonate a registry the nodes pull from by name.
 */
import { createPrivateKey, generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  authorityKeyIdentifier,
  basicConstraints,
  commonNameDn,
  selfSigned,
  derImplicitConstructed,
  extension,
  keyUsage,
  OID,
  serverAuth,
  signCertificate,
  subjectAltNames,
  subjectKeyIdentifier,
  subjectOf,
} from './certificate.js';
import { derImplicitPrimitive, derSequence } from './der.js';
import { ipAddressBytes } from './ip-bytes.js';

/** A CA's certificate and private key, PEM. */
export interface ImageCa {
  cert: string;
  key: string;
}

/** The files of a CA folder: the names a mounted kubernetes.io/tls Secret gives them. */
export const CA_CERT_FILE = 'tls.crt';
export const CA_KEY_FILE = 'tls.key';

export interface ImageCaRequest {
  /** The ranges (CIDR) the CA may name addresses in: the cluster's pod ranges. None: any address. */
  ipRanges: string[];
  notAfter: Date;
  /** Default: now. */
  notBefore?: Date;
  commonName?: string;
}

export function makeImageCa(o: ImageCaRequest): ImageCa {
  // keyCertSign and cRLSign; no CA below it
  return selfSigned(o.commonName ?? 'berth image CA', { notBefore: o.notBefore ?? new Date(), notAfter: o.notAfter }, (publicKey) => [
    basicConstraints(true, 0),
    keyUsage(5, 6),
    subjectKeyIdentifier(publicKey),
    onlyAddresses(o.ipRanges),
  ]);
}

/**
 * nameConstraints (RFC 5280 4.2.1.10): permitted, the address ranges given; excluded, every DNS name (an empty
 * dNSName matches them all, in Go's crypto/x509 and OpenSSL alike).
 */
function onlyAddresses(ranges: string[]): Buffer {
  const subtree = (generalName: Buffer): Buffer => derSequence(generalName);
  const permitted = ranges.map((r) => subtree(derImplicitPrimitive(7, rangeBytes(r))));
  const excluded = [subtree(derImplicitPrimitive(2, Buffer.alloc(0)))];
  return extension(
    OID.nameConstraints,
    true,
    derSequence(...(permitted.length ? [derImplicitConstructed(0, Buffer.concat(permitted))] : []), derImplicitConstructed(1, Buffer.concat(excluded))),
  );
}

/** A CIDR as a name constraint holds it: the address, then the mask (4 + 4 bytes, or 16 + 16). */
export function rangeBytes(cidr: string): Buffer {
  const [address, bitsText, extra] = cidr.split('/');
  const bits = Number(bitsText);
  const family = isIP(address ?? '');
  const width = family === 4 ? 32 : 128;
  if (!family || extra !== undefined || !/^\d+$/.test(bitsText ?? '') || bits > width)
    throw new Error(`not an address range: ${JSON.stringify(cidr)} (give one as 10.244.0.0/16 or fd00:10:244::/56)`);
  const addr = ipAddressBytes(address);
  const mask = Buffer.alloc(addr.length);
  for (let i = 0; i < bits; i++) mask[i >> 3] |= 0x80 >> (i & 7);
  const network = Buffer.from(addr.map((b, i) => b & mask[i]));
  if (!network.equals(addr)) throw new Error(`${cidr}: the address has bits set past the /${bits} (give the range's first address)`);
  return Buffer.concat([network, mask]);
}

export interface ServerCertificateRequest {
  ipAddresses: string[];
  notAfter: Date;
  /** Default: now. */
  notBefore?: Date;
}

/** A server certificate for the addresses given, signed by the CA, with a key of its own; both PEM. */
export function issueServerCertificate(ca: ImageCa, o: ServerCertificateRequest): { cert: string; key: string } {
  const { x509, key: caKey } = checkedCa(ca);
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const altNames = subjectAltNames({ ipAddresses: o.ipAddresses });
  if (!altNames) throw new Error('a server certificate of the image CA names at least one address');
  // not past the CA's own end: a chain is only as valid as its shortest link
  const caEnd = new Date(x509.validTo);
  const cert = signCertificate({
    subject: commonNameDn('berth-image-server'),
    issuer: subjectOf(x509.raw),
    publicKey,
    signer: caKey,
    notBefore: o.notBefore ?? new Date(),
    notAfter: o.notAfter.getTime() > caEnd.getTime() ? caEnd : o.notAfter,
    // digitalSignature
    extensions: [basicConstraints(false), keyUsage(0), serverAuth(), subjectKeyIdentifier(publicKey), authorityKeyIdentifier(x509.publicKey), altNames],
  });
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

function checkedCa(ca: ImageCa): { x509: X509Certificate; key: KeyObject } {
  const x509 = new X509Certificate(ca.cert);
  if (!x509.ca) throw new Error(`the certificate of ${x509.subject} is not a CA's (basicConstraints cA is not set)`);
  const key = createPrivateKey(ca.key);
  if (!x509.checkPrivateKey(key)) throw new Error(`the key given is not the key of ${x509.subject}`);
  return { x509, key };
}

/** The CA in DIR (tls.crt, tls.key), checked; an error says what is missing and how to make one. */
export function readImageCa(dir: string, flag: string): ImageCa {
  const read = (file: string): string => {
    try {
      return readFileSync(join(dir, file), 'utf8');
    } catch (err) {
      throw new Error(
        `${flag} ${dir}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): the folder holds the CA as ${CA_CERT_FILE} and ${CA_KEY_FILE} (a mounted kubernetes.io/tls Secret; berth image-ca DIR makes one)`,
        { cause: err },
      );
    }
  };
  const ca = { cert: read(CA_CERT_FILE), key: read(CA_KEY_FILE) };
  try {
    checkedCa(ca);
  } catch (err) {
    throw new Error(`${flag} ${dir}: ${(err as Error).message}`, { cause: err });
  }
  return ca;
}

/** Writes the CA to DIR: the key readable by its owner only. */
export function writeImageCa(dir: string, ca: ImageCa): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, CA_KEY_FILE), ca.key, { mode: 0o600 });
  writeFileSync(join(dir, CA_CERT_FILE), ca.cert, { mode: 0o644 });
}

const CLOCK_SKEW_MS = 5 * 60 * 1000;

/**
 * Issues image pods' certificates from the CA, each valid for as long as a pod lives (`lifetimeSeconds`), with a
 * margin for clocks that disagree.
 */
export function certificateIssuer(ca: ImageCa, lifetimeSeconds: number): (ipAddresses: string[]) => { cert: string; key: string } {
  return (ipAddresses) => {
    const now = Date.now();
    return issueServerCertificate(ca, {
      ipAddresses,
      notBefore: new Date(now - CLOCK_SKEW_MS),
      notAfter: new Date(now + lifetimeSeconds * 1000 + CLOCK_SKEW_MS),
    });
  };
}
