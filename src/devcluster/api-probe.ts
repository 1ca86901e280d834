// Questions the cluster manager asks kube-apiserver directly, as admin: is it ready, is the node Ready, does an
// object exist. Plain HTTPS: the dev cluster uses none of berth's own Kubernetes client code.
import { request } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Layout, NET } from './layout.js';

export const apiServerUrl = `https://${NET.nodeIp}:${NET.apiPort}`;

/** `body` is the parsed JSON, or the text where the answer is not JSON (/readyz); callers read what they asked for. */
export function apiGet<T = unknown>(layout: Layout, path: string, timeoutMs = 5000): Promise<{ code: number; body: T }> {
  const ca = readFileSync(join(layout.pki, 'ca.crt'));
  const token = readFileSync(join(layout.pki, 'admin.token'), 'utf8').trim();
  return new Promise((resolve, reject) => {
    const req = request(
      `${apiServerUrl}${path}`,
      { ca, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' }, timeout: timeoutMs },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => (text += d))
          .on('end', () => {
            let body: unknown = text;
            try {
              body = JSON.parse(text);
            } catch {
              // /readyz answers plain text
            }
            resolve({ code: res.statusCode ?? 0, body: body as T });
          });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${apiServerUrl}${path} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** A Node's Ready condition as `kubectl get nodes` shows it: Ready, NotReady, or Unknown when there is no such Node. */
export async function nodeCondition(layout: Layout, name: string): Promise<'Ready' | 'NotReady' | 'Unknown'> {
  const r = await apiGet<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(layout, `/api/v1/nodes/${name}`);
  if (r.code !== 200) return 'Unknown';
  const ready = (r.body.status?.conditions ?? []).find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? 'Ready' : 'NotReady';
}

export async function nodeReady(layout: Layout, name: string = NET.nodeName): Promise<boolean> {
  return (await nodeCondition(layout, name)) === 'Ready';
}

export async function exists(layout: Layout, path: string): Promise<boolean> {
  return (await apiGet(layout, path)).code === 200;
}
