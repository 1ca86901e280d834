// Reads from the bench's dev cluster as its admin: the front proxy's request tally, and kube-apiserver's metrics.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import type { TallySnapshot } from '../src/devcluster/faults/request-tally.js';
import type { BenchCluster } from './bench-cluster.js';

function adminGet(cluster: BenchCluster, path: string): Promise<string> {
  const state = JSON.parse(readFileSync(join(cluster.stateDir, 'state.json'), 'utf8')) as { server: string };
  const token = readFileSync(join(cluster.stateDir, 'pki', 'admin.token'), 'utf8').trim();
  const ca = readFileSync(join(cluster.stateDir, 'ca.crt'));
  return new Promise((resolve, reject) => {
    const req = request(`${state.server}${path}`, { ca, agent: false, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (d: string) => (body += d))
        .on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET ${path}: ${res.statusCode} ${body}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

/** the requests counted at the cluster's front proxy so far (src/devcluster/faults/request-tally.ts) */
export async function tallyOf(cluster: BenchCluster): Promise<TallySnapshot> {
  return JSON.parse(await adminGet(cluster, '/berth-dev/v1/requests')) as TallySnapshot;
}

/** the sum of a counter of kube-apiserver's /metrics over the series whose labels include every one given */
export async function metricSum(cluster: BenchCluster, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await adminGet(cluster, '/metrics');
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return sum;
}
