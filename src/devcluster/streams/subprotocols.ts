// WebSocket subprotocol names of the Kubernetes streaming endpoints and how the server picks one.
import type { IncomingMessage } from 'node:http';

export const V5_CHANNEL = 'v5.channel.k8s.io';
export const V4_CHANNEL = 'v4.channel.k8s.io';
export const V4_BASE64_CHANNEL = 'v4.base64.channel.k8s.io';
export const V1_CHANNEL = 'channel.k8s.io';
export const V1_BASE64_CHANNEL = 'base64.channel.k8s.io';
/** kubectl >= 1.31 port-forward: SPDY/3.1 frames carried in WebSocket binary messages */
export const SPDY_TUNNEL_PORTFORWARD = 'SPDY/3.1+portforward.k8s.io';

/** What exec/attach serve: the kubelet's set plus v5 (apiserver stream translator). v2/v3 are SPDY-only names. */
export const REMOTE_COMMAND_PROTOCOLS = [V5_CHANNEL, V4_CHANNEL, V4_BASE64_CHANNEL, V1_CHANNEL, V1_BASE64_CHANNEL] as const;
/** What port-forward serves over WebSocket. */
export const PORT_FORWARD_PROTOCOLS = [SPDY_TUNNEL_PORTFORWARD, V4_CHANNEL, V4_BASE64_CHANNEL] as const;

/** The protocols the client offered, in its order. */
export function offeredProtocols(req: IncomingMessage): string[] {
  const raw = req.headers['sec-websocket-protocol'];
  if (raw === undefined) return [];
  const joined = Array.isArray(raw) ? raw.join(',') : raw;
  return joined
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

/**
 * The protocol to answer with: '' when the client offered none (the kubelet then speaks the binary channel
 * protocol without a header), undefined when nothing offered is served. Like apimachinery's wsstream
 * handshake, the client's order decides, not the server's.
 */
export function negotiateProtocol(offered: readonly string[], served: readonly string[]): string | undefined {
  if (offered.length === 0) return '';
  return offered.find((p) => served.includes(p));
}

/** base64 protocols send text frames: an ASCII channel digit followed by base64 data */
export function isBase64Protocol(protocol: string): boolean {
  return protocol === V4_BASE64_CHANNEL || protocol === V1_BASE64_CHANNEL;
}
