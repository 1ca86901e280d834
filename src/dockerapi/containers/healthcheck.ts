/**
 * HEALTHCHECK run by berth through exec, as dockerd runs it: interval, timeout, retries, start period
 * (0 means docker's default: 30 s, 30 s, 3). Never healthy merely because the container runs.
 */
import type { ContainerRecord } from '../model.js';

export interface HealthcheckDeps {
  exec(c: ContainerRecord, argv: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  changed(c: ContainerRecord): void;
  /** the status went from one value to another (dockerd's `health_status: healthy` event) */
  statusChanged(c: ContainerRecord, status: 'healthy' | 'unhealthy'): void;
}

/** Whether the container's config asks for a healthcheck. */
export function wantsHealthcheck(c: ContainerRecord): boolean {
  const test = c.body.Healthcheck?.Test;
  return Boolean(test?.length) && test![0] !== 'NONE';
}

/** Probes `c` while it runs as this generation (a restart starts a new series). */
export function runHealthcheck(c: ContainerRecord, generation: number, deps: HealthcheckDeps): void {
  const hc = c.body.Healthcheck!;
  const test = hc.Test!;
  const argv = test[0] === 'CMD-SHELL' ? ['/bin/sh', '-c', test.slice(1).join(' ')] : test[0] === 'CMD' ? test.slice(1) : test;
  // 0 means the default, as on dockerd (image configs carry zeros for flags HEALTHCHECK was not given).
  const interval = Math.max(100, (hc.Interval || 30e9) / 1e6);
  const timeout = Math.max(100, (hc.Timeout || 30e9) / 1e6);
  const retries = hc.Retries || 3;
  const startPeriod = (hc.StartPeriod ?? 0) / 1e6;
  const began = Date.now();
  c.health = { status: 'starting', failingStreak: 0, log: [] };
  const probe = async (): Promise<{ exitCode: number; output: string }> => {
    try {
      const r = await Promise.race([deps.exec(c, argv), new Promise<never>((_r, rej) => setTimeout(() => rej(new Error('timed out')), timeout).unref())]);
      return { exitCode: r.exitCode, output: r.stdout + r.stderr };
    } catch (err) {
      return { exitCode: 1, output: (err as Error).message };
    }
  };
  const tick = async (): Promise<void> => {
    if (c.status !== 'running' || c.generation !== generation || !c.health) return;
    const start = new Date();
    const { exitCode, output } = await probe();
    if (c.generation !== generation || !c.health) return;
    c.health.log = [...c.health.log, { Start: start.toISOString(), End: new Date().toISOString(), ExitCode: exitCode, Output: output }].slice(-5);
    const before = c.health.status;
    if (exitCode === 0) {
      c.health.status = 'healthy';
      c.health.failingStreak = 0;
    } else if (Date.now() - began >= startPeriod) {
      c.health.failingStreak++;
      if (c.health.failingStreak >= retries) c.health.status = 'unhealthy';
    }
    deps.changed(c);
    if (c.health.status !== before && c.health.status !== 'starting') deps.statusChanged(c, c.health.status);
    setTimeout(() => void tick(), interval).unref();
  };
  setTimeout(() => void tick(), Math.min(interval, 1000)).unref();
}
