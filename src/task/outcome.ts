/**
 * How a step ended, kept apart from the exit code berth gives back: a task that exits 2 or 3 failed, as in
 * Concourse, and must not be taken for berth's own "errored" (2) or "interrupted" (3). Pure.
 */
import { EXIT_ABORTED, EXIT_ERRORED } from './exit-codes.js';

export type StepOutcome =
  /** The step did its work. */
  | { kind: 'succeeded' }
  /** The step's own failure (a task's non-zero exit, a resource script's, a task that ended without one: 1). */
  | { kind: 'failed'; code: number }
  /** berth or the cluster failed, or the step was refused: the step's result is unknown. */
  | { kind: 'errored' }
  /** Interrupted (Ctrl-C, SIGTERM) or stopped by a failing sibling (in_parallel's fail_fast). */
  | { kind: 'aborted' };

export const SUCCEEDED: StepOutcome = { kind: 'succeeded' };
export const ERRORED: StepOutcome = { kind: 'errored' };
export const ABORTED: StepOutcome = { kind: 'aborted' };

export function failed(code: number): StepOutcome {
  return { kind: 'failed', code };
}

/** The step's own exit code as an outcome: 0 succeeded, anything else failed with that code. */
export function outcomeOfCode(code: number): StepOutcome {
  return code === 0 ? SUCCEEDED : failed(code);
}

export function exitCodeOf(o: StepOutcome): number {
  switch (o.kind) {
    case 'succeeded':
      return 0;
    case 'failed':
      return o.code;
    case 'errored':
      return EXIT_ERRORED;
    case 'aborted':
      return EXIT_ABORTED;
  }
}

/** fly's word for the end of a build. */
export function outcomeWord(o: StepOutcome): 'succeeded' | 'failed' | 'errored' | 'interrupted' {
  return o.kind === 'aborted' ? 'interrupted' : o.kind;
}
