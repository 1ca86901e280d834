/**
 * A container's log as raw bytes. client-node's readNamespacedPodLog decodes the body as text (a
 * binary byte becomes U+FFFD) and cannot pass KEP-3288's `stream` parameter, so berth asks itself.
 */
import https from 'node:https';
import http from 'node:http';
import type { IncomingMessage } from 'node:http';
import { buffer, text } from 'node:stream/consumers';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeError, toKubeError } from './errors.js';

export interface PodLogQuery {
  follow?: boolean;
  /** `Stdout` or `Stderr` (KEP-3288 split streams); absent or `All`: both, merged as written. */
  stream?: 'Stdout' | 'Stderr' | 'All';
  tailLines?: number;
  timestamps?: boolean;
  sinceSeconds?: number;
  sinceTime?: string;
  /** At most this many bytes of the selected log. */
  limitBytes?: number;
  /**
   * Abandons the request, also while it waits for the response's head: a kubelet sends a followed log's head with
   * its first byte, so the open of a stream nothing is written to does not resolve until the container ends.
   */
  signal?: AbortSignal;
}

/** Opens the log; the response is the raw stream. Refusals (404, 400, 403...) are KubeErrors. */
export async function openPodLog(kc: KubeConfig, namespace: string, pod: string, container: string, q: PodLogQuery = {}): Promise<IncomingMessage> {
  const params = new URLSearchParams({ container });
  if (q.follow) params.set('follow', 'true');
  if (q.stream && q.stream !== 'All') params.set('stream', q.stream);
  if (q.tailLines !== undefined) params.set('tailLines', String(q.tailLines));
  if (q.timestamps) params.set('timestamps', 'true');
  if (q.sinceSeconds !== undefined) params.set('sinceSeconds', String(Math.max(1, q.sinceSeconds)));
  if (q.sinceTime) params.set('sinceTime', q.sinceTime);
  if (q.limitBytes !== undefined) params.set('limitBytes', String(q.limitBytes));
  const action = { verb: 'get', resource: 'pods/log', namespace, name: pod, server: kc.getCurrentCluster()?.server };
  let res: IncomingMessage;
  try {
    res = await rawGet(kc, `/api/v1/namespaces/${namespace}/pods/${pod}/log?${params.toString()}`, q.signal);
  } catch (err) {
    throw toKubeError(err, action);
  }
  if ((res.statusCode ?? 500) >= 300) {
    const body = await text(res).catch(() => '');
    let parsed: unknown = body;
    try {
      parsed = JSON.parse(body);
    } catch {
      /* plain text */
    }
    throw toKubeError({ code: res.statusCode, body: parsed, headers: res.headers }, action);
  }
  return res;
}

/** The whole log (not followed) as bytes. */
export async function readPodLogBytes(kc: KubeConfig, namespace: string, pod: string, container: string, q: Omit<PodLogQuery, 'follow'> = {}): Promise<Buffer> {
  const res = await openPodLog(kc, namespace, pod, container, q);
  try {
    return await buffer(res);
  } catch (err) {
    throw toKubeError(err, { verb: 'get', resource: 'pods/log', namespace, name: pod, server: kc.getCurrentCluster()?.server });
  }
}

async function rawGet(kc: KubeConfig, path: string, signal?: AbortSignal): Promise<IncomingMessage> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new KubeError('the kubeconfig names no cluster server');
  const url = new URL(path, server);
  const opts: https.RequestOptions = { method: 'GET', headers: {}, ...(signal ? { signal } : {}) };
  await kc.applyToHTTPSOptions(opts);
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, opts, resolve);
    req.on('error', reject);
    req.end();
  });
}
