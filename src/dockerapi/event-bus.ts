/**
 * Two kinds of news inside berth serve: Docker events (`GET /events`, what clients see) and changes of
 * one container (what waits inside berth — start, wait, attach, AutoRemove — wake up on).
 */
import { EventEmitter } from 'node:events';

export interface DockerEvent {
  Type: string;
  Action: string;
  Actor: { ID: string; Attributes: Record<string, string> };
  scope: 'local';
  time: number;
  timeNano: number;
  status: string;
  id: string;
  from?: string;
}

/** What an event is about: a container (its image and labels go into the attributes), network or volume. */
export interface EventActor {
  id: string;
  name: string;
  image?: string;
  body?: { Labels?: Record<string, string> | null };
}

/** How many past events `GET /events?since=` can replay (dockerd keeps 256 in memory; berth a little more). */
const HISTORY = 1024;

export class EventBus {
  private readonly events = new EventEmitter();
  private readonly changes = new EventEmitter();
  private readonly recent: DockerEvent[] = [];

  constructor() {
    this.events.setMaxListeners(0);
    this.changes.setMaxListeners(0);
  }

  /** Every Docker event from now on; returns the unsubscribe function. */
  subscribe(listener: (e: DockerEvent) => void): () => void {
    this.events.on('event', listener);
    return () => this.events.off('event', listener);
  }

  emit(type: string, action: string, actor: EventActor, extra: Record<string, string> = {}): void {
    const now = Date.now();
    const attributes: Record<string, string> = { name: actor.name, ...(actor.image ? { image: actor.image } : {}), ...(actor.body?.Labels ?? {}), ...extra };
    const event: DockerEvent = {
      Type: type,
      Action: action,
      Actor: { ID: actor.id, Attributes: attributes },
      scope: 'local',
      time: Math.floor(now / 1000),
      timeNano: now * 1e6,
      status: action,
      id: actor.id,
      from: actor.image,
    };
    this.recent.push(event);
    if (this.recent.length > HISTORY) this.recent.shift();
    this.events.emit('event', event);
  }

  /** The kept events from `since` up to `until` (nanoseconds, both inclusive), oldest first: what dockerd replays. */
  history(since: bigint, until?: bigint): DockerEvent[] {
    return this.recent.filter((e) => {
      // timeNano is a whole millisecond, exact once rounded back to one
      const at = BigInt(Math.round(e.timeNano / 1e6)) * 1_000_000n;
      return at >= since && (until === undefined || at <= until);
    });
  }

  /** Container `id` changed: whoever waits in nextChange looks again. */
  changed(id: string): void {
    this.changes.emit(id);
  }

  /** Resolves at the next change of container `id` (or after `ms`). */
  nextChange(id: string, ms = 1000): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.changes.off(id, done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      this.changes.on(id, done);
    });
  }
}
