/**
 * Exec instances (`POST /containers/{id}/exec` … `GET /exec/{id}/json`). dockerd forgets an exec a while
 * after it ended (its exec store is pruned every 5 minutes of records that ended) and drops them with
 * their container; berth does the same, and bounds the count too, so a client that creates execs it
 * never starts (or never inspects) cannot grow berth without end.
 */
import { newId } from '../model.js';

export interface ExecRecord {
  id: string;
  containerId: string;
  cmd: string[];
  env: string[];
  workingDir: string;
  user: string;
  tty: boolean;
  attachStdin: boolean;
  attachStdout: boolean;
  attachStderr: boolean;
  running: boolean;
  exitCode: number | null;
  created: number;
  /** When it ended (ms); undefined while it has not. */
  endedAt?: number;
}

export interface ExecStoreOptions {
  /** An ended exec is forgotten this long after it ended (dockerd: 5 minutes). */
  keepEndedMs?: number;
  /** An exec never started is forgotten this long after its creation. */
  keepUnstartedMs?: number;
  /** At most this many records: the oldest ended (else never started) ones go first. */
  max?: number;
  now?: () => number;
}

export type ExecSpec = Omit<ExecRecord, 'id' | 'running' | 'exitCode' | 'created' | 'endedAt'>;

export class ExecStore {
  private readonly records = new Map<string, ExecRecord>();
  private readonly keepEndedMs: number;
  private readonly keepUnstartedMs: number;
  private readonly max: number;
  private readonly now: () => number;

  constructor(opts: ExecStoreOptions = {}) {
    this.keepEndedMs = opts.keepEndedMs ?? 5 * 60_000;
    this.keepUnstartedMs = opts.keepUnstartedMs ?? 60 * 60_000;
    this.max = opts.max ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.records.size;
  }

  create(spec: ExecSpec): ExecRecord {
    this.prune();
    const rec: ExecRecord = { ...spec, id: newId(), running: false, exitCode: null, created: this.now() };
    this.records.set(rec.id, rec);
    this.bound();
    return rec;
  }

  get(id: string): ExecRecord | undefined {
    this.prune();
    return this.records.get(id);
  }

  started(rec: ExecRecord): void {
    rec.running = true;
  }

  ended(rec: ExecRecord, exitCode: number): void {
    rec.exitCode = exitCode;
    rec.running = false;
    rec.endedAt = this.now();
  }

  /** The container is gone: so are its execs (dockerd deletes them with it). */
  forgetContainer(containerId: string): void {
    for (const [id, rec] of this.records) if (rec.containerId === containerId && !rec.running) this.records.delete(id);
  }

  /** Forgets what ended long enough ago, and what was never started for too long. */
  prune(): void {
    const now = this.now();
    for (const [id, rec] of this.records) {
      if (rec.endedAt !== undefined && now - rec.endedAt >= this.keepEndedMs) this.records.delete(id);
      else if (!rec.running && rec.exitCode === null && now - rec.created >= this.keepUnstartedMs) this.records.delete(id);
    }
  }

  private bound(): void {
    if (this.records.size <= this.max) return;
    const idle = [...this.records.values()]
      .filter((r) => !r.running)
      .sort((a, b) => (a.endedAt ?? Infinity) - (b.endedAt ?? Infinity) || a.created - b.created);
    for (const r of idle) {
      if (this.records.size <= this.max) break;
      this.records.delete(r.id);
    }
  }
}
