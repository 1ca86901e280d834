// Benchmarks of the dev cluster, printed as ratios against a reference measured in the same run:
//   pod create -> Running and create -> Succeeded, against `podman run` of the same image;
//   list and watch requests per second on loopback.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { startBenchCluster } from './bench-cluster.js';
import { reportGoal } from './goal-rows.js';
import { podPhase } from './pod-phase.js';

const IMAGE = 'localhost/berth/busybox:1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const progress = (what: string) => process.stderr.write(`bench: ${what}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${x.toFixed(0)} ms`;

function podmanRun(args: string[]): number {
  const t = performance.now();
  execFileSync('podman', ['run', ...args], { stdio: 'ignore' });
  return performance.now() - t;
}

async function requestsPerSecond(server: string, token: string, ca: Buffer, path: string, seconds: number, readFirstLineOnly: boolean): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4, ca });
  const deadline = performance.now() + seconds * 1000;
  let count = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      await new Promise<void>((resolve, reject) => {
        const req = request(`${server}${path}`, { agent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`${path}: HTTP ${res.statusCode}`));
          if (readFirstLineOnly) {
            res.once('data', () => {
              req.destroy();
              resolve();
            });
          } else {
            res.resume().on('end', resolve);
          }
        });
        req.on('error', (e) => (readFirstLineOnly ? resolve() : reject(e)));
        req.end();
      });
      count++;
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  agent.destroy();
  return count / seconds;
}

async function main() {
  const cluster = await startBenchCluster();
  try {
    const { stateDir, kc, core, ns } = cluster;

    // warm both paths once
    progress('warming up');
    podmanRun(['--rm', IMAGE, 'true']);
    await podPhase(kc, core, ns, IMAGE, 'warm', ['true'], (p) => p.status?.phase === 'Succeeded');

    const podmanRunning: number[] = [];
    const podmanExited: number[] = [];
    const berthRunning: number[] = [];
    const berthExited: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      progress(`pod start round ${i + 1}/${ROUNDS}`);
      podmanExited.push(podmanRun(['--rm', IMAGE, 'true']));
      const name = `bench-ref-${process.pid}-${i}`;
      podmanRunning.push(podmanRun(['-d', '--name', name, IMAGE, 'sleep', '60']));
      execFileSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' });
      berthExited.push(await podPhase(kc, core, ns, IMAGE, `exit-${i}`, ['true'], (p) => p.status?.phase === 'Succeeded'));
      berthRunning.push(await podPhase(kc, core, ns, IMAGE, `run-${i}`, ['sleep', '60'], (p) => p.status?.phase === 'Running'));
    }
    const server = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8')).server as string;
    const token = kc.getCurrentUser()!.token!;
    const ca = readFileSync(join(stateDir, 'ca.crt'));
    progress('list and watch requests');
    // ConfigMaps, because every namespace has one (kube-root-ca.crt): each watch gets its synthetic ADDED at once
    const listRps = await requestsPerSecond(server, token, ca, `/api/v1/namespaces/${ns}/configmaps`, 3, false);
    const watchRps = await requestsPerSecond(server, token, ca, `/api/v1/namespaces/${ns}/configmaps?watch=1`, 3, true);

    const rows: [string, string, string, string, string][] = [
      [
        'pod create -> Running',
        ms(median(berthRunning)),
        ms(median(podmanRunning)),
        `${(median(berthRunning) / median(podmanRunning)).toFixed(2)}x`,
        '<= 1.5x',
      ],
      ['pod create -> Succeeded', ms(median(berthExited)), ms(median(podmanExited)), `${(median(berthExited) / median(podmanExited)).toFixed(2)}x`, '<= 1.5x'],
      ['list requests/s', listRps.toFixed(0), '', '', '>= 200/s'],
      ['watch requests/s', watchRps.toFixed(0), '', '', '>= 200/s'],
    ];
    const running = median(berthRunning) / median(podmanRunning);
    const exited = median(berthExited) / median(podmanExited);
    reportGoal({
      area: 'dev cluster',
      measure: 'pod create → Running',
      value: ms(median(berthRunning)),
      ratio: running,
      reference: `podman run -d ${ms(median(podmanRunning))}`,
      goal: '≤ 1.5×',
    });
    reportGoal({
      area: 'dev cluster',
      measure: 'pod create → Succeeded',
      value: ms(median(berthExited)),
      ratio: exited,
      reference: `podman run --rm ${ms(median(podmanExited))}`,
      goal: '≤ 1.5×',
    });
    reportGoal({
      area: 'dev cluster',
      measure: 'list requests on loopback',
      value: `${listRps.toFixed(0)}/s`,
      ratio: listRps,
      reference: '4 keep-alive clients',
      goal: '≥ 200 /s',
    });
    reportGoal({
      area: 'dev cluster',
      measure: 'watch requests on loopback',
      value: `${watchRps.toFixed(0)}/s`,
      ratio: watchRps,
      reference: '4 keep-alive clients',
      goal: '≥ 200 /s',
    });
    console.log(`\nmedians of ${ROUNDS} rounds; reference: podman run of ${IMAGE} on the same machine`);
    console.log(['measure', 'dev cluster', 'podman run', 'ratio', 'target'].map((h, i) => h.padEnd(i === 0 ? 26 : 14)).join(''));
    for (const r of rows) console.log(r.map((c, i) => c.padEnd(i === 0 ? 26 : 14)).join(''));
  } finally {
    cluster.down();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
