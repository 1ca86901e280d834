// `berth task target ...`: where task steps run (see docs/task.md, "Targets").
import { IMAGE_SERVER_CA_HELP, imageServerCaOf } from './image-server-ca.js';
import { IMAGE_SERVER_CA_ENV } from '../task/step-image-pod.js';
import { Command } from 'commander';
import { checkTarget, collectTaskObjects } from '../task/target-ops.js';
import { findTarget, readTargets, targetsFile, updateTargets, type Target } from '../task/target-store.js';
import { newTarget } from '../task/targets.js';

const sub = (name: string, description: string): Command => new Command(name).description(description);

export function targetCommand(): Command {
  const file = (): string => targetsFile(process.env);
  const target = new Command('target').description(
    `targets: named places where task steps run (a kubeconfig context and a namespace), kept in $XDG_CONFIG_HOME/berth/task-targets.yaml (~/.config/berth/task-targets.yaml)`,
  );

  target.addCommand(
    sub(
      'add',
      'add a target, or replace the one of that name (which also un-lands it); checked locally: the context exists, the pod template parses (`target check` asks the cluster)',
    )
      .argument('<name>', 'the target name (--target NAME on `task run` and `task plan run`)')
      .option('--kubeconfig <file>', 'kubeconfig file (default: resolved as kubectl does when a step runs: $KUBECONFIG, ~/.kube/config)')
      .option('--context <name>', 'kubeconfig context (default: the current one, pinned now)')
      .option('-n, --namespace <ns>', "namespace (default: the context's, pinned now)")
      .option('--pod-template <file>', 'a Pod, PodTemplate or template YAML laid under every step pod there (as BERTH_POD_TEMPLATE does for the shim)')
      .option('--allow-privileged', 'let `task run -p` run privileged steps there')
      .action(async (name: string, o: { kubeconfig?: string; context?: string; namespace?: string; podTemplate?: string; allowPrivileged?: boolean }) => {
        await report(async () => {
          const t = await newTarget(name, o, process.env, process.cwd());
          let replaced = false;
          updateTargets(file(), (all) => {
            replaced = all.some((x) => x.name === name);
            return [...all.filter((x) => x.name !== name), t];
          });
          process.stdout.write(
            `target ${name} ${replaced ? 'updated' : 'added'}: context ${t.context}, namespace ${t.namespace}${t.allowPrivileged ? ', privileged allowed' : ''}\n`,
          );
        });
      }),
  );

  target.addCommand(
    sub('ls', 'list the targets (as `fly targets` does)')
      .alias('list')
      .action(async () => {
        await report(async () => process.stdout.write(targetTable(readTargets(file()))));
      }),
  );

  target.addCommand(
    sub(
      'check',
      "reach the target's cluster and ask (SelfSubjectAccessReview) for every permission berth task needs there; each missing one is named with the rule of deploy/rbac/task-role.yaml that grants it. Exits 0 when all is there, 1 when not",
    )
      .argument('<name>', 'the target')
      .option(
        '--image-server <image>',
        "also serve a tiny step image from a pod of IMAGE (the berth image), as `plan run --image-server` does, and have a node pull it: says whether the target's nodes can",
      )
      .option('--image-server-ca <dir>', `with --image-server: ${IMAGE_SERVER_CA_HELP} (default: $${IMAGE_SERVER_CA_ENV})`)
      .action(async (name: string, opts: { imageServer?: string; imageServerCa?: string }) => {
        await report(async () => {
          const t = findTarget(readTargets(file()), name, file());
          const ca = imageServerCaOf(opts, process.env, opts.imageServer, IMAGE_SERVER_CA_ENV);
          const { lines, problems } = await checkTarget(t, process.env, {
            ...(opts.imageServer ? { imageServer: opts.imageServer } : {}),
            ...(ca ? { imageServerCa: ca } : {}),
          });
          for (const l of lines) process.stdout.write(`${l}\n`);
          for (const p of problems) process.stderr.write(`berth task target check: ${p}\n`);
          process.stdout.write(problems.length ? `target ${name} is not ready\n` : `target ${name} is ready\n`);
          if (problems.length) process.exitCode = 1;
        });
      }),
  );

  target.addCommand(
    sub('land', 'land a target: no new step starts there (run and plan refuse it); steps and plans already running finish')
      .argument('<name>', 'the target')
      .action(async (name: string) => {
        await report(async () => {
          setLanded(file(), name, true);
          process.stdout.write(`target ${name} landed: no new steps start there (berth task target unland ${name} to use it again)\n`);
        });
      }),
  );

  target.addCommand(
    sub('unland', 'use a landed target again')
      .argument('<name>', 'the target')
      .action(async (name: string) => {
        await report(async () => {
          setLanded(file(), name, false);
          process.stdout.write(`target ${name}: steps start there again\n`);
        });
      }),
  );

  target.addCommand(
    sub(
      'retire',
      "delete everything berth task created in the target's namespace (its pods, by berth's labels, and with them their params Secrets; the target's caches), then forget the target",
    )
      .argument('<name>', 'the target')
      .option('--forget-only', 'forget the target without touching its cluster (e.g. a cluster that is gone)')
      .action(async (name: string, o: { forgetOnly?: boolean }) => {
        await report(async () => {
          const t = findTarget(readTargets(file()), name, file());
          if (!o.forgetOnly) {
            // A plan that was running there may start one more step meanwhile: again until a pass finds nothing.
            for (let pass = 0; pass < 5; pass++) {
              const removed = await collectTaskObjects(t, process.env, true);
              printRemoved(removed, t);
              if (removed.length === 0) break;
            }
          }
          updateTargets(file(), (all) => all.filter((x) => x.name !== name));
          process.stdout.write(`target ${name} retired${o.forgetOnly ? ' (its cluster was not touched)' : ''}\n`);
        });
      }),
  );

  target.addCommand(
    sub('gc', "delete berth task's expired objects in the target's namespace (what a killed berth left once its deadline passed)")
      .argument('<name>', 'the target')
      .action(async (name: string) => {
        await report(async () => {
          const t = findTarget(readTargets(file()), name, file());
          const removed = await collectTaskObjects(t, process.env, false);
          printRemoved(removed, t);
          if (removed.length === 0) process.stdout.write('nothing expired\n');
        });
      }),
  );
  return target;
}

function setLanded(file: string, name: string, landed: boolean): void {
  updateTargets(file, (all) => {
    findTarget(all, name, file);
    return all.map((x) => (x.name === name ? { ...x, landed } : x));
  });
}

function printRemoved(removed: Array<{ kind: string; name: string; namespace: string }>, t: Target): void {
  for (const r of removed) process.stdout.write(`${r.kind.toLowerCase()}/${r.name} (target ${t.name}, namespace ${r.namespace}) deleted\n`);
}

/** fly targets' table: a header, one row per target, columns padded to their widest cell. */
export function targetTable(targets: Target[]): string {
  const rows = [['name', 'context', 'namespace', 'kubeconfig', 'pod template', 'privileged', 'state']];
  for (const t of [...targets].sort((a, b) => a.name.localeCompare(b.name))) {
    rows.push([
      t.name,
      t.context,
      t.namespace,
      t.kubeconfig ?? '(default)',
      t.podTemplate ?? '-',
      t.allowPrivileged ? 'allowed' : 'no',
      t.landed ? 'landed' : 'active',
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n') + '\n';
}

async function report(body: () => Promise<unknown>): Promise<void> {
  try {
    await body();
  } catch (err) {
    process.stderr.write(`berth task target: ${(err as Error).message}\n`);
    process.exitCode = 2;
  }
}
