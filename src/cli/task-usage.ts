// How `berth task` refuses a command line: exit 2, berth's code for an error before any task runs.
import type { Command } from 'commander';

/** A refused command line (a bad flag, a missing or unknown subcommand) exits 2; help asked for stays 0. */
const usageExit = (err: { exitCode: number }): void => {
  if (err.exitCode !== 0) process.exit(2);
};

/**
 * `command` and every subcommand below it exit 2 on a refused command line. Commander exits 1 by default,
 * which a CI script would read as a task that failed; fly shows its help and exits 0 for a missing
 * subcommand, which would pass a step that ran nothing.
 */
export function refuseUsageWithExit2(command: Command): Command {
  command.exitOverride(usageExit);
  for (const sub of command.commands) refuseUsageWithExit2(sub);
  return command;
}
