// `berth gc`: removes what berth created in a cluster once its expiry has passed (e.g. after a SIGKILLed shim).
import { Command } from 'commander';
import { resolveKubeConfig } from '../kube/config.js';
import { labeledObjects } from '../kube/labeled-objects.js';
import { collectGarbage, GC_KINDS } from '../runtime/gc.js';

export function gcCommand(): Command {
  return new Command('gc')
    .description('delete expired pods, ConfigMaps, NetworkPolicies, Services, PersistentVolumeClaims and Leases that berth created')
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context')
    .option('-n, --namespace <ns>', "namespace (default: the context's)")
    .option('-A, --all-namespaces', 'every namespace')
    .option('--all', "also objects that have not expired yet (only berth's, by label)")
    .option('--dry-run', 'list what would be deleted, delete nothing')
    .option('--kinds <list>', `only these kinds, comma-separated (default all: ${GC_KINDS.join(',')}); the shim's Role lists pods,configmaps,networkpolicies`)
    .action(async (o) => {
      const kinds =
        o.kinds === undefined
          ? undefined
          : String(o.kinds)
              .split(',')
              .map((k) => k.trim())
              .filter(Boolean);
      const unknown = kinds?.filter((k) => !(GC_KINDS as readonly string[]).includes(k)) ?? [];
      if (unknown.length > 0 || kinds?.length === 0)
        throw new Error(`--kinds: unknown kind ${unknown.join(', ') || '(none given)'} (berth gc collects ${GC_KINDS.join(', ')})`);
      const { kc, namespace } = resolveKubeConfig({ kubeconfig: o.kubeconfig, context: o.context, namespace: o.namespace });
      const skipped: string[] = [];
      const removed = await collectGarbage({
        objects: labeledObjects(kc),
        namespace,
        allNamespaces: Boolean(o.allNamespaces),
        includeUnexpired: Boolean(o.all),
        dryRun: Boolean(o.dryRun),
        kinds,
        onSkip: (resource, reason) => {
          skipped.push(resource);
          process.stderr.write(`berth gc: ${resource} not collected: ${reason}\n`);
        },
      });
      for (const r of removed) process.stdout.write(`${r.kind}/${r.name} (namespace ${r.namespace}) ${o.dryRun ? 'would be deleted' : 'deleted'}\n`);
      if (removed.length === 0) process.stdout.write(skipped.length ? 'nothing expired among the kinds berth could list\n' : 'nothing expired\n');
      // What could not be listed was not checked: never report a clean namespace for it.
      if (skipped.length > 0) {
        process.stderr.write(
          `berth gc: ${skipped.join(', ')} could not be listed, so what berth left there was not collected: grant list (and delete) on them, or name the kinds to collect with --kinds\n`,
        );
        process.exitCode = 1;
      }
    });
}
