/**
 * Opens a WebSocket to the API server as client-go does for exec, attach and port-forward: the
 * kubeconfig's TLS and credentials applied to the socket, the channel protocols offered, and the
 * server's Status of a refused upgrade kept so the error can name the cause. Messages that arrive
 * before the caller takes over are queued in the returned `early` list (channel byte included).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import WebSocket from 'ws';
import { text } from 'node:stream/consumers';
import { KubeError, toKubeError, type KubeAction } from './errors.js';
import { isSharedAgent } from './shared-connections.js';

export interface ChannelSocket {
  ws: WebSocket;
  /** Messages received between the upgrade and the caller's first listener. */
  early: Buffer[];
  /** Stops queueing: the caller reads `ws` itself from now on. */
  takeOver(): void;
}

export async function openChannelSocket(kc: KubeConfig, path: string, protocols: string[], action: KubeAction): Promise<ChannelSocket> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new KubeError('the kubeconfig names no cluster server');
  const url = new URL(path, server);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  // Over TLS, an all-zero masking key: ws then sends (and the server's ws reads) payloads as they are,
  // instead of XOR-ing every byte of an archive in JavaScript on both ends. RFC 6455 masks client frames
  // against cache poisoning by intermediaries that misread plain-text WebSocket traffic; inside TLS no
  // intermediary reads the frames. A plain `ws:` server (kubectl proxy) keeps random keys.
  const opts: WebSocket.ClientOptions = url.protocol === 'wss:' ? { generateMask: (mask: Buffer) => void mask.fill(0) } : {};
  await kc.applyToHTTPSOptions(opts as never);
  // its own connection (the TLS settings are on opts too): see isSharedAgent
  if (isSharedAgent(opts.agent)) delete opts.agent;
  const ws = new WebSocket(url, protocols, opts);
  const early: Buffer[] = [];
  const queue = (data: Buffer): void => void early.push(data);
  ws.on('message', queue);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => {
      text(res)
        .catch(() => '')
        .then((body) => {
          ws.terminate();
          reject(toKubeError({ code: res.statusCode, body, headers: res.headers }, { ...action, server }));
        });
    });
    ws.once('error', (err) => reject(toKubeError(err, { ...action, server })));
  });
  return { ws, early, takeOver: () => void ws.off('message', queue) };
}
