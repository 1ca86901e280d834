/**
 * One keep-alive connection pool per cluster and TLS identity for every call client-node makes.
 *
 * client-node makes a new https.Agent for every request (KubeConfig.createAgent), so each call of a run
 * (creates, access reviews, watch, log follows and reads, deletes) pays its own TCP and TLS handshake,
 * and the shim agent pays them again for every call. All of them go through createAgent, so berth hands
 * out one shared agent instead, with keepAlive: a connection a call has finished with serves the next.
 *
 * The agents are shared by process, not by KubeConfig: the shim agent reads a fresh kubeconfig per call,
 * and equal TLS settings (server, CA, client certificate and key, verification) share connections.
 * Credentials sent as headers (tokens) are still set per request. Proxied clusters keep client-node's
 * own agents. An idle connection is closed after FREE_SOCKET_MS, well below any API server's idle timeout
 * (berth's dev cluster closes them after 5 s), so a reused one is rarely one the server is closing; when it
 * is, the call fails with ECONNRESET before the server saw it, and every call of ClusterClient is retried on
 * that (retry.ts). Free connections do not keep a process alive.
 */
import { createHash } from 'node:crypto';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

const FREE_SOCKET_MS = 2000;
const shared = new Map<string, https.Agent>();
const patched = new WeakSet<KubeConfig>();

type AgentFactory = (cluster: { server?: string; proxyUrl?: string } | null, options: https.AgentOptions) => unknown;

/** Makes every request of `kc` use the process's shared keep-alive agents. Idempotent. */
export function shareConnections(kc: KubeConfig): KubeConfig {
  if (patched.has(kc)) return kc;
  const target = kc as unknown as { createAgent: AgentFactory };
  const own = target.createAgent.bind(kc) as AgentFactory;
  target.createAgent = (cluster, options) => {
    if (!cluster?.server?.startsWith('https:') || cluster.proxyUrl) return own(cluster, options);
    const key = identityOf(cluster.server, options);
    let agent = shared.get(key);
    if (!agent) {
      agent = new https.Agent({ ...options, keepAlive: true, timeout: FREE_SOCKET_MS });
      shared.set(key, agent);
    }
    return agent;
  };
  patched.add(kc);
  return kc;
}

/**
 * Whether `agent` is one of the shared pools. WebSocket upgrades (attach, exec, port-forward) keep a
 * connection of their own: an upgrade is not repeated when it fails, so it must not meet a kept-alive
 * connection the server is just closing.
 */
export function isSharedAgent(agent: unknown): boolean {
  return [...shared.values()].includes(agent as https.Agent);
}

/** Server and TLS settings (hashed: they hold private keys): equal ones may share connections. */
function identityOf(server: string, options: https.AgentOptions): string {
  const text = JSON.stringify([server, options], (_k, v: unknown) =>
    Buffer.isBuffer(v) ? v.toString('base64') : v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v,
  );
  return createHash('sha256').update(text).digest('hex');
}
