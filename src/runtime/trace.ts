/**
 * `BERTH_TRACE=1`: one stderr line per phase of a run, with the time since the run began and since the
 * previous phase, to see where a function's overhead goes without a profiler. Off, it costs nothing.
 */
import type { Writable } from 'node:stream';

export type Trace = (phase: string) => void;

export const noTrace: Trace = () => undefined;

export function traceEnabled(env: NodeJS.ProcessEnv): boolean {
  return /^(1|true|yes|on)$/i.test(env.BERTH_TRACE ?? '');
}

/**
 * Lines look like `berth trace:   412.3 ms  (+ 25.1)  pod created`. `origin` is a performance.now()
 * value; a shim process passes 0 so the first line also shows what starting node cost.
 */
export function traceTo(out: Writable, origin = performance.now()): Trace {
  let last = origin;
  return (phase) => {
    const now = performance.now();
    out.write(`berth trace: ${(now - origin).toFixed(1).padStart(8)} ms  (+${(now - last).toFixed(1).padStart(6)})  ${phase}\n`);
    last = now;
  };
}
