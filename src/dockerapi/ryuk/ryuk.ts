/**
 * testcontainers' Ryuk container, played by berth (the protocol is in reaper.ts): no pod, "running" at
 * once, its port 8080 a listener in berth. When it is done it removes what matched its filters and exits.
 */
import { labelsMatch } from '../filters/filters.js';
import { Reaper, isReaperImage, ryukTimeoutMs } from './reaper.js';
import type { ContainerRecord } from '../model.js';

/** The label the testcontainers/ryuk image carries, by which testcontainers finds a reaper to reuse. */
export const LABEL_RYUK = 'org.testcontainers.ryuk';

export interface RyukDeps {
  publishAddress: string;
  /** Removes every container (but `self`), network and volume whose labels match one of the filters. */
  reap(filters: string[][], self: string): Promise<void>;
  /** The reaper ended on its own (timeouts): its container exits. */
  exited(c: ContainerRecord): void;
  /** The container runs now. */
  started(c: ContainerRecord): void;
}

export class RyukContainers {
  private readonly running = new Map<string, Reaper>();

  constructor(private readonly deps: RyukDeps) {}

  /** Whether `c` is (or would be, once started) berth's own reaper. */
  isReaper(c: ContainerRecord): boolean {
    return this.running.has(c.id) || isReaperImage(c.image);
  }

  isRunning(c: ContainerRecord): boolean {
    return this.running.has(c.id);
  }

  async start(c: ContainerRecord): Promise<'started'> {
    const env = new Map((c.body.Env ?? []).map((kv) => [kv.split('=')[0], kv.slice(kv.indexOf('=') + 1)] as [string, string]));
    const binding = c.body.HostConfig?.PortBindings?.['8080/tcp']?.[0];
    const reaper = new Reaper({
      host: this.deps.publishAddress,
      port: Number(binding?.HostPort || 0),
      connectionTimeoutMs: ryukTimeoutMs('RYUK_CONNECTION_TIMEOUT', env.get('RYUK_CONNECTION_TIMEOUT'), 60_000),
      reconnectionTimeoutMs: ryukTimeoutMs('RYUK_RECONNECTION_TIMEOUT', env.get('RYUK_RECONNECTION_TIMEOUT'), 10_000),
      reap: (filters) => this.deps.reap(filters, c.id),
      onDone: () => {
        this.running.delete(c.id);
        if (c.status === 'running') this.deps.exited(c);
      },
    });
    const port = await reaper.start();
    this.running.set(c.id, reaper);
    c.generation++;
    c.status = 'running';
    c.startedAt = new Date().toISOString();
    c.finishedAt = undefined;
    c.ports = [{ key: '8080/tcp', containerPort: 8080, hostIp: this.deps.publishAddress, reportedIp: binding?.HostIp || '0.0.0.0', hostPort: port }];
    this.deps.started(c);
    return 'started';
  }

  /** Stops the reaper of `c` without reaping (stop, kill, rm, shutdown). */
  async finish(c: ContainerRecord): Promise<void> {
    await this.running.get(c.id)?.finish(false);
  }

  async finishAll(): Promise<void> {
    for (const r of [...this.running.values()]) await r.finish(false);
  }
}

/** Whether the labels match any of the reaper's filter sets. */
export function reaperMatches(filters: string[][], labels: Record<string, string>): boolean {
  return filters.some((f) => labelsMatch(f, labels));
}
