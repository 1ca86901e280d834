// `berth serve`: a Docker Engine API whose containers are pods (see docs/serve.md).
import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import { resolveKubeConfig } from '../kube/config.js';
import { SandboxCluster } from '../runtime/sandbox.js';
import { Engine } from '../dockerapi/engine.js';
import { dockerRoutes } from '../dockerapi/routes.js';
import { parseListener, serveDockerApi } from '../dockerapi/server.js';

export function serveCommand(): Command {
  return new Command('serve')
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
    .action(async (o) => {
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
