// The self-signed certificate of berth's image server, read back by Node's X.509 parser (OpenSSL), and the DER
// encodings under it in the canonical forms Go's crypto/x509 insists on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { derBitString, derInteger, derOid, derSequence, derSet, derTime } from '../../../src/registry/der.js';
import { ipAddressBytes } from '../../../src/registry/ip-bytes.js';
import { selfSignedCertificate } from '../../../src/registry/self-signed.js';

const hex = (b: Buffer): string => b.toString('hex');

test('the certificate parses, names its CN and SANs, has the validity asked for, and is signed by its own key', () => {
  const notBefore = new Date('2026-03-01T10:00:00Z');
  const notAfter = new Date('2026-03-08T10:00:00Z');
  const { cert, key } = selfSignedCertificate({
    commonName: 'berth-image-server',
    ipAddresses: ['10.244.1.7', 'fd00:10:244::7'],
    dnsNames: ['registry.local'],
    notBefore,
    notAfter,
  });
  assert.match(cert, /^-----BEGIN CERTIFICATE-----\n([A-Za-z0-9+/=]{64}\n)*[A-Za-z0-9+/=]{1,64}\n-----END CERTIFICATE-----\n$/);
  const x509 = new X509Certificate(cert);
  assert.equal(x509.subject, 'CN=berth-image-server');
  assert.equal(x509.issuer, 'CN=berth-image-server');
  assert.equal(x509.subjectAltName, 'DNS:registry.local, IP Address:10.244.1.7, IP Address:FD00:10:244:0:0:0:0:7');
  assert.equal(x509.checkIP('10.244.1.7'), '10.244.1.7');
  assert.equal(x509.checkHost('registry.local'), 'registry.local');
  assert.equal(new Date(x509.validFrom).getTime(), notBefore.getTime());
  assert.equal(new Date(x509.validTo).getTime(), notAfter.getTime());
  assert.equal(x509.ca, true, 'its own CA, so a client may check its signature against itself');
  assert.equal(x509.verify(x509.publicKey), true);
  assert.equal(x509.checkPrivateKey(createPrivateKey(key)), true);
  assert.equal(x509.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  assert.ok(x509.keyUsage.includes('1.3.6.1.5.5.7.3.1'), 'serverAuth');
  const serial = Buffer.from(x509.serialNumber, 'hex');
  assert.equal(serial.length, 16);
  assert.ok(serial[0] >= 0x40 && serial[0] < 0x80, `positive and 16 bytes: ${x509.serialNumber}`);
});

test('another certificate has another key and serial; a validity past 2049 and a bare one parse', () => {
  const a = new X509Certificate(selfSignedCertificate({ commonName: 'a', notAfter: new Date('2060-06-01T00:00:00Z') }).cert);
  const b = new X509Certificate(selfSignedCertificate({ commonName: 'a', notAfter: new Date('2060-06-01T00:00:00Z') }).cert);
  assert.notEqual(a.serialNumber, b.serialNumber);
  assert.notEqual(a.fingerprint256, b.fingerprint256);
  assert.equal(new Date(a.validTo).toISOString(), '2060-06-01T00:00:00.000Z');
  assert.equal(a.subjectAltName, undefined);
  assert.ok(Date.now() - new Date(a.validFrom).getTime() < 60_000, 'valid from now by default');
  assert.equal(a.verify(a.publicKey), true);
  assert.equal(a.verify(b.publicKey), false);
});

test('a validity that ends before it starts, a DNS name with a space, and a bad IP are refused', () => {
  const at = new Date('2026-01-01T00:00:00Z');
  assert.throws(() => selfSignedCertificate({ commonName: 'x', notBefore: at, notAfter: at }), /must end after it/);
  assert.throws(() => selfSignedCertificate({ commonName: 'x', dnsNames: ['a b'], notAfter: new Date(Date.now() + 1000) }), /not a DNS name/);
  assert.throws(() => selfSignedCertificate({ commonName: 'x', ipAddresses: ['10.0.0'], notAfter: new Date(Date.now() + 1000) }), /not an IP address: 10.0.0/);
});

test('DER: integers in their fewest bytes and positive, lengths in long form past 127', () => {
  assert.equal(hex(derInteger(0)), '020100');
  assert.equal(hex(derInteger(2)), '020102');
  assert.equal(hex(derInteger(127)), '02017f');
  assert.equal(hex(derInteger(128)), '02020080');
  assert.equal(hex(derInteger(256)), '02020100');
  assert.equal(hex(derInteger(Buffer.from([0, 0, 0x05]))), '020105');
  assert.equal(hex(derInteger(Buffer.from([0, 0x80]))), '02020080');
  assert.equal(hex(derInteger(Buffer.from([0xff]))), '020200ff');
  assert.throws(() => derInteger(-1), /non-negative/);
  assert.equal(hex(derSequence(Buffer.alloc(127)).subarray(0, 2)), '307f');
  assert.equal(hex(derSequence(Buffer.alloc(128)).subarray(0, 3)), '308180');
  assert.equal(hex(derSequence(Buffer.alloc(300)).subarray(0, 4)), '3082012c');
});

test('DER: object identifiers, named bit strings, sorted sets', () => {
  assert.equal(hex(derOid('1.2.840.10045.4.3.2')), '06082a8648ce3d040302');
  assert.equal(hex(derOid('2.5.29.17')), '0603551d11');
  assert.equal(hex(derOid('1.3.6.1.5.5.7.3.1')), '06082b06010505070301');
  assert.throws(() => derOid('1'), /not an object identifier/);
  assert.throws(() => derOid('1.40'), /not an object identifier/);
  assert.equal(hex(derBitString(Buffer.from([0x84]), 2)), '03020284');
  assert.equal(hex(derSet(Buffer.from('0402bbbb', 'hex'), Buffer.from('0401aa', 'hex'))), '31070401aa0402bbbb');
});

test('DER: UTCTime from 1950 through 2049, GeneralizedTime outside, whole seconds in UTC', () => {
  const time = (iso: string): string => {
    const el = derTime(new Date(iso));
    return `${hex(el.subarray(0, 1))} ${el.subarray(2).toString('ascii')}`;
  };
  assert.equal(time('2026-03-01T10:20:30.999Z'), '17 260301102030Z');
  assert.equal(time('2049-12-31T23:59:59Z'), '17 491231235959Z');
  assert.equal(time('2050-01-01T00:00:00Z'), '18 20500101000000Z');
  assert.equal(time('1950-01-01T00:00:00Z'), '17 500101000000Z');
  assert.equal(time('1949-12-31T23:59:59Z'), '18 19491231235959Z');
  assert.throws(() => derTime(new Date(NaN)), /not a time/);
});

test('IP addresses as a certificate holds them: 4 bytes for IPv4, 16 for IPv6 in any shorthand', () => {
  assert.equal(hex(ipAddressBytes('10.244.1.7')), '0af40107');
  assert.equal(hex(ipAddressBytes('::1')), '00000000000000000000000000000001');
  assert.equal(hex(ipAddressBytes('::')), '00000000000000000000000000000000');
  assert.equal(hex(ipAddressBytes('fd00:10:244::7')), 'fd000010024400000000000000000007');
  assert.equal(hex(ipAddressBytes('2001:db8::')), '20010db8000000000000000000000000');
  assert.equal(hex(ipAddressBytes('1:2:3:4:5:6:7:8')), '00010002000300040005000600070008');
  assert.equal(hex(ipAddressBytes('::ffff:10.1.2.3')), '00000000000000000000ffff0a010203');
  assert.equal(hex(ipAddressBytes('fe80::1%eth0')), 'fe800000000000000000000000000001');
  assert.throws(() => ipAddressBytes('fe80::1::2'), /not an IP address/);
  assert.throws(() => ipAddressBytes('pod'), /not an IP address/);
});
