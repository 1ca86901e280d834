// `berth docker ...` and berth invoked as `docker` (a symlink made by `berth shim install DIR`).
import { chmodSync, lstatSync, mkdirSync, readlinkSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { runDockerShim } from '../shim/shim.js';

/** Runs the shim with docker's own argv; docker's flag grammar is the shim's, so commander stays out of it. */
export async function runAsDocker(argv: string[]): Promise<never> {
  const code = await runDockerShim(argv, process.env, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
  // stdout may still hold the function's output: exit once it is flushed, not before.
  process.stdout.write('', () => process.exit(code));
  return new Promise<never>(() => undefined);
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
