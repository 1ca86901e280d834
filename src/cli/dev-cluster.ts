// `berth dev-cluster up|down|status|kubeconfig|load`: a single-node Kubernetes cluster to try berth on and to test it
// on, built from the Kubernetes release (kube-apiserver, the kubelet, containerd) and run as processes of this machine.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { downCluster, readClusterState } from '../devcluster/control.js';
import { runFaultProxy } from '../devcluster/faults/fault-proxy-process.js';
import { parseFaults } from '../devcluster/faults/fault-switches.js';
import { KUBELET_LOG_ROTATION } from '../devcluster/faults/faults.js';
import { loadIntoNodes } from '../devcluster/node-control.js';
import { MAX_NODES } from '../devcluster/nodes.js';
import { CLUSTER_NAME } from '../devcluster/kubeconfig.js';
import { defaultStateDir, Layout } from '../devcluster/layout.js';
import { clusterAnswers, retiredOptionProblem, upAction } from './dev-cluster-up.js';
import { nodeCommand } from './dev-cluster-node.js';

function fraction(value: string): number {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new Error(`expected a fraction between 0 and 1, got "${value}"`);
  return n;
}

function nodeCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_NODES) throw new Error(`expected a number of nodes from 1 to ${MAX_NODES}, got "${value}"`);
  return n;
}

function milliseconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`expected a whole number of milliseconds, got "${value}"`);
  return n;
}

const SIZE_UNITS: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

/** a size as the kubelet's configuration writes it: bytes, or a quantity such as 10Mi */
export function logSize(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(value);
  if (!m) throw new Error(`expected a size such as 10Mi or 1048576, got "${value}"`);
  return Math.floor(Number(m[1]) * SIZE_UNITS[m[2] ?? '']!);
}

/** Users exist only if `up` was given them: say how, since a cluster started without `--users` has only admin. */
function unknownUserMessage(user: string, stateDir: string, contexts: string[]): string {
  return [
    `no user "${user}" in the dev cluster's kubeconfig (contexts: ${contexts.join(', ')}).`,
    'Users are declared when the cluster starts: restart it with a users file (a restart empties the cluster),',
    `  berth dev-cluster down --state-dir ${stateDir} && berth dev-cluster up --state-dir ${stateDir} --users users.yaml`,
    'where users.yaml reads (rules are RBAC PolicyRules; a user without rules gets its rights from RoleBindings):',
    'users:',
    `  - name: ${user}`,
    '    token: optional-fixed-token      # generated when absent',
    '    groups: [team-a]                 # optional',
    '    rules:                           # optional',
    '      - apiGroups: [""]',
    '        resources: ["pods", "pods/log"]',
    '        verbs: ["get", "list", "watch"]',
    '        namespaces: ["ci"]           # absent = every namespace',
    '(the README\'s "Users and RBAC" and examples/dev-cluster-users.yaml).',
  ].join('\n');
}

const stateDirOption = () =>
  new Option('--state-dir <dir>', 'where the cluster keeps its certificates, kubeconfig, logs and node').default(
    defaultStateDir(),
    '$BERTH_DEV_CLUSTER_DIR or ~/.berth/dev-cluster',
  );
/** accepted so that a script written for the retired TypeScript cluster is told why it no longer applies */
const retired = (flags: string) => new Option(flags).hideHelp();

function upCommand(): Command {
  return new Command('up')
    .description('start the dev cluster and write its kubeconfig; the first run on a machine builds Kubernetes (about 22 minutes)')
    .addOption(stateDirOption())
    .option('--port <port>', 'HTTPS port clients reach the API server on (0 = any free port)', '0')
    .option('--host <address>', 'address clients reach the API server on', '127.0.0.1')
    .option('--users <file>', 'YAML file of token users and their RBAC rules (see README)')
    .option(
      '--nodes <n>',
      `nodes in the cluster, 1 to ${MAX_NODES}: this machine's node, then workers (berth-worker, berth-worker2), each in a network of its own`,
      nodeCount,
      1,
    )
    .option('--split-log-streams', 'turn on the alpha gate PodLogsQuerySplitStreams (stdout and stderr read apart; off on a stock cluster)')
    .option('--load <image...>', 'images from podman to put into the node before up returns')
    .option(
      '--container-log-max-size <size>',
      "the kubelet's containerLogMaxSize: rotate a running container's log at this size (10Mi, bytes)",
      logSize,
      KUBELET_LOG_ROTATION.containerLogMaxBytes,
    )
    .option(
      '--container-log-check-interval <ms>',
      "the kubelet's containerLogMonitorInterval (at least 3000)",
      milliseconds,
      KUBELET_LOG_ROTATION.containerLogCheckMs,
    )
    .option('--fault-drop-streams <fraction>', 'drop this fraction of exec/attach/port-forward sessions without a status', fraction, 0)
    .option('--fault-error500 <fraction>', 'answer 500 to this fraction of API requests', fraction, 0)
    .option(
      '--fault-throttle429 <fraction>',
      'answer this fraction of API requests as API Priority and Fairness rejects them (429, Retry-After: 1)',
      fraction,
      0,
    )
    .option('--fault-end-watch-after <ms>', 'end every watch after this many ms', milliseconds, 0)
    .option('--fault-delay-pod-start <ms>', "delay the start of every pod's containers by this many ms", milliseconds, 0)
    .addOption(new Option('--upstream', 'the upstream cluster (the only one; kept for scripts that name it)').hideHelp())
    .addOption(retired('--foreground'))
    .addOption(retired('--podman <binary>'))
    .addOption(retired('--watch-history <events>'))
    .addHelpText('after', '\nFault switches can also change while the cluster runs, as admin:\n  kubectl replace --raw /berth-dev/v1/faults -f faults.json')
    .action(upAction);
}

