// `berth serve`: a Docker Engine API whose containers are pods (see docs/serve.md).
import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import { resolveKubeConfig } from '../kube/config.js';
import { SandboxCluster } from '../runtime/sandbox.js';
import { Engine } from '../dockerapi/engine.js';
import { dockerRoutes } from '../dockerapi/routes.js';
import { parseListener, serveDockerApi } from '../dockerapi/server.js';
import { SETTINGS_PREFIX, podSettingsFrom } from '../runtime/sandbox-settings.js';

// Flags that set a pod setting for every container: each is the default of the label `berth.dev/<flag>`.
const SETTING_FLAGS: Array<[flag: string, key: string, help: string]> = [
  ['request-cpu', 'request-cpu', 'CPU request of every pod (e.g. 100m)'],
  ['request-memory', 'request-memory', 'memory request of every pod (e.g. 128Mi)'],
  ['request-ephemeral-storage', 'request-ephemeral-storage', 'ephemeral-storage request of every pod'],
  ['limit-cpu', 'limit-cpu', 'CPU limit of every pod (HostConfig NanoCpus wins)'],
  ['limit-memory', 'limit-memory', 'memory limit of every pod (HostConfig Memory wins)'],
  ['limit-ephemeral-storage', 'limit-ephemeral-storage', 'ephemeral-storage limit of every pod'],
  ['node-selector', 'node-selector', 'node selector of every pod, k=v,k=v'],
  ['service-account', 'service-account', 'service account of every pod (its token is not mounted)'],
  ['pull-policy', 'pull-policy', 'image pull policy: Always, IfNotPresent (default) or Never'],
  ['pod-name-prefix', 'name-prefix', 'prefix of every pod name'],
  ['pod-labels', 'pod-labels', 'extra labels of every pod, k=v,k=v'],
  ['pod-annotations', 'pod-annotations', 'extra annotations of every pod, k=v,k=v'],
];

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

export function serveCommand(): Command {
  const cmd = new Command('serve')
    .description('serve a Docker Engine API (docker CLI, testcontainers, dockerode) whose containers run as pods')
    .option('-H, --host <listener...>', 'listen on unix:///path or tcp://host:port (repeatable)', [])
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context')
    .option('-n, --namespace <ns>', "namespace (default: the context's)")
    .option('--instance <id>', 'owner label of everything this berth creates (default: random)')
    .option('--token <token>', 'require `Authorization: Bearer <token>` (needed for non-loopback TCP)')
    .option('--ttl <seconds>', 'expiry and activeDeadlineSeconds of created objects', '3600')
    .option('--start-timeout <seconds>', 'how long a container may take to start', '120')
    .option('--publish-address <ip>', 'address published ports listen on', '127.0.0.1')
    .option('--allow-privileged', 'accept Privileged containers (refused by default)')
    .option('--prune-start', 'first delete what an earlier berth serve with the same --instance left behind')
    .option('--keep-failed <minutes>', 'keep the pod of a container that failed this long after rm, the reaper or shutdown', '0');
  for (const [flag, key, help] of SETTING_FLAGS) cmd.option(`--${flag} <value>`, `${help} (a container's label ${SETTINGS_PREFIX}${key} wins)`);
  return cmd.action(async (o) => {
      const podDefaults: Record<string, string> = {};
      for (const [flag, key] of SETTING_FLAGS) {
        const value = o[camel(flag)] as string | undefined;
        if (value !== undefined) podDefaults[`${SETTINGS_PREFIX}${key}`] = value;
      }
      podSettingsFrom(podDefaults); // a bad flag stops here, not at the first container
      const keepFailedMinutes = Number(o.keepFailed);
      if (!Number.isFinite(keepFailedMinutes) || keepFailedMinutes < 0) throw new Error(`--keep-failed ${o.keepFailed}: give minutes (0 or more)`);
      const hosts: string[] = o.host.length ? o.host : ['unix:///var/run/berth.sock', 'tcp://127.0.0.1:2475'];
      const listeners = hosts.map(parseListener);
      const { kc, namespace } = resolveKubeConfig({ kubeconfig: o.kubeconfig, context: o.context, namespace: o.namespace });
      const owner = (o.instance as string | undefined) ?? `serve-${randomBytes(4).toString('hex')}`;
      const engine = new Engine({
        cluster: new SandboxCluster(kc, namespace),
        owner,
        ttlSeconds: Number(o.ttl),
        publishAddress: o.publishAddress,
        startTimeoutMs: Number(o.startTimeout) * 1000,
        allowPrivileged: Boolean(o.allowPrivileged),
        podDefaults,
        keepFailedSeconds: keepFailedMinutes * 60,
      });
      if (o.pruneStart) await engine.pruneCluster();
      else {
        const recovered = await engine.recover();
        if (recovered) process.stderr.write(`berth serve: took over ${recovered} container(s) of instance ${owner}\n`);
      }
      engine.startWatch();
      const server = await serveDockerApi({ listeners, router: dockerRoutes(engine), token: o.token, log: (l) => process.stderr.write(`berth serve: ${l}\n`) });
      process.stderr.write(`berth serve: instance ${owner}, namespace ${namespace}, listening on ${server.addresses.join(', ')}\n`);
      let stopping = false;
      const stop = async (): Promise<void> => {
        if (stopping) return;
        stopping = true;
        process.stderr.write('berth serve: stopping, deleting what this instance created\n');
        await server.close();
        await engine.shutdown();
        process.exit(0);
      };
      process.on('SIGTERM', () => void stop());
      process.on('SIGINT', () => void stop());
    });
}
