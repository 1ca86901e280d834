// `berth task`: Concourse tasks as pods, without a CI server (see docs/task.md).
import { Command, InvalidArgumentError } from 'commander';
import { EXIT_ABORTED, EXIT_ERRORED } from '../task/exit-codes.js';
import { Ledger } from '../task/ledger.js';
import { runTask } from '../task/run-task.js';
import { parseMapping, type Mapping } from '../task/layout.js';
import { runPlan } from '../task/plan-run.js';
import { targetForRun, type ClusterFlags, type TaskTarget } from '../task/targets.js';
import { targetCommand } from './task-target.js';
import { connectTask } from './task-connect.js';
import { taskCachesCommand } from './task-caches.js';
import { refuseUsageWithExit2 } from './task-usage.js';

/** `task run`'s flags for the caches it makes (caches.ts). */
interface CacheFlags {
  cacheSize?: string;
  cacheStorageClass?: string;
}
import { ARTIFACT_MODES, ARTIFACTS_ENV, artifactMode, DEFAULT_ARTIFACT_MODE } from '../task/artifacts.js';
import { taskErrorText } from '../task/error-text.js';
import { IMAGE_REGISTRY_ENV, parseImageRegistry, type ImageRegistry } from '../task/step-image.js';
import { IMAGE_SERVER_CA_ENV, IMAGE_SERVER_ENV } from '../task/step-image-pod.js';
import type { ImageCa } from '../registry/image-ca.js';
import { IMAGE_SERVER_CA_HELP, imageServerCaOf } from './image-server-ca.js';

