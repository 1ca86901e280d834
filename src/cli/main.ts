#!/usr/bin/env node
// berth's command line: one entry point, a subcommand per face. Invoked as `docker` (through the link that
// `berth shim install` makes) it is the docker shim, with docker's own argv.
import { basename } from 'node:path';
import { Command } from 'commander';
import { devClusterCommand } from './dev-cluster.js';
import { dockerCommand, runAsDocker, shimCommand } from './docker.js';
import { gcCommand } from './gc.js';
import { BERTH_VERSION } from './version.js';

if (basename(process.argv[1] ?? '') === 'docker') {
  await runAsDocker(process.argv.slice(2));
} else if (process.argv[2] === 'docker') {
  await runAsDocker(process.argv.slice(3));
}

const program = new Command('berth')
  .description('run container workloads as native Kubernetes pods')
  .version(BERTH_VERSION)
  .showHelpAfterError()
  .addCommand(dockerCommand())
  .addCommand(shimCommand())
  .addCommand(gcCommand())
  .addCommand(devClusterCommand());

program.parseAsync(process.argv).catch((err: Error) => {
  process.stderr.write(`berth: ${err.message}\n`);
  process.exit(1);
});
