// A running container's log rotated as a kubelet's container log manager rotates it: every
// containerLogMonitorInterval it looks at the file's size, and a file of containerLogMaxSize or more is
// renamed to `<file>.<YYYYMMDD-HHMMSS>` and a new one begun; the newest containerLogMaxFiles - 1 rotated
// files are kept (the kubelet also compresses the older ones; nobody reads them here). `pods/log` serves
// only the current file, as the kubelet does. Rotation is looked at as output is written rather than by a
// timer: a container that writes nothing has nothing to rotate.
import { readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Faults } from '../types.js';

export type RotationSettings = Pick<Faults, 'containerLogMaxBytes' | 'containerLogCheckMs'>;

/** the kubelet's containerLogMaxFiles default: the current file and four rotated ones */
const MAX_FILES = 5;

export class LogRotation {
  private lastCheck = Date.now();
  private size: number;

  constructor(
    private readonly file: string,
    private readonly settings: RotationSettings,
  ) {
    this.size = sizeOf(file);
  }

  /** `written` more bytes went to the file: true when the file is due to be rotated now */
  due(written: number): boolean {
    this.size += written;
    const max = this.settings.containerLogMaxBytes;
    if (max <= 0 || Date.now() - this.lastCheck < this.settings.containerLogCheckMs) return false;
    this.lastCheck = Date.now();
    return this.size >= max;
  }

  /** renames the (closed) file aside and drops the oldest rotated files beyond the kubelet's count */
  rotate(): void {
    renameSync(this.file, this.freeName());
    this.size = 0;
    const dir = dirname(this.file);
    const prefix = `${basename(this.file)}.`;
    const rotated = readdirSync(dir)
      .filter((n) => n.startsWith(prefix))
      .sort();
    for (const old of rotated.slice(0, Math.max(0, rotated.length - (MAX_FILES - 1)))) rmSync(join(dir, old), { force: true });
  }

  /**
   * `<file>.<YYYYMMDD-HHMMSS>`, and when the same second already rotated it, a count after it above every count of
   * that second's files: the names sort as the files were rotated, so the oldest are the ones dropped.
   */
  private freeName(): string {
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    const base = `${basename(this.file)}.${stamp}`;
    const counts = readdirSync(dirname(this.file))
      .filter((n) => n === base || n.startsWith(`${base}-`))
      .map((n) => (n === base ? 0 : Number(n.slice(base.length + 1))));
    if (counts.length === 0) return `${this.file}.${stamp}`;
    return `${this.file}.${stamp}-${String(Math.max(...counts) + 1).padStart(6, '0')}`;
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
