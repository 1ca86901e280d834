// Waits until the machine is quiet before a timed measure. The engines take turns, and work one of them
// leaves running after its call returned (a removal the dev cluster finishes in the background, podman's
// cleanup of an ended container) would otherwise be timed as part of the other's next measure.
import { cpus } from 'node:os';

export interface Settled {
  /** how long the wait took */
  waitedMs: number;
  /** the share of CPU time that was idle in the last window */
  idle: number;
  /** whether that share reached the one asked for (else the wait timed out) */
  settled: boolean;
}

/** Idle share of all cores between two readings of their counters. */
function idleShare(before: ReturnType<typeof cpus>, after: ReturnType<typeof cpus>): number {
  let idle = 0;
  let total = 0;
  after.forEach((cpu, i) => {
    const was = before[i]!.times;
    const now = cpu.times;
    idle += now.idle - was.idle;
    total += now.user - was.user + (now.nice - was.nice) + (now.sys - was.sys) + (now.irq - was.irq) + (now.idle - was.idle);
  });
  return total > 0 ? idle / total : 1;
}

/** Resolves once a window of `windowMs` had at least `minIdle` of the CPU idle, or after `maxMs` (then as it is). */
export async function settle({ minIdle = 0.85, windowMs = 300, maxMs = 10_000 } = {}): Promise<Settled> {
  const start = performance.now();
  for (;;) {
    const before = cpus();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const idle = idleShare(before, cpus());
    const waitedMs = performance.now() - start;
    if (idle >= minIdle || waitedMs >= maxMs) return { waitedMs, idle, settled: idle >= minIdle };
  }
}
