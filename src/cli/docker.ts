// `berth docker ...` and berth invoked as `docker` (a symlink made by `berth shim install DIR`).
import { chmodSync, lstatSync, mkdirSync, readlinkSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { agentIdleSeconds, defaultAgentSocket } from '../shim/agent-frames.js';
import { runAsDocker } from './docker-entry.js';

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
        if (current !== target && !o.force)
          throw new Error(`${link} already exists (${current ? `a link to ${current}` : 'not a link'}); use --force to replace it`);
        unlinkSync(link);
      }
      // the link runs berth directly (kustomize execs `docker`), so the target must be executable
      chmodSync(target, statSync(target).mode | 0o111);
      symlinkSync(target, link);
      // First on PATH only for the tools that run functions: exported, it would also shadow the real docker CLI.
      process.stdout.write(
        `${link} -> ${target}\nput it first on PATH for kustomize and kpt:  PATH=${resolve(dir)}:$PATH kubectl kustomize --enable-alpha-plugins DIR\n`,
      );
    });
  const agent = cmd
    .command('agent')
    .description('serve `docker run` for short-lived docker processes, keeping warm pods (the first `docker run` starts it; BERTH_SHIM_AGENT=0: no agent)')
    .option('--socket <path>', 'unix socket (mode 0600, in a folder only you can open)', defaultAgentSocket())
    .option('--idle <seconds>', 'exit after this long without requests [$BERTH_SHIM_AGENT_IDLE]', agentIdleSeconds())
    .option('--pool-size <n>', 'warm pods kept per run plan (0: none) [$BERTH_SHIM_POOL_SIZE]', process.env.BERTH_SHIM_POOL_SIZE ?? '2')
    .option(
      '--pool-burst <n>',
      'the most warm pods of a plan called more than --pool-size times in the last minute (a kustomization using one function many times) [$BERTH_SHIM_POOL_BURST]',
      process.env.BERTH_SHIM_POOL_BURST ?? '8',
    )
    .option('--pool-plans <n>', 'run plans kept warm at once [$BERTH_SHIM_POOL_PLANS]', process.env.BERTH_SHIM_POOL_PLANS ?? '16')
    .option(
      '--pool-idle <seconds>',
      'a warm pod not used for this long is deleted (at most --idle) [$BERTH_SHIM_POOL_IDLE]',
      process.env.BERTH_SHIM_POOL_IDLE ?? '300',
    )
    .action(async (o: { socket: string; idle: string; poolSize: string; poolBurst: string; poolPlans: string; poolIdle: string }) => {
      const idle = Number(o.idle);
      if (!(idle > 0)) throw new Error(`--idle must be a positive number of seconds, got "${o.idle}"`);
      const count = (text: string, flag: string, min: number): number => {
        const n = Number(text);
        if (!Number.isInteger(n) || n < min) throw new Error(`${flag} must be a whole number ≥ ${min}, got "${text}"`);
        return n;
      };
      const pool = {
        perPlan: count(o.poolSize, '--pool-size', 0),
        burstMax: count(o.poolBurst, '--pool-burst', 0),
        maxPlans: count(o.poolPlans, '--pool-plans', 1),
        idleSeconds: count(o.poolIdle, '--pool-idle', 1),
      };
      const { startAgent } = await import('../shim/agent.js');
      const { connect } = await import('node:net');
      // another agent already serving this socket: it answers, and this one is not needed
      const live = await new Promise<boolean>((resolve) =>
        connect(o.socket)
          .once('connect', function (this: import('node:net').Socket) {
            this.destroy();
            resolve(true);
          })
          .once('error', () => resolve(false)),
      );
      if (!live) await startAgent(o.socket, idle, pool);
      process.stdout.write(`ready ${o.socket}\n`);
    });
  // --socket is the agent command's own option (commander gives it to `agent` also when it follows the subcommand)
  const ask = (what: 'status' | 'stop') => async () => {
    const o = agent.opts<{ socket: string }>();
    const { askAgent } = await import('./shim-agent-client.js');
    const answer = await askAgent(o.socket, what);
    if (answer === undefined) {
      process.stdout.write(`no shim agent is running at ${o.socket}\n${await agentsElsewhere(o.socket, what)}`);
      // status: nothing runs (exit 1, as a service status); stop: already stopped
      if (what === 'status') process.exitCode = 1;
      return;
    }
    process.stdout.write(answer);
    if (what === 'stop') await waitGone(o.socket);
  };
  agent
    .command('status')
    .description(
      "this berth's agent (or the one at --socket), which serves every context and namespace: pid, socket, idle time, calls running, warm pods (exit 1: none runs there; your agents at other sockets are listed)",
    )
    .action(ask('status'));
  agent
    .command('stop')
    .description(
      'stop the agent (or the one at --socket) once its calls have ended; its warm pods are deleted (none there: your agents at other sockets are listed, not stopped)',
    )
    .action(ask('stop'));
  const pool = cmd.command('pool').description("the shim agent's warm pods: function pods started ahead of the call that needs them");
  const control = (what: 'pool-ls' | 'pool-drain') => async (o: { socket: string }) => {
    const { askAgent } = await import('./shim-agent-client.js');
    const answer = await askAgent(o.socket, what);
    process.stdout.write(answer ?? `no shim agent is running at ${o.socket}: no warm pods\n`);
  };
  pool
    .command('ls')
    .description('list the warm pods of the running agent')
    .option('--socket <path>', "the agent's socket", defaultAgentSocket())
    .action(control('pool-ls'));
  pool
    .command('drain')
    .description('delete every warm pod of the running agent now')
    .option('--socket <path>', "the agent's socket", defaultAgentSocket())
    .action(control('pool-drain'));
  return cmd;
}

