/**
 * The few ASN.1 DER encodings an X.509 certificate needs (X.690): Node can sign but not build a
 * certificate. Each function returns one whole element (tag, length, content); they nest by passing
 * elements as content. Only the canonical form is produced, since Go's crypto/x509 (containerd) refuses
 * anything else: minimal lengths and integers, sorted SET OF, time without fractions.
 */

const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utf8String: 0x0c,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

export function derElement(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), derLength(content.length), content]);
}

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes = unsignedBytes(n);
  return Buffer.concat([Buffer.from([0x80 | bytes.length]), bytes]);
}

export function derSequence(...elements: Buffer[]): Buffer {
  return derElement(TAG.sequence, Buffer.concat(elements));
}

/** A SET OF: DER orders its elements by their encodings. */
export function derSet(...elements: Buffer[]): Buffer {
  return derElement(TAG.set, Buffer.concat([...elements].sort(Buffer.compare)));
}

export function derBoolean(value: boolean): Buffer {
  return derElement(TAG.boolean, Buffer.from([value ? 0xff : 0x00]));
}

/** A non-negative INTEGER from a small number or big-endian bytes, in the fewest bytes that keep it positive. */
export function derInteger(value: number | Buffer): Buffer {
  let bytes = typeof value === 'number' ? unsignedBytes(value) : value;
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && bytes[start + 1] < 0x80) start++;
  bytes = bytes.subarray(start);
  if (bytes.length === 0) bytes = Buffer.from([0]);
  return derElement(TAG.integer, bytes[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function unsignedBytes(n: number): Buffer {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`derInteger takes a non-negative safe integer, not ${n}`);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return Buffer.from(bytes.length ? bytes : [0]);
}

export function derOid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  if (arcs.length < 2 || arcs.some((a) => !Number.isSafeInteger(a) || a < 0) || arcs[0] > 2 || (arcs[0] < 2 && arcs[1] > 39))
    throw new RangeError(`not an object identifier: ${dotted}`);
  const body = [arcs[0] * 40 + arcs[1], ...arcs.slice(2)].flatMap(base128);
  return derElement(TAG.oid, Buffer.from(body));
}

function base128(n: number): number[] {
  const out = [n & 0x7f];
  for (let rest = Math.floor(n / 128); rest > 0; rest = Math.floor(rest / 128)) out.unshift(0x80 | (rest & 0x7f));
  return out;
}

export function derUtf8String(text: string): Buffer {
  return derElement(TAG.utf8String, Buffer.from(text, 'utf8'));
}

export function derOctetString(bytes: Buffer): Buffer {
  return derElement(TAG.octetString, bytes);
}

/** A BIT STRING of whole bytes, or of `unusedBits` fewer bits (a named bit list, its trailing zeros dropped). */
export function derBitString(bytes: Buffer, unusedBits = 0): Buffer {
  return derElement(TAG.bitString, Buffer.concat([Buffer.from([unusedBits]), bytes]));
}

/**
 * A certificate's time as RFC 5280 4.1.2.5 wants it: UTCTime (YYMMDDHHMMSSZ) for 1950 through 2049,
 * GeneralizedTime (YYYYMMDDHHMMSSZ) otherwise, in UTC and whole seconds.
 */
export function derTime(date: Date): Buffer {
  const year = date.getUTCFullYear();
  if (!Number.isFinite(date.getTime()) || year < 0 || year > 9999) throw new RangeError(`not a time a certificate can hold: ${String(date)}`);
  const two = (n: number): string => String(n).padStart(2, '0');
  const rest = `${two(date.getUTCMonth() + 1)}${two(date.getUTCDate())}${two(date.getUTCHours())}${two(date.getUTCMinutes())}${two(date.getUTCSeconds())}Z`;
  if (year >= 1950 && year <= 2049) return derElement(TAG.utcTime, Buffer.from(`${two(year % 100)}${rest}`, 'ascii'));
  return derElement(TAG.generalizedTime, Buffer.from(`${String(year).padStart(4, '0')}${rest}`, 'ascii'));
}

/** `[n] EXPLICIT`: the element wrapped in a constructed context-specific tag. */
export function derExplicit(n: number, element: Buffer): Buffer {
  return derElement(0xa0 | n, element);
}

/** `[n] IMPLICIT` of a primitive type: its content under a context-specific tag. */
export function derImplicitPrimitive(n: number, content: Buffer): Buffer {
  return derElement(0x80 | n, content);
}
