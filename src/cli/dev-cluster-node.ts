// `berth dev-cluster node ls|stop|start`: the nodes of the dev cluster, and a worker lost and brought back, to see what
// berth does when a machine of a real cluster goes away under a running workload.
import { Command, Option } from 'commander';
import { listNodes, startNode, stopNode } from '../devcluster/node-control.js';
import { defaultStateDir } from '../devcluster/layout.js';

const stateDirOption = () =>
  new Option('--state-dir <dir>', 'where the cluster keeps its certificates, kubeconfig, logs and node').default(
    defaultStateDir(),
    '$BERTH_DEV_CLUSTER_DIR or ~/.berth/dev-cluster',
  );

/** kubectl get nodes' columns, with where berth runs each node */
export function nodeTable(rows: { name: string; ip: string; podCidr: string; running: boolean; condition: string }[]): string {
  const lines = [
    ['NAME', 'STATUS', 'PROCESSES', 'INTERNAL-IP', 'POD-CIDR'],
    ...rows.map((r) => [r.name, r.condition, r.running ? 'running' : 'stopped', r.ip, r.podCidr]),
  ];
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  return lines.map((l) => l.map((cell, i) => (i === l.length - 1 ? cell : cell.padEnd(widths[i]! + 3))).join('')).join('\n') + '\n';
}

export function nodeCommand(): Command {
  const node = new Command('node').description("the dev cluster's nodes: list them, stop a worker as a crash would, start it again");
  node.addCommand(
    new Command('ls')
      .description('list the nodes: the Ready condition the API server shows, and whether their processes run')
      .addOption(stateDirOption())
      .action(async (o: { stateDir: string }) => {
        process.stdout.write(nodeTable(await listNodes(o.stateDir)));
      }),
  );
  node.addCommand(
    new Command('stop')
      .description(
        "kill a worker's kubelet, containerd, kube-proxy and every pod at once and cut it off the network, as a machine that loses power; the API server sees it NotReady once its heartbeats stop (about 40 s)",
      )
      .argument('<name>', 'a worker, e.g. berth-worker')
      .addOption(stateDirOption())
      .action(async (name: string, o: { stateDir: string }) => {
        process.stdout.write((await stopNode(o.stateDir, name)) ? `node ${name} stopped\n` : `node ${name} was not running\n`);
      }),
  );
  node.addCommand(
    new Command('start')
      .description(
        'start a stopped worker again, as a machine that boots: plugged back in, its runtime and kubelet started, its pods gone; returns once it is Ready',
      )
      .argument('<name>', 'a worker, e.g. berth-worker')
      .addOption(stateDirOption())
      .action(async (name: string, o: { stateDir: string }) => {
        const started = await startNode(o.stateDir, name, (line) => process.stderr.write(`dev-cluster: ${line}\n`));
        process.stdout.write(started ? `node ${name} started\n` : `node ${name} was running\n`);
      }),
  );
  return node;
}
