// The terminal size of a `podman exec --tty` session and of an attached tty container. conmon owns each
// terminal and takes resize requests on a control fifo in its bundle directory (`ctl`, message `1 <rows> <cols>`):
// the container's StaticDir, or `<StaticDir>/<exec session id>` for an exec, which is what podman's REST API
// writes for a resize. The CLI does not name an exec's session, so it is found by its process spec: the session
// directory, not claimed by another exec, whose exec-process-* file has this command's args. Sizes asked for
// before it is found are applied once it is.
import { closeSync, constants, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const SESSION_ID = /^[0-9a-f]{64}$/;
const POLL_MS = 20;
const GIVE_UP_MS = 10_000;

/** session directories claimed by a live terminal, so two identical execs each find their own */
const claimed = new Set<string>();

export class ExecTerminal {
  private sessionDir?: string;
  private pending?: { width: number; height: number };
  private timer?: NodeJS.Timeout;
  private retry?: NodeJS.Timeout;
  private closed = false;
  private readonly known: Set<string>;

  /** `before`: the session ids the container had before this exec started */
  constructor(
    private readonly staticDir: string,
    private readonly command: string[],
    before: string[],
  ) {
    this.known = new Set(before);
    const started = Date.now();
    const poll = () => {
      if (this.closed || this.find()) return;
      if (Date.now() - started < GIVE_UP_MS) this.timer = setTimeout(poll, POLL_MS).unref();
    };
    poll();
  }

  /** the session ids of a container's exec sessions now */
  static sessions(staticDir: string): string[] {
    try {
      return readdirSync(staticDir).filter((n) => SESSION_ID.test(n));
    } catch {
      return [];
    }
  }

  resize(width: number, height: number): void {
    this.pending = { width, height };
    this.apply();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.retry);
    if (this.sessionDir) claimed.delete(this.sessionDir);
  }

  private find(): boolean {
    for (const id of ExecTerminal.sessions(this.staticDir)) {
      const dir = join(this.staticDir, id);
      if (this.known.has(id) || claimed.has(dir)) continue;
      if (!this.runs(dir)) continue;
      claimed.add(dir);
      this.sessionDir = dir;
      this.apply();
      return true;
    }
    return false;
  }

  /** whether the session in `dir` runs this command (a session whose spec is not written yet is looked at again) */
  private runs(dir: string): boolean {
    try {
      const spec = readdirSync(dir).find((n) => n.startsWith('exec-process-'));
      if (!spec) return false;
      const args = (JSON.parse(readFileSync(join(dir, spec), 'utf8')) as { args?: string[] }).args ?? [];
      return args.length === this.command.length && args.every((a, i) => a === this.command[i]);
    } catch {
      return false;
    }
  }

  private apply(): void {
    clearTimeout(this.retry);
    if (!this.sessionDir || !this.pending || this.closed) return;
    // until conmon reads the fifo (just after the session appears) the size is tried again, until the exec ends
    if (resizeConmonTerminal(this.sessionDir, this.pending.width, this.pending.height)) this.pending = undefined;
    else this.retry = setTimeout(() => this.apply(), POLL_MS).unref();
  }
}

/**
 * Asks the conmon that owns a terminal (its bundle directory: a container's StaticDir, or an exec session's
 * directory in it) to resize it; false when no conmon reads its control fifo (not yet, or no longer).
 */
export function resizeConmonTerminal(bundleDir: string, width: number, height: number): boolean {
  let fd: number | undefined;
  try {
    // non-blocking: without a reader the open fails with ENXIO instead of hanging
    fd = openSync(join(bundleDir, 'ctl'), constants.O_WRONLY | constants.O_NONBLOCK);
    writeSync(fd, `1 ${height} ${width}\n`);
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
