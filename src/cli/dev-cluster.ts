// `berth dev-cluster up|down|status|kubeconfig`: a single-node Kubernetes-API-compatible cluster on podman.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { CLUSTER_NAME } from '../devcluster/cluster.js';
import { parseQuantity } from '../devcluster/node/quantity.js';
import { KUBELET_LOG_ROTATION } from '../devcluster/types.js';
import { serverHeapFlags } from './server-heap.js';
import { downUpstreamAction, faultProxyCommand, isUpstream, loadCommand, upstreamStatus, upUpstreamAction } from './dev-cluster-upstream.js';
import {
  defaultStateDir,
  probeReady,
  readState,
  runForeground,
  runningCluster,
  startBackground,
  stopCluster,
} from '../devcluster/control.js';

const cliPath = fileURLToPath(new URL('./main.js', import.meta.url));

function fraction(value: string): number {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new Error(`expected a fraction between 0 and 1, got "${value}"`);
  return n;
}

function milliseconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`expected a whole number of milliseconds, got "${value}"`);
  return n;
}

/** a size as the kubelet's configuration writes it: bytes, or a quantity such as 10Mi */
function logSize(value: string): number {
  const n = /^\d+(\.\d+)?(Ki|Mi|Gi|k|M|G)?$/.test(value) ? Math.floor(parseQuantity(value)) : NaN;
  if (!Number.isFinite(n) || n < 0) throw new Error(`expected a size such as 10Mi or 1048576, got "${value}"`);
  return n;
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

export function devClusterCommand(): Command {
  const cmd = new Command('dev-cluster').description('a single-node cluster to try berth on: upstream Kubernetes built from the release (--upstream), or the TypeScript API server whose pods are podman containers');
  const stateDirOption = () => new Option('--state-dir <dir>', 'where the cluster keeps its CA, kubeconfig, logs and volumes').default(defaultStateDir(), '$BERTH_DEV_CLUSTER_DIR or ~/.berth/dev-cluster');

  cmd
    .command('up')
    .description('start the dev cluster (in the background unless --foreground) and write its kubeconfig')
    .addOption(stateDirOption())
    .option('--port <port>', 'HTTPS port of the API server (0 = any free port)', '0')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--users <file>', 'YAML file of token users and their RBAC rules (see README)')
    .option('--podman <binary>', 'podman binary that runs the pods', 'podman')
    .option('--foreground', 'run in this process until interrupted')
    .option('--fault-drop-streams <fraction>', 'drop this fraction of exec/attach sessions without a status', fraction, 0)
    .option('--fault-error500 <fraction>', 'answer 500 to this fraction of API requests', fraction, 0)
    .option('--fault-end-watch-after <ms>', 'end every watch after this many ms', milliseconds, 0)
    .option('--fault-delay-pod-start <ms>', 'delay every pod start by this many ms', milliseconds, 0)
    .option('--container-log-max-size <size>', "rotate a running container's log at this size (10Mi, bytes), as the kubelet's containerLogMaxSize (0 = never)", logSize, KUBELET_LOG_ROTATION.containerLogMaxBytes)
    .option('--container-log-check-interval <ms>', "how often a log's size is looked at, as the kubelet's containerLogMonitorInterval", milliseconds, KUBELET_LOG_ROTATION.containerLogCheckMs)
    .option('--watch-history <events>', 'watch events kept for resume; older resourceVersions get 410 Expired', (v) => milliseconds(v), 10000)
    .option('--upstream', 'start upstream Kubernetes (kube-apiserver, kubelet, containerd: built from the release on first use) instead of the TypeScript cluster')
    .option('--split-log-streams', 'with --upstream: turn on the alpha gate PodLogsQuerySplitStreams (stdout and stderr read apart)')
    .option('--load <image...>', 'with --upstream: images from podman to put into the node before up returns')
    .action(async (o) => {
      if (o.upstream) return upUpstreamAction(o);
      const existing = runningCluster(o.stateDir);
      if (existing && !o.foreground) {
        process.stdout.write(`dev cluster already running at ${existing.server} (pid ${existing.pid})\nkubeconfig: ${existing.kubeconfig}\n`);
        return;
      }
      const port = Number(o.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be a port number, got "${o.port}"`);
      if (o.foreground) {
        await runForeground(
          {
            stateDir: o.stateDir,
            port,
            host: o.host,
            usersFile: o.users,
            podman: o.podman,
            historyLimit: o.watchHistory,
            faults: {
              dropStreams: o.faultDropStreams,
              error500: o.faultError500,
              endWatchAfterMs: o.faultEndWatchAfter,
              delayPodStartMs: o.faultDelayPodStart,
              containerLogMaxBytes: o.containerLogMaxSize,
              containerLogCheckMs: o.containerLogCheckInterval,
            },
          },
          (state) => {
            if (process.send) process.send({ ready: state });
            process.stderr.write(`dev cluster ready at ${state.server}\nkubeconfig: ${state.kubeconfig}\n`);
          },
        ).catch((err: Error) => {
          if (process.send) process.send({ error: err.message });
          throw err;
        });
        return;
      }
      const passthrough = process.argv.slice(process.argv.indexOf('up') + 1);
      if (process.stderr.isTTY) process.stderr.write('starting the dev cluster…\r');
      // the dev cluster streams logs and archives as berth serve does and gains as much from serve's heap flags
      const state = await startBackground(cliPath, passthrough, o.stateDir, serverHeapFlags());
      if (process.stderr.isTTY) process.stderr.write('\x1b[2K');
      process.stdout.write(`dev cluster running at ${state.server} (pid ${state.pid})\nkubeconfig: ${state.kubeconfig}\n  export KUBECONFIG=${state.kubeconfig}\n`);
    });

  cmd
    .command('down')
    .description('stop the dev cluster and remove everything it ran (upstream: every process, mount, cgroup, link, iptables chain and folder of the node)')
    .addOption(stateDirOption())
    .option('--podman <binary>', 'podman binary that ran the pods', 'podman')
    .action(async (o) => {
      if (isUpstream(o.stateDir)) {
        process.stdout.write((await downUpstreamAction(o.stateDir)) ? 'dev cluster stopped\n' : `no dev cluster ran from ${o.stateDir}\n`);
        return;
      }
      const stopped = await stopCluster(o.stateDir, o.podman);
      process.stdout.write(stopped ? 'dev cluster stopped\n' : `no dev cluster ran from ${o.stateDir}\n`);
    });

  cmd
    .command('status')
    .description('whether the dev cluster runs, where, and its kubeconfig')
    .addOption(stateDirOption())
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (o) => {
      if (isUpstream(o.stateDir)) {
        const up = await upstreamStatus(o.stateDir);
        if (o.output === 'json') process.stdout.write(JSON.stringify({ running: up.running, ...(up.state ?? {}) }, null, 2) + '\n');
        else if (up.running && up.state) process.stdout.write(`running at ${up.state.server} (Kubernetes ${up.state.version}, since ${up.state.startedAt})\nkubeconfig: ${up.state.kubeconfig}\n`);
        else process.stdout.write('not running (start it with: berth dev-cluster up --upstream)\n');
        if (!up.running) process.exitCode = 3;
        return;
      }
      const state = readState(o.stateDir);
      const running = state ? runningCluster(o.stateDir) !== undefined && (await probeReady(o.stateDir, state)) : false;
      if (o.output === 'json') {
        process.stdout.write(JSON.stringify({ running, ...(state ?? {}) }, null, 2) + '\n');
      } else if (running && state) {
        process.stdout.write(`running at ${state.server} (pid ${state.pid}, since ${state.startedAt})\nkubeconfig: ${state.kubeconfig}\n`);
      } else {
        process.stdout.write(`not running (start it with: berth dev-cluster up)\n`);
      }
      if (!running) process.exitCode = 3;
    });

  cmd
    .command('kubeconfig')
    .description('print the kubeconfig of the dev cluster (or its path)')
    .addOption(stateDirOption())
    .option('--path', 'print only the path of the kubeconfig file')
    .option('--user <name>', 'make this user\'s context the current one')
    .action((o) => {
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
        if (!ctx) throw new Error(unknownUserMessage(o.user, o.stateDir, config.contexts.map((c) => c.name)));
        config['current-context'] = ctx.name;
        text = stringifyYaml(config);
      }
      process.stdout.write(text);
    });
  cmd.addCommand(loadCommand(stateDirOption));
  cmd.addCommand(faultProxyCommand(stateDirOption), { hidden: true });
  return cmd;
}
