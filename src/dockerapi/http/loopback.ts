/**
 * Whether a listener's host is loopback, decided on the addresses it resolves to, not on its text:
 * `127.0.0.1.nip.io` looks like loopback and is not; `localhost` is only if every address it resolves to is.
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';

export type Resolve = (host: string) => Promise<string[]>;

const resolveAll: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** An IP address (v4, v6, v4-mapped v6) in the loopback range. */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^\[|\]$/g, '');
  const family = net.isIP(a);
  if (family === 4) return a.startsWith('127.');
  if (family !== 6) return false;
  if (a === '::1' || a === '0:0:0:0:0:0:0:1') return true;
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a) ?? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  return mapped ? mapped[1].startsWith('127.') : false;
}

/**
 * The host's addresses and whether all of them are loopback. A name that does not resolve is not loopback
 * (listening on it fails anyway); an IP literal is judged as it is.
 */
export async function resolveLoopback(host: string, resolve: Resolve = resolveAll): Promise<{ loopback: boolean; addresses: string[] }> {
  const literal = host.replace(/^\[|\]$/g, '');
  if (net.isIP(literal)) return { loopback: isLoopbackAddress(literal), addresses: [literal] };
  let addresses: string[];
  try {
    addresses = await resolve(literal);
  } catch {
    return { loopback: false, addresses: [] };
  }
  return { loopback: addresses.length > 0 && addresses.every(isLoopbackAddress), addresses };
}
