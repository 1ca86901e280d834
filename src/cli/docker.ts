// `berth docker ...` and berth invoked as `docker` (a symlink made by `berth shim install DIR`).
import { chmodSync, lstatSync, mkdirSync, readlinkSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { agentEnabled, defaultAgentSocket } from '../shim/agent-frames.js';
import { parseDockerArgv } from '../shim/argv.js';
import { runDockerShim } from '../shim/shim.js';

/** Runs the shim with docker's own argv; docker's flag grammar is the shim's, so commander stays out of it. */
export async function runAsDocker(argv: string[]): Promise<never> {
  const code = (await throughAgent(argv)) ?? (await runDockerShim(argv, process.env, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }));
  // stdout may still hold the function's output: exit once it is flushed, not before.
  process.stdout.write('', () => process.exit(code));
  return new Promise<never>(() => undefined);
}

/** `docker run` goes to the shim agent when it is enabled; everything else is answered here */
async function throughAgent(argv: string[]): Promise<number | undefined> {
  if (argv[0] !== 'run' || !agentEnabled()) return undefined;
  let command;
  try {
    command = parseDockerArgv(argv, process.env, process.cwd());
  } catch {
    return undefined; // the in-process shim reports the usage error
  }
  if (command.kind !== 'run') return undefined;
  const { runThroughAgent } = await import('./shim-agent-client.js');
  return runThroughAgent(argv, defaultAgentSocket(), command.workload.stdin === true);
}

export function shimCommand(): Command {
  const cmd = new Command('shim').description('the docker shim that kustomize and kpt call to run functions as pods');
  cmd
    .command('install')
    .description('make DIR/docker a link to berth; put DIR first on PATH so kustomize and kpt call berth as docker')
    .argument('<dir>', 'directory for the docker link (created if missing)')
    .option('--force', 'replace an existing DIR/docker')
    .action((dir: string, o: { force?: boolean }) => {
      const target = fileURLToPath(new URL('./main.js', import.meta.url));
      const link = join(resolve(dir), 'docker');
      mkdirSync(resolve(dir), { recursive: true });
      let exists = false;
      try {
        lstatSync(link);
        exists = true;
      } catch {
        /* no such file: nothing to replace */
      }
      if (exists) {
        let current = '';
        try {
          current = readlinkSync(link);
        } catch {
          /* a regular file */
        }
        if (current !== target && !o.force) throw new Error(`${link} already exists (${current ? `a link to ${current}` : 'not a link'}); use --force to replace it`);
        unlinkSync(link);
      }
      // the link runs berth directly (kustomize execs `docker`), so the target must be executable
      chmodSync(target, statSync(target).mode | 0o111);
      symlinkSync(target, link);
      // First on PATH only for the tools that run functions: exported, it would also shadow the real docker CLI.
      process.stdout.write(`${link} -> ${target}\nput it first on PATH for kustomize and kpt:  PATH=${resolve(dir)}:$PATH kubectl kustomize --enable-alpha-plugins DIR\n`);
    });
  cmd
    .command('agent')
    .description('serve `docker run` for short-lived docker processes (BERTH_SHIM_AGENT=1 starts it on first use), keeping warm pods')
    .option('--socket <path>', 'unix socket (mode 0600)', defaultAgentSocket())
    .option('--idle <seconds>', 'exit after this long without requests', '300')
    .option('--pool-size <n>', 'warm pods kept per run plan (0: none) [$BERTH_SHIM_POOL_SIZE]', process.env.BERTH_SHIM_POOL_SIZE ?? '2')
    .option('--pool-plans <n>', 'run plans kept warm at once [$BERTH_SHIM_POOL_PLANS]', process.env.BERTH_SHIM_POOL_PLANS ?? '16')
    .option('--pool-idle <seconds>', 'a warm pod not used for this long is deleted (at most --idle) [$BERTH_SHIM_POOL_IDLE]', process.env.BERTH_SHIM_POOL_IDLE ?? '300')
    .action(async (o: { socket: string; idle: string; poolSize: string; poolPlans: string; poolIdle: string }) => {
      const idle = Number(o.idle);
      if (!(idle > 0)) throw new Error(`--idle must be a positive number of seconds, got "${o.idle}"`);
      const count = (text: string, flag: string, min: number): number => {
        const n = Number(text);
        if (!Number.isInteger(n) || n < min) throw new Error(`${flag} must be a whole number ≥ ${min}, got "${text}"`);
        return n;
      };
      const pool = { perPlan: count(o.poolSize, '--pool-size', 0), maxPlans: count(o.poolPlans, '--pool-plans', 1), idleSeconds: count(o.poolIdle, '--pool-idle', 1) };
      const { startAgent } = await import('../shim/agent.js');
      const { connect } = await import('node:net');
      // another agent already serving this socket: it answers, and this one is not needed
      const live = await new Promise<boolean>((resolve) => connect(o.socket).once('connect', function (this: import('node:net').Socket) {
        this.destroy();
        resolve(true);
      }).once('error', () => resolve(false)));
      if (!live) await startAgent(o.socket, idle, pool);
      process.stdout.write(`ready ${o.socket}\n`);
    });
  const pool = cmd.command('pool').description("the shim agent's warm pods: function pods started ahead of the call that needs them");
  const control = (what: 'pool-ls' | 'pool-drain') => async (o: { socket: string }) => {
    const { askAgent } = await import('./shim-agent-client.js');
    const answer = await askAgent(o.socket, what);
    process.stdout.write(answer ?? `no shim agent is running at ${o.socket}: no warm pods\n`);
  };
  pool.command('ls').description('list the warm pods of the running agent').option('--socket <path>', 'the agent\'s socket', defaultAgentSocket()).action(control('pool-ls'));
  pool.command('drain').description('delete every warm pod of the running agent now').option('--socket <path>', 'the agent\'s socket', defaultAgentSocket()).action(control('pool-drain'));
  return cmd;
}

export function dockerCommand(): Command {
  return new Command('docker')
    .description('act as the docker CLI (run, version, info, image inspect|pull|ls): containers run as pods')
    .helpOption(false)
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .argument('[args...]', 'docker arguments')
    .action(async () => {
      const argv = process.argv.slice(process.argv.indexOf('docker') + 1);
      await runAsDocker(argv);
    });
}