function downCommand(): Command {
  return new Command('down')
    .description('stop the dev cluster and remove everything it ran: every process, mount, cgroup, link, iptables chain and folder of the node')
    .addOption(stateDirOption())
    .addOption(retired('--podman <binary>'))
    .action(async (o: { stateDir: string; podman?: string }) => {
      const problem = retiredOptionProblem(o);
      if (problem) throw new Error(problem);
      process.stdout.write((await downCluster(o.stateDir)) ? 'dev cluster stopped\n' : `no dev cluster ran from ${o.stateDir}\n`);
    });
}

function statusCommand(): Command {
  return new Command('status')
    .description('whether the dev cluster runs, where, and its kubeconfig (exit code 3 when it does not run)')
    .addOption(stateDirOption())
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (o: { stateDir: string; output: string }) => {
      const state = readClusterState(o.stateDir);
      const running = !!state && (await clusterAnswers(new Layout(o.stateDir)));
      if (o.output === 'json') process.stdout.write(JSON.stringify({ running, ...(state ?? {}) }, null, 2) + '\n');
      else if (running && state)
        process.stdout.write(
          `running at ${state.server} (Kubernetes ${state.version}, since ${state.startedAt})\nnodes: ${state.nodes.join(', ')}\nkubeconfig: ${state.kubeconfig}\n` +
            (state.registry ? `registry: ${state.registry} (plain HTTP; nodes and pods pull from it: --image-registry http://${state.registry}/PREFIX)\n` : ''),
        );
      else process.stdout.write('not running (start it with: berth dev-cluster up)\n');
      if (!running) process.exitCode = 3;
    });
}

function kubeconfigCommand(): Command {
  return new Command('kubeconfig')
    .description('print the kubeconfig of the dev cluster (or its path)')
    .addOption(stateDirOption())
    .option('--path', 'print only the path of the kubeconfig file')
    .option('--user <name>', "make this user's context the current one")
    .action((o: { stateDir: string; path?: boolean; user?: string }) => {
      const file = join(o.stateDir, 'kubeconfig');
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        throw new Error(`no kubeconfig in ${o.stateDir}; start the cluster first: berth dev-cluster up`);
      }
      if (o.path) {
        process.stdout.write(file + '\n');
        return;
      }
      if (o.user) {
        const config = parseYaml(text) as { contexts: { name: string; context: { user: string } }[]; 'current-context': string };
        const wanted = o.user === 'admin' ? CLUSTER_NAME : `${CLUSTER_NAME}-${o.user}`;
        const ctx = config.contexts.find((c) => c.name === wanted);
        if (!ctx)
          throw new Error(
            unknownUserMessage(
              o.user,
              o.stateDir,
              config.contexts.map((c) => c.name),
            ),
          );
        config['current-context'] = ctx.name;
        text = stringifyYaml(config);
      }
      process.stdout.write(text);
    });
}

function loadCommand(): Command {
  return new Command('load')
    .description('put images from podman into every running node of the dev cluster, as `kind load docker-image` does')
    .argument('<image...>', 'images in podman, e.g. localhost/berth/busybox:1')
    .addOption(stateDirOption())
    .action(async (images: string[], o: { stateDir: string }) => {
      const nodes = await loadIntoNodes(o.stateDir, images);
      for (const i of images) process.stdout.write(`loaded ${i} (${nodes.join(', ')})\n`);
    });
}

function faultProxyCommand(): Command {
  return new Command('fault-proxy')
    .description('(run by `up`) the fault-injecting proxy in front of kube-apiserver, in the foreground')
    .addOption(stateDirOption())
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', '0')
    .option('--faults <json>', 'switches on from the start, as the faults endpoint takes them')
    .action(async (o: { stateDir: string; host: string; port: string; faults?: string }) => {
      const initial = o.faults === undefined ? { patch: {} } : parseFaults(o.faults);
      if ('error' in initial) throw new Error(`--faults: ${initial.error}`);
      await runFaultProxy(new Layout(o.stateDir), o.host, Number(o.port), initial.patch);
    });
}

export function devClusterCommand(): Command {
  const cmd = new Command('dev-cluster').description(
    'a Kubernetes cluster of one to three nodes to try berth on: kube-apiserver, the kubelet and containerd, built from the release on first use',
  );
  for (const sub of [upCommand(), downCommand(), statusCommand(), kubeconfigCommand(), loadCommand(), nodeCommand()]) cmd.addCommand(sub);
  cmd.addCommand(faultProxyCommand(), { hidden: true });
  return cmd;
}
