// Where pods reach the API server. A real cluster gives pods the `kubernetes` Service's cluster IP; the dev
// cluster has no service proxy, so pods on the podman bridge reach the host at the bridge's gateway address,
// an address of this machine's own podman0 interface. The server listens there too (never on a wildcard
// address, so nothing beyond this machine and its pods sees it).
import { networkInterfaces } from 'node:os';
import { isIP } from 'node:net';

export const isWildcard = (host: string) => host === '0.0.0.0' || host === '::';

/** true when `address` is assigned to an interface of this machine */
export function isLocalAddress(address: string): boolean {
  if (!isIP(address)) return false;
  return Object.values(networkInterfaces()).some((list) => (list ?? []).some((i) => i.address === address));
}

/** waits until `address` is local (podman brings its bridge up with the first container on it); false after `timeoutMs` */
export async function waitForLocalAddress(address: string, timeoutMs: number, stepMs = 250): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (isLocalAddress(address)) return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * Listens on the gateway, on the port clients use when it is free there (else any): the port pods are told.
 * undefined when the gateway is not an address of this machine (a rootless podman's bridge lives in its own namespace).
 */
export async function listenForPods(
  listen: (port: number, host: string) => Promise<number>,
  gateway: string,
  preferredPort: number,
  opts: { waitMs?: number } = {},
): Promise<number | undefined> {
  if (!(await waitForLocalAddress(gateway, opts.waitMs ?? 15_000))) return undefined;
  try {
    return await listen(preferredPort, gateway);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    return listen(0, gateway);
  }
}
