/**
 * An IP address as the bytes a certificate's iPAddress name holds (RFC 5280 4.2.1.6: 4 for IPv4, 16 for
 * IPv6, network order). Node parses addresses only into strings, so IPv6's shorthand (`::`, an IPv4 tail)
 * is expanded here.
 */
import { isIPv4, isIPv6 } from 'node:net';

export function ipAddressBytes(address: string): Buffer {
  // A zone (fe80::1%eth0) names an interface of this machine, not part of the address.
  const plain = address.replace(/%.*$/, '');
  if (isIPv4(plain)) return Buffer.from(plain.split('.').map(Number));
  if (!isIPv6(plain)) throw new Error(`not an IP address: ${address}`);
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(plain);
  const hex = v4Tail ? plain.slice(0, v4Tail.index) + v4Groups(v4Tail[1]) : plain;
  const [head, tail] = hex.includes('::') ? hex.split('::') : [hex, undefined];
  const groups = (part: string | undefined): string[] => (part ? part.split(':') : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  const all = tail === undefined ? groups(head) : [...groups(head), ...Array<string>(missing).fill('0'), ...groups(tail)];
  const bytes = Buffer.alloc(16);
  all.forEach((g, i) => bytes.writeUInt16BE(parseInt(g, 16), i * 2));
  return bytes;
}

function v4Groups(v4: string): string {
  const [a, b, c, d] = v4.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}