const collect = (flag: string) => (value: string, previous: Mapping[]) => {
  try {
    return [...previous, parseMapping(value, flag)];
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
};

export function taskCommand(): Command {
  const task = new Command('task').description('run Concourse tasks (task.yml) as pods, as `fly execute` does, without a CI server');
  task.addCommand(
    new Command('run')
      .description(
        "run one task: inputs uploaded from local folders, its output streamed, outputs downloaded; exits with the task's exit code (1: failed without one, 2: berth or the cluster failed, 3: interrupted; Ctrl-C deletes the pod first, a second Ctrl-C exits at once and leaves it to its deadline and `berth gc`)",
      )
      .requiredOption('-c, --config <file>', 'the task config (task.yml)')
      .option(
        '-i, --input <name=dir>',
        'a local folder as the input NAME (repeatable); without one for it, the current folder is the input named as the folder is (run from repo/, it is the input repo), as fly does',
        collect('-i'),
        [],
      )
      .option(
        '-o, --output <name=dir>',
        'download the output NAME into a local folder (repeatable; one output twice: both folders), also when the task fails',
        collect('-o'),
        [],
      )
      .option('--include-ignored', 'upload files git ignores too (by default, in a git work tree, only tracked and untracked-not-ignored files)')
      .option('-p, --privileged', 'run privileged (refused unless the target allows it: berth task target add NAME --allow-privileged)')
      .option('--image <ref>', "run with this image instead of the task's image_resource")
      .option('--cache-size <size>', 'the size of a cache the task makes (default: $BERTH_TASK_CACHE_SIZE, 1Gi)')
      .option('--cache-storage-class <class>', "the storage class of a cache the task makes (default: $BERTH_TASK_CACHE_STORAGE_CLASS, the cluster's default)")
      .option('--kubeconfig <file>', 'kubeconfig file (default: $BERTH_KUBECONFIG, $KUBECONFIG, ~/.kube/config, in-cluster)')
      .option('--context <name>', 'kubeconfig context (default: $BERTH_CONTEXT, the current context)')
      .option('-n, --namespace <ns>', "namespace (default: $BERTH_NAMESPACE, the context's)")
      .option('--target <name>', 'run on this target (berth task target add), instead of --kubeconfig/--context/-n')
      .argument('[args...]', "after --: appended to the task's run.args")
      .action(
        async (
          args: string[],
          opts: { config: string; input: Mapping[]; output: Mapping[]; includeIgnored?: boolean; privileged?: boolean; image?: string } & CacheFlags &
            ClusterFlags,
        ) => {
          await runWithSignals(opts, (env, signal, target, ledger) =>
            runTask({
              connect: () => connectTask(env),
              configFile: opts.config,
              inputs: opts.input,
              outputs: opts.output,
              includeIgnored: Boolean(opts.includeIgnored),
              privileged: Boolean(opts.privileged),
              image: opts.image,
              target,
              args,
              env,
              cwd: process.cwd(),
              stdout: process.stdout,
              stderr: process.stderr,
              signal,
              ledger,
            }),
          );
        },
      ),
  );
  task.addCommand(
    new Command('plan')
      .description("plans of steps: a Concourse job's plan: of task, get and put steps, with the resource_types: and resources: they use")
      .addCommand(
        new Command('run')
          .description(
            "run a plan: steps in order, in_parallel together, outputs of one step as inputs of the next (pod to pod, or through berth with --artifacts), ensure/on_success/on_failure hooks; get/put run a resource type's /opt/resource/check|in|out in pods as Concourse does; stops at the first failed step with its exit code; Ctrl-C deletes the running steps' pods, then runs the ensure hooks (2 minutes at most), a second Ctrl-C exits at once",
          )
          .argument('<plan-file>', 'a YAML file with plan: (a list of steps) and, for get/put, resource_types: and resources: (or just a list of steps)')
          .option('-i, --input <name=dir>', 'a local folder as the artifact NAME (repeatable)', collect('-i'), [])
          .option('-o, --output <name=dir>', 'download the artifact NAME into a local folder once the plan ended (repeatable)', collect('-o'), [])
          .option('--image <ref>', 'run every task with this image instead of its image_resource (steps with image: ARTIFACT and resource types keep theirs)')
          .option(
            '--image-registry <registry/prefix>',
            `where a step's image: ARTIFACT is pushed (by digest, deleted when the plan ends) for its pod to pull (default: $${IMAGE_REGISTRY_ENV})`,
          )
          .option(
            '--image-server <image>',
            `instead of a registry: serve a step's image: ARTIFACT from a pod of IMAGE (the berth image, which runs \`berth image-serve\`) that the nodes pull from over HTTPS on the pod network (default: $${IMAGE_SERVER_ENV})`,
          )
          .option('--image-server-ca <dir>', `${IMAGE_SERVER_CA_HELP} (default: $${IMAGE_SERVER_CA_ENV})`)
          .option(
            '--artifacts <mode>',
            `how outputs pass to later steps: ${ARTIFACT_MODES.join(' (pod to pod) or ')} (read into berth, streamed into the next pod) (default: $${ARTIFACTS_ENV}, else ${DEFAULT_ARTIFACT_MODE})`,
          )
          .option('--kubeconfig <file>', 'kubeconfig file (default: $BERTH_KUBECONFIG, $KUBECONFIG, ~/.kube/config, in-cluster)')
          .option('--context <name>', 'kubeconfig context (default: $BERTH_CONTEXT, the current context)')
          .option('-n, --namespace <ns>', "namespace (default: $BERTH_NAMESPACE, the context's)")
          .option('--target <name>', 'run every step on this target (berth task target add), instead of --kubeconfig/--context/-n')
          .action(
            async (
              planFile: string,
              opts: {
                input: Mapping[];
                output: Mapping[];
                image?: string;
                imageRegistry?: string;
                imageServer?: string;
                imageServerCa?: string;
                artifacts?: string;
              } & ClusterFlags,
            ) => {
              await runWithSignals(opts, (env, signal, target, ledger) =>
                runPlan({
                  connect: () => connectTask(env),
                  planFile,
                  inputs: opts.input,
                  outputs: opts.output,
                  image: opts.image,
                  ...stepImageSourceOf(opts, env),
                  target,
                  artifacts: artifactMode(opts.artifacts, env),
                  env,
                  cwd: process.cwd(),
                  stdout: process.stdout,
                  stderr: process.stderr,
                  signal,
                  ledger,
                }),
              );
            },
          ),
      ),
  );
  task.addCommand(targetCommand());
  task.addCommand(taskCachesCommand());
  return refuseUsageWithExit2(task);
}

/** A repeat of the first signal within this long is the same interrupt delivered twice. */
const REPEAT_WINDOW_MS = 1000;

/**
 * The cluster flags or the target, and the cache flags, as BERTH_* settings; exits with the code. The first
 * Ctrl-C or SIGTERM aborts: what was created is deleted (a plan's ensure hooks run) before berth exits. A
 * second one exits at once, as fly does, naming what is left: its deadline and `berth gc` remove it.
 */
async function runWithSignals(
  opts: ClusterFlags & CacheFlags,
  body: (env: NodeJS.ProcessEnv, signal: AbortSignal, target: TaskTarget, ledger: Ledger) => Promise<number>,
): Promise<never> {
  const abort = new AbortController();
  const ledger = new Ledger();
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!first) {
      // fly's words; a second signal ends the wait.
      first = { signal, at: Date.now() };
      process.stderr.write('aborting...\n');
      abort.abort();
      return;
    }
    // One Ctrl-C under `npm run` arrives twice (the terminal's and npm's forwarded copy): not a second interrupt.
    if (signal === first.signal && Date.now() - first.at < REPEAT_WINDOW_MS) return;
    const left = ledger.describe();
    process.stderr.write(
      `berth task: interrupted again: exiting immediately; ${left ? `left ${left}: each expires by its deadline (BERTH_TTL) and \`berth gc\` removes it` : 'nothing this run created is left'}\n`,
    );
    process.exit(EXIT_ABORTED);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let code = EXIT_ERRORED;
  try {
    const { env, target } = targetForRun(opts, process.env);
    if (opts.cacheSize) env.BERTH_TASK_CACHE_SIZE = opts.cacheSize;
    if (opts.cacheStorageClass) env.BERTH_TASK_CACHE_STORAGE_CLASS = opts.cacheStorageClass;
    code = await body(env, abort.signal, target, ledger);
  } catch (err) {
    process.stderr.write(`berth task: ${taskErrorText(err)}\nerrored\n`);
  }
  // Everything written is flushed before the code is given back.
  await new Promise<void>((r) => process.stdout.write('', () => r()));
  process.exit(code);
}

/**
 * `--image-registry` or `--image-server`; without either flag, $BERTH_TASK_IMAGE_REGISTRY or $BERTH_TASK_IMAGE_SERVER (a
 * flag wins over both variables); none when nothing is given. Both of a kind are refused by runPlan.
 */
function stepImageSourceOf(
  flags: { imageRegistry?: string; imageServer?: string; imageServerCa?: string },
  env: NodeJS.ProcessEnv,
): { imageRegistry?: ImageRegistry; imageServer?: string; imageServerCa?: ImageCa } {
  const fromFlags = flags.imageRegistry !== undefined || flags.imageServer !== undefined;
  const registry = fromFlags ? flags.imageRegistry : env[IMAGE_REGISTRY_ENV]?.trim() || undefined;
  const server = fromFlags ? flags.imageServer : env[IMAGE_SERVER_ENV]?.trim() || undefined;
  const source = flags.imageRegistry !== undefined ? '--image-registry' : `$${IMAGE_REGISTRY_ENV}`;
  const ca = imageServerCaOf(flags, env, server, IMAGE_SERVER_CA_ENV);
  return {
    ...(registry ? { imageRegistry: parseImageRegistry(registry, source) } : {}),
    ...(server ? { imageServer: server } : {}),
    ...(ca ? { imageServerCa: ca } : {}),
  };
}
