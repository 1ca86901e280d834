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
      process.stdout.write(`${link} -> ${target}\nput it first on PATH:  export PATH=${resolve(dir)}:$PATH\n`);
    });
  cmd
    .command('agent')
    .description('serve `docker run` for short-lived docker processes (BERTH_SHIM_AGENT=1 starts it on first use)')
    .option('--socket <path>', 'unix socket (mode 0600)', defaultAgentSocket())
    .option('--idle <seconds>', 'exit after this long without requests', '300')
    .action(async (o: { socket: string; idle: string }) => {
      const idle = Number(o.idle);
      if (!(idle > 0)) throw new Error(`--idle must be a positive number of seconds, got "${o.idle}"`);
      const { startAgent } = await import('../shim/agent.js');
      const { connect } = await import('node:net');
      // another agent already serving this socket: it answers, and this one is not needed
      const live = await new Promise<boolean>((resolve) => connect(o.socket).once('connect', function (this: import('node:net').Socket) {
        this.destroy();
        resolve(true);
      }).once('error', () => resolve(false)));
      if (!live) await startAgent(o.socket, idle);
      process.stdout.write(`ready ${o.socket}\n`);
    });
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
