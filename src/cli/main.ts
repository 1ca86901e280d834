#!/usr/bin/env node
// berth's command line: one entry point, a subcommand per face.
import { Command } from 'commander';
import { devClusterCommand } from './dev-cluster.js';
import { BERTH_VERSION } from './version.js';

const program = new Command('berth')
  .description('run container workloads as native Kubernetes pods')
  .version(BERTH_VERSION)
  .showHelpAfterError()
  .addCommand(devClusterCommand());

program.parseAsync(process.argv).catch((err: Error) => {
  process.stderr.write(`berth: ${err.message}\n`);
  process.exit(1);
});
