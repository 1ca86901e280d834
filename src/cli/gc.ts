// `berth gc`: removes what berth created in a cluster once its expiry has passed (e.g. after a SIGKILLed shim), and
// with --image-registry the images it pushed there, which a killed berth never released.
import { Command } from 'commander';
import { resolveKubeConfig } from '../kube/config.js';
import { labeledObjects } from '../kube/labeled-objects.js';
import { collectExpiredImages } from '../registry/image-gc.js';
import { parsePushTarget } from '../registry/push-target.js';
import { collectGarbage, GC_KINDS } from '../runtime/gc.js';

/** The --kinds name of the images under --image-registry: not a Kubernetes kind, so only with that flag. */
const IMAGES = 'images';

export function gcCommand(): Command {
  return new Command('gc')
    .description(
      'delete expired pods, ConfigMaps, NetworkPolicies, Services, PersistentVolumeClaims and Leases that berth created, and with --image-registry the images it pushed',
    )
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context')
    .option('-n, --namespace <ns>', "namespace (default: the context's)")
    .option('-A, --all-namespaces', 'every namespace')
    .option(
      '--image-registry <registry/prefix>',
      "also the images berth pushed under PREFIX (berth task's and berth serve's --image-registry; http://REGISTRY/PREFIX for plain http) whose expiry tag (berth-expires-UNIX_SECONDS) has passed; needs the registry's catalog (/v2/_catalog) and deletes enabled",
    )
    .option('--all', "also objects and images that have not expired yet (only berth's, by label or expiry tag)")
    .option('--dry-run', 'list what would be deleted, delete nothing')
    .option(
      '--kinds <list>',
      `only these kinds, comma-separated (default all: ${GC_KINDS.join(',')}, and ${IMAGES} with --image-registry; --kinds ${IMAGES} touches no cluster); the shim's Role lists pods,configmaps,networkpolicies`,
    )
    .action(async (o) => {
      const known = [...GC_KINDS, IMAGES];
      const kinds =
        o.kinds === undefined
          ? undefined
          : String(o.kinds)
              .split(',')
              .map((k) => k.trim())
              .filter(Boolean);
      const unknown = kinds?.filter((k) => !known.includes(k)) ?? [];
      if (unknown.length > 0 || kinds?.length === 0)
        throw new Error(
          `--kinds: unknown kind ${unknown.join(', ') || '(none given)'} (berth gc collects ${GC_KINDS.join(', ')}, and ${IMAGES} with --image-registry)`,
        );
      const target = o.imageRegistry === undefined ? undefined : parsePushTarget(String(o.imageRegistry), '--image-registry');
      const images = target !== undefined && (kinds === undefined || kinds.includes(IMAGES));
      if (kinds?.includes(IMAGES) && !target) throw new Error(`--kinds ${IMAGES}: name the registry with --image-registry REGISTRY/PREFIX`);
      // The flag names a registry to collect: a --kinds that leaves images out would make it do nothing unsaid.
      if (target && !images) throw new Error(`--image-registry is given but --kinds leaves out ${IMAGES}: add it, or drop --image-registry`);
      const objectKinds = kinds?.filter((k) => k !== IMAGES);
      const verb = o.dryRun ? 'would be deleted' : 'deleted';
      let found = 0;
      const skipped: string[] = [];

      if (objectKinds === undefined || objectKinds.length > 0) {
        const { kc, namespace } = resolveKubeConfig({ kubeconfig: o.kubeconfig, context: o.context, namespace: o.namespace });
        const removed = await collectGarbage({
          objects: labeledObjects(kc),
          namespace,
          allNamespaces: Boolean(o.allNamespaces),
          includeUnexpired: Boolean(o.all),
          dryRun: Boolean(o.dryRun),
          kinds: objectKinds,
          onSkip: (resource, reason) => {
            skipped.push(resource);
            process.stderr.write(`berth gc: ${resource} not collected: ${reason}\n`);
          },
        });
        for (const r of removed) process.stdout.write(`${r.kind}/${r.name} (namespace ${r.namespace}) ${verb}\n`);
        found += removed.length;
      }
      // After the pods: an image goes only once nothing that was made to run it is left.
      if (target && images) {
        const collected = await collectExpiredImages({
          target,
          now: new Date(),
          dryRun: Boolean(o.dryRun),
          includeUnexpired: Boolean(o.all),
        });
        for (const i of collected) process.stdout.write(`image ${i.reference} (expiry ${i.expiresAt.toISOString()}) ${verb}\n`);
        found += collected.length;
      }

      if (found === 0) process.stdout.write(skipped.length ? 'nothing expired among the kinds berth could list\n' : 'nothing expired\n');
      // What could not be listed was not checked: never report a clean namespace for it.
      if (skipped.length > 0) {
        process.stderr.write(
          `berth gc: ${skipped.join(', ')} could not be listed, so what berth left there was not collected: grant list (and delete) on them, or name the kinds to collect with --kinds\n`,
        );
        process.exitCode = 1;
      }
    });
}
