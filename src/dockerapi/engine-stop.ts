/**
 * A running container stopped (its stop signal, then its pod's deadline) or killed, and the waits of
 * `docker wait` on its exit or its removal.
 */
import { DockerError, conflict } from './http/http.js';
import type { ContainerRecord } from './model.js';
import { READERS_GRACE_MS, type EngineState, type ExecCollect, type ExitState } from './engine-state.js';

export type WaitResult = { StatusCode: number; Error: { Message: string } | null };

export class StopPath {
  constructor(
    private readonly s: EngineState,
    private readonly deps: { execCollect: ExecCollect; setExited(c: ContainerRecord, s: ExitState): void },
  ) {}

  async stop(ref: string, timeoutSeconds: number | undefined, signal?: string): Promise<'stopped' | 'already'> {
    const c = this.s.container(ref);
    if (c.status === 'running' && this.s.ryuk.isRunning(c)) {
      await this.s.ryuk.finish(c);
      return 'stopped';
    }
    if (c.status !== 'running' || !c.podName) return 'already';
    // dockerd's order: the stop's own timeout and signal, then the container's (--stop-timeout, --stop-signal or the image's STOPSIGNAL)
    const t = timeoutSeconds ?? c.body.StopTimeout ?? 10;
    if (t > 0) {
      const sig = (signal ?? c.body.StopSignal ?? 'TERM').replace(/^SIG/, '');
      const sent = await this.deps.execCollect(c, ['kill', `-${sig}`, '1']).then(
        (r) => r.exitCode === 0,
        () => false,
      );
      // Not sent (an image without `kill`, a failed exec): only the kubelet can signal the process, when the pod ends
      // (SIGTERM, then SIGKILL after the pod's grace period); waiting the timeout first would only delay that.
      const until = Date.now() + t * 1000;
      while (sent && c.status === 'running' && Date.now() < until) await this.s.nextChange(c, until - Date.now());
    }
    if (c.status === 'running') await this.killPod(c);
    this.s.emit('container', 'stop', c);
    return 'stopped';
  }

  /** Ends the pod through its deadline: the kubelet stops it and the object stays (logs, state). */
  private async killPod(c: ContainerRecord): Promise<void> {
    const podName = c.podName as string;
    const pod = await this.s.cluster.readPod(podName);
    const started = pod.status?.startTime ? new Date(pod.status.startTime).getTime() : Date.now();
    await this.s.cluster.expirePod(podName, Math.ceil((Date.now() - started) / 1000));
    const until = Date.now() + 30_000;
    while (c.status === 'running' && c.podName === podName && Date.now() < until) await this.s.nextChange(c, until - Date.now());
    if (c.status === 'running') this.deps.setExited(c, { exitCode: 137 });
  }

  async kill(ref: string, signal: string): Promise<void> {
    const c = this.s.container(ref);
    if (c.status !== 'running') throw conflict(`Cannot kill container: ${ref}: Container ${c.id} is not running`);
    if (this.s.ryuk.isRunning(c)) return void (await this.s.ryuk.finish(c));
    const sig = signal.replace(/^SIG/, '').toUpperCase() || 'KILL';
    this.s.emit('container', 'kill', c, { signal: sig });
    if (sig === 'KILL' || sig === '9') await this.killPod(c);
    else {
      const r = await this.deps.execCollect(c, ['kill', `-${sig}`, '1']);
      if (r.exitCode !== 0)
        throw new DockerError(
          500,
          `cannot send ${sig} to container ${c.name}: ${r.stderr.trim() || `kill exited ${r.exitCode}`} (the image needs a kill command)`,
        );
    }
  }

  /** Waits per Docker's conditions; resolves with the exit state. */
  async wait(c: ContainerRecord, condition: string, signal: AbortSignal): Promise<WaitResult> {
    // An error in the answer makes the docker CLI exit 125: a run whose output was cut, or whose
    // removal failed, never looks like a success.
    const result = (): WaitResult => {
      const errors = [c.error, c.outputError].filter(Boolean);
      return { StatusCode: c.exitCode, Error: errors.length ? { Message: errors.join('; ') } : null };
    };
    if (condition === 'removed') {
      const failures = c.removalFailures ?? 0;
      while (this.s.containers.get(c.id) === c && !signal.aborted && (c.removalFailures ?? 0) === failures) await this.s.nextChange(c, 60_000);
      if (this.s.containers.get(c.id) === c && c.removalError) return { StatusCode: c.exitCode, Error: { Message: c.removalError } };
      return result();
    }
    if (condition === 'next-exit') {
      const startGen = c.generation;
      const wasExited = c.status === 'exited';
      while (!signal.aborted && this.s.containers.get(c.id) === c && (c.status !== 'exited' || (wasExited && c.generation === startGen)))
        await this.s.nextChange(c, 60_000);
    } else {
      while (!signal.aborted && (c.status === 'running' || (c.status === 'created' && c.podName))) await this.s.nextChange(c, 60_000);
    }
    // The exit is answered once attached clients have the output (or were cut: then with the error).
    const until = Date.now() + READERS_GRACE_MS;
    while (!signal.aborted && c.status === 'exited' && c.readers > 0 && Date.now() < until) await this.s.nextChange(c, until - Date.now());
    return result();
  }
}
