/**
 * Archives copied into a container are kept while it exists: a restart is a new pod, which gets them again,
 * as docker keeps a container's files. Kept in memory, a suite copying a 100 MiB fixture into ten long-lived
 * containers would make berth serve hold a GiB. An archive of SPILL_BYTES or more is therefore written to a
 * private folder (mode 0700) and read back from there when needed. Its file goes with its container and the
 * folder at shutdown; a folder left by a berth serve that was killed is removed by the next one.
 */
import { createReadStream, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HeldTar } from '../../runtime/files.js';

export const SPILL_BYTES = 1024 * 1024;

/** A kept archive written to disk. */
export interface SpilledTar {
  readonly length: number;
  readonly file: string;
}

export type KeptTar = HeldTar | SpilledTar;

/** The archive's bytes in order, from memory or from its file. */
export async function* tarPieces(tar: KeptTar): AsyncGenerator<Buffer> {
  if ('pieces' in tar) {
    yield* tar.pieces;
    return;
  }
  for await (const chunk of createReadStream(tar.file, { highWaterMark: 64 * 1024 })) yield chunk as Buffer;
}

const PREFIX = 'berth-serve-';
/** a folder's name: the prefix, the pid of the berth serve that made it, mkdtemp's suffix */
const FOLDER_NAME = new RegExp(`^${PREFIX}(\\d+)-`);

export class ArchiveSpill {
  private dir: string | undefined;
  private count = 0;
  /** entries whose archive was dropped while its file was being written */
  private readonly dropped = new WeakSet<object>();

  constructor(
    private readonly root = tmpdir(),
    private readonly minBytes = SPILL_BYTES,
  ) {}

  /** Writes a large archive of `entry` to disk, then points `entry.tar` there; it stays in memory if the write fails. */
  async spill(entry: { tar: KeptTar }): Promise<void> {
    const tar = entry.tar;
    if (!('pieces' in tar) || tar.length < this.minBytes) return;
    let file: string;
    try {
      file = join(this.folder(), `${++this.count}.tar`);
      await writeFile(file, tar.pieces, { mode: 0o600 });
    } catch (err) {
      process.stderr.write(
        `berth serve: keeping a copied archive of ${tar.length} bytes in memory, as it could not be written to ${this.root}: ${(err as Error).message}\n`,
      );
      return;
    }
    if (this.dropped.has(entry)) rmSync(file, { force: true });
    else entry.tar = { length: tar.length, file };
  }

  /** The container is gone: its archives' files too. */
  drop(entries: Array<{ tar: KeptTar }>): void {
    for (const e of entries) {
      this.dropped.add(e);
      if ('file' in e.tar) rmSync(e.tar.file, { force: true });
    }
  }

  /** At shutdown: the whole folder. */
  close(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  private folder(): string {
    if (this.dir) return this.dir;
    this.removeOrphans();
    this.dir = mkdtempSync(join(this.root, `${PREFIX}${process.pid}-`));
    return this.dir;
  }

  /** Folders of berth serve processes that no longer run (killed before their shutdown). */
  private removeOrphans(): void {
    let names: string[];
    try {
      names = readdirSync(this.root);
    } catch {
      return;
    }
    for (const name of names) {
      const pid = Number(FOLDER_NAME.exec(name)?.[1]);
      if (!pid || pid === process.pid || alive(pid)) continue;
      // Another user's folder is not ours to remove, and the system says so.
      try {
        rmSync(join(this.root, name), { recursive: true, force: true });
      } catch {
        // left to its owner
      }
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
