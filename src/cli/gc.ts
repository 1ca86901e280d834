// `berth gc`: removes what berth created in a cluster once its expiry has passed (e.g. after a SIGKILLed shim).
import { Command } from 'commander';
import { resolveKubeConfig } from '../kube/config.js';
import { collectGarbage } from '../runtime/gc.js';

export function gcCommand(): Command {
  return new Command('gc')
    .description('delete expired pods, ConfigMaps, NetworkPolicies, Services, PersistentVolumeClaims and Leases that berth created')
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context')
    .option('-n, --namespace <ns>', 'namespace (default: the context\'s)')
    .option('-A, --all-namespaces', 'every namespace')
    .option('--all', 'also objects that have not expired yet (only berth\'s, by label)')
    .option('--dry-run', 'list what would be deleted, delete nothing')
    .action(async (o) => {
      const { kc, namespace } = resolveKubeConfig({ kubeconfig: o.kubeconfig, context: o.context, namespace: o.namespace });
      const removed = await collectGarbage({ kc, namespace, allNamespaces: Boolean(o.allNamespaces), includeUnexpired: Boolean(o.all), dryRun: Boolean(o.dryRun),
        onSkip: (resource, reason) => process.stderr.write(`berth gc: ${resource} passed by: ${reason}\n`),
      });
      for (const r of removed) process.stdout.write(`${r.kind}/${r.name} (namespace ${r.namespace}) ${o.dryRun ? 'would be deleted' : 'deleted'}\n`);
      if (removed.length === 0) process.stdout.write('nothing expired\n');
    });
}
