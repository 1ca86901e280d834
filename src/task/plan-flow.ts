/**
 * The control flow of a plan, as Concourse runs a job's plan: steps in order (the first that does not
 * succeed ends the sequence), `in_parallel` (at most `limit` at once; `fail_fast` stops starting steps and
 * aborts the running ones once one fails), `do`, and the hooks. The steps that do work (task, get, put)
 * are run by the caller (`runLeaf`). Pure of the cluster.
 *
 * Hooks: `on_success` after a step that succeeded (its outcome becomes the step's), `on_failure` after a
 * step that failed (not one that errored or was aborted), `ensure` after every step. After an interrupt,
 * Concourse still runs `ensure` hooks (an aborted build runs them): berth runs them too, with a signal of
 * their own that ends `ensureTimeoutMs` after the interrupt, so that cleanup they do is done but berth
 * never hangs on it; a second interrupt exits berth without them (cli/task.ts).
 */
import type { Step } from './plan-config.js';
import { ABORTED, SUCCEEDED, type StepOutcome } from './outcome.js';

export type LeafStep = Extract<Step, { kind: 'task' | 'get' | 'put' }>;

export interface FlowOptions {
  /** The first interrupt (Ctrl-C, SIGTERM). */
  interrupt: AbortSignal;
  /** How long the ensure hooks may run after an interrupt, in all. */
  ensureTimeoutMs: number;
  /** Runs one step that does work; it ends it (and cleans up) when `signal` aborts. */
  runLeaf(step: LeafStep, signal: AbortSignal): Promise<StepOutcome>;
}

/** Where steps run: the signal that aborts them, and the one the ensure hooks of an aborted step run under. */
interface Scope {
  signal: AbortSignal;
  afterAbort(): AbortSignal;
}

export async function runFlow(steps: Step[], o: FlowOptions): Promise<StepOutcome> {
  const ensureBound = new AbortController();
  let clock: NodeJS.Timeout | undefined;
  // The clock starts at the interrupt; a timer of its own (not AbortSignal.timeout's, which does not keep Node running) so that waiting on a hook is never cut short by an empty event loop.
  const startEnsureClock = (): AbortSignal => {
    clock ??= setTimeout(() => ensureBound.abort(), o.ensureTimeoutMs);
    return ensureBound.signal;
  };
  const onInterrupt = (): void => void startEnsureClock();
  o.interrupt.addEventListener('abort', onInterrupt, { once: true });
  try {
    return await new Flow(o.runLeaf).all(steps, { signal: o.interrupt, afterAbort: startEnsureClock });
  } finally {
    o.interrupt.removeEventListener('abort', onInterrupt);
    clearTimeout(clock);
  }
}

class Flow {
  constructor(private readonly runLeaf: FlowOptions['runLeaf']) {}

  /** Steps in order; the first that does not succeed ends the sequence with its outcome. */
  async all(steps: Step[], scope: Scope): Promise<StepOutcome> {
    for (const s of steps) {
      const o = await this.step(s, scope);
      if (o.kind !== 'succeeded') return o;
    }
    return SUCCEEDED;
  }

  private async step(s: Step, scope: Scope): Promise<StepOutcome> {
    if (scope.signal.aborted) return ABORTED;
    let o = await this.body(s, scope);
    if (o.kind === 'succeeded' && s.onSuccess) o = await this.step(s.onSuccess, scope);
    else if (o.kind === 'failed' && s.onFailure) {
      const hook = await this.step(s.onFailure, scope);
      if (hook.kind === 'aborted') o = hook;
    }
    if (s.ensure) {
      const aborted = o.kind === 'aborted' || scope.signal.aborted;
      const ensured = await this.step(s.ensure, aborted ? { signal: scope.afterAbort(), afterAbort: scope.afterAbort } : scope);
      if (o.kind === 'succeeded') o = ensured;
    }
    return o;
  }

  private body(s: Step, scope: Scope): Promise<StepOutcome> {
    if (s.kind === 'do') return this.all(s.steps, scope);
    if (s.kind === 'in_parallel') return this.parallel(s, scope);
    return this.runLeaf(s, scope.signal);
  }

  /**
   * Steps together, at most `limit` at once (all when unset), each started in order. Its outcome is the first
   * (in step order) that is not a success, leaving out the steps fail_fast aborted.
   */
  private async parallel(s: Extract<Step, { kind: 'in_parallel' }>, scope: Scope): Promise<StepOutcome> {
    const stop = new AbortController();
    const inner: Scope = s.failFast
      ? { signal: AbortSignal.any([scope.signal, stop.signal]), afterAbort: () => (scope.signal.aborted ? scope.afterAbort() : scope.signal) }
      : scope;
    const outcomes: Array<StepOutcome | undefined> = new Array(s.steps.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < s.steps.length && !inner.signal.aborted) {
        const i = next++;
        const o = await this.step(s.steps[i], inner);
        outcomes[i] = o;
        if (s.failFast && (o.kind === 'failed' || o.kind === 'errored')) stop.abort();
      }
    };
    const width = Math.min(s.limit ?? s.steps.length, s.steps.length);
    await Promise.all(Array.from({ length: width }, worker));
    if (scope.signal.aborted) return ABORTED;
    const ended = outcomes.filter((o): o is StepOutcome => o !== undefined);
    return ended.find((o) => o.kind === 'failed' || o.kind === 'errored') ?? ended.find((o) => o.kind === 'aborted') ?? SUCCEEDED;
  }
}
