// `berth task caches ls|rm`: the task caches (PersistentVolumeClaims) berth keeps on the current target.
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { ClusterClient } from '../kube/client.js';
import { listCaches, removeCaches, type CacheEntry } from '../task/cache-claims.js';
import { findTarget, readTargets, targetsFile } from '../task/target-store.js';
import { connectTarget } from '../task/targets.js';
import { connectTask } from './task-connect.js';

interface ClusterFlags {
  target?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

const clusterFlags = (c: Command): Command =>
  c
    .option('--kubeconfig <file>', 'kubeconfig file (default: $BERTH_KUBECONFIG, $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context, the target whose caches these are (default: $BERTH_CONTEXT, the current context)')
    .option('-n, --namespace <ns>', "namespace (default: $BERTH_NAMESPACE, the context's)")
    .option('--target <name>', 'the caches of this target (berth task target add), instead of --kubeconfig/--context/-n');

export function taskCachesCommand(): Command {
  const caches = new Command('caches').description("the tasks' caches (caches: in task.yml) kept on the target as PersistentVolumeClaims");
  caches.addCommand(
    clusterFlags(
      new Command('ls')
        .description('list the caches of the target: task, cache path, claim, size, last use')
        .option('--task <file>', 'only the caches of this task file (or PLAN#STEP for a plan step)')
        .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json']).default('table')),
    ).action(async (o: ClusterFlags & { task?: string; output: string }) =>
      withErrors(async () => {
        const { kube, target } = await connect(o);
        const entries = await listCaches(kube, target, o.task === undefined ? undefined : await taskIdentity(o.task));
        process.stdout.write(o.output === 'json' ? `${JSON.stringify(entries, null, 2)}\n` : table(entries, new Date()));
      }),
    ),
  );
  caches.addCommand(
    clusterFlags(
      new Command('rm')
        .description('delete caches (the next run of their task starts with an empty cache); refuses, deleting nothing, while a pod still uses one')
        .option('--task <file>', 'the caches of this task file (or PLAN#STEP for a plan step)')
        .option('--path <path>', 'the caches of this cache path')
        .option('--all', 'every cache of the target'),
    ).action(async (o: ClusterFlags & { task?: string; path?: string; all?: boolean }) =>
      withErrors(async () => {
        if (!o.all && o.task === undefined && o.path === undefined)
          throw new Error("say which caches to delete: --task FILE, --path PATH (both: that task's cache at that path), or --all");
        if (o.all && (o.task !== undefined || o.path !== undefined))
          throw new Error('--all deletes every cache of the target: give it alone, or --task/--path without it');
        const { kube, target } = await connect(o);
        const removed = await removeCaches(kube, target, { task: o.task === undefined ? undefined : await taskIdentity(o.task), path: o.path });
        for (const e of removed) process.stdout.write(`deleted cache ${e.path} of ${e.task} (claim ${e.claim})\n`);
      }),
    ),
  );
  return caches;
}

async function connect(o: ClusterFlags): Promise<{ kube: ClusterClient; target: string }> {
  if (o.target !== undefined) {
    const mixed = (['kubeconfig', 'context', 'namespace'] as const).filter((k) => o[k] !== undefined);
    if (mixed.length)
      throw new Error(`--target ${o.target} says where the caches are: drop ${mixed.map((k) => (k === 'namespace' ? '-n' : `--${k}`)).join(', ')}`);
    // A landed target's caches can still be listed and deleted.
    const file = targetsFile(process.env);
    const t = findTarget(readTargets(file), o.target, file);
    const resolved = connectTarget(t, process.env);
    return { kube: new ClusterClient(resolved.kc, resolved.namespace), target: t.name };
  }
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (o.kubeconfig) env.BERTH_KUBECONFIG = o.kubeconfig;
  if (o.context) env.BERTH_CONTEXT = o.context;
  if (o.namespace) env.BERTH_NAMESPACE = o.namespace;
  const { cluster, context } = await connectTask(env);
  return { kube: cluster, target: context };
}

/** The identity `berth task run -c FILE` gives its caches (its real path), or a plan step's PLAN#STEP. */
async function taskIdentity(text: string): Promise<string> {
  const hash = text.lastIndexOf('#');
  const [file, step] = hash > 0 ? [text.slice(0, hash), text.slice(hash)] : [text, ''];
  // A plan step's identity takes the plan's absolute path as written; a task file's, its real path (it may be gone: then as written).
  if (step) return `${resolve(file)}${step}`;
  return realpath(file).catch(() => resolve(file));
}

async function withErrors(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    process.stderr.write(`berth task caches: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}

function table(entries: CacheEntry[], now: Date): string {
  const rows = [
    ['TASK', 'PATH', 'CLAIM', 'SIZE', 'LAST USED'],
    ...entries.map((e) => [e.task, e.path, e.claim, e.size, e.lastUsed ? ago(now.getTime() - Date.parse(e.lastUsed)) : '<unknown>']),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] + 3))).join('')).join('\n') + '\n';
}

/** kubectl's age style: 45s, 12m, 5h, 3d. */
function ago(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const text = s < 120 ? `${s}s` : s < 7200 ? `${Math.floor(s / 60)}m` : s < 172800 ? `${Math.floor(s / 3600)}h` : `${Math.floor(s / 86400)}d`;
  return `${text} ago`;
}
