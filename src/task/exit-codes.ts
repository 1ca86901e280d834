/** berth task's exit codes besides a task's own (docs/task.md, "Exit codes"). */
/** The task failed without an exit code of its own (its pod hit its deadline or was evicted). */
export const EXIT_FAILED = 1;
/** berth or the cluster failed, or the config or the flags were refused. */
export const EXIT_ERRORED = 2;
/** Interrupted: Ctrl-C or SIGTERM. */
export const EXIT_ABORTED = 3;