/**
 * The running agents of this user at other sockets (another XDG_RUNTIME_DIR or TMPDIR, another copy of berth),
 * each with the command that reaches it; '' when there are none. The socket does not depend on BERTH_CONTEXT or
 * BERTH_NAMESPACE (one agent serves them all), which the first line says, as they are what a user suspects.
 */
async function agentsElsewhere(socket: string, what: 'status' | 'stop'): Promise<string> {
  const [{ agentFolders, agentSocketsBesides }, { agentPid }] = await Promise.all([import('../shim/agent-sockets.js'), import('./shim-agent-client.js')]);
  const running: string[] = [];
  for (const other of agentSocketsBesides(socket, agentFolders())) {
    const pid = await agentPid(other);
    if (pid !== undefined) running.push(`  ${other} (pid ${pid}): berth shim agent ${what} --socket ${other}`);
  }
  const head =
    socket === defaultAgentSocket()
      ? `(this berth's agent listens there, under $XDG_RUNTIME_DIR, else the temp dir; one agent serves every BERTH_CONTEXT and BERTH_NAMESPACE)\n`
      : '';
  if (!running.length) return head;
  return `${head}running agents of your user at other sockets (started from another XDG_RUNTIME_DIR or TMPDIR, or by another copy of berth):\n${running.join('\n')}\n`;
}

/** Resolves once the agent's pid file is gone (it removes it last, after its warm pods); exit 1 saying so when it is still there after 60 s. */
async function waitGone(socket: string): Promise<void> {
  const { existsSync, readFileSync } = await import('node:fs');
  const deadline = Date.now() + 60_000;
  while (existsSync(`${socket}.pid`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (!existsSync(`${socket}.pid`)) return;
  const pid = readFileSync(`${socket}.pid`, 'utf8').trim();
  process.stderr.write(
    `berth: the shim agent ${pid} is still running 60 s after it was asked to stop (a call of it has not ended): stop that call, or end the agent with kill ${pid}; berth gc removes its warm pods once their deadline has passed\n`,
  );
  process.exitCode = 1;
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
