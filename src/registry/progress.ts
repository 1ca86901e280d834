/**
 * A progress line for large downloads and uploads: on a terminal (stderr is a TTY) one line, rewritten
 * in place, `LABEL 12.0 MiB / 48.3 MiB`; nothing at all when stderr is a file or a pipe (CI logs), and
 * nothing for bodies under 1 MiB, which finish before a line would help.
 */
import type { WriteStream } from 'node:tty';

export const PROGRESS_THRESHOLD = 1024 * 1024;
/** At most this often: a terminal redrawn per chunk slows the download down. */
const REDRAW_MS = 100;

type ProgressStream = Pick<WriteStream, 'write'> & { isTTY?: boolean };

export interface Progress {
  /** For fetchUrl's onProgress. */
  update(received: number, total: number | undefined): void;
  /** Clears the line (success or failure alike). */
  done(): void;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}

/** A progress line for `label` on `stream` (default stderr); a no-op unless the stream is a terminal. */
export function terminalProgress(label: string, stream: ProgressStream = process.stderr, now: () => number = Date.now): Progress {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  let shown = false;
  let last = 0;
  return {
    update(received, total) {
      if (Math.max(received, total ?? 0) < PROGRESS_THRESHOLD) return;
      const t = now();
      if (shown && t - last < REDRAW_MS && received !== total) return;
      last = t;
      shown = true;
      stream.write(`\r\x1b[2K${label} ${formatBytes(received)}${total !== undefined ? ` / ${formatBytes(total)}` : ''}`);
    },
    done() {
      if (shown) stream.write('\r\x1b[2K');
      shown = false;
    },
  };
}

/** Runs `work` with a progress line, cleared however it ends. */
export async function withProgress<T>(label: string, work: (onProgress: Progress['update']) => Promise<T>, stream?: ProgressStream): Promise<T> {
  const progress = terminalProgress(label, stream);
  try {
    return await work((r, t) => progress.update(r, t));
  } finally {
    progress.done();
  }
}
