// conmon writes a container's exit code into `<podman tmp dir>/exits/<container id>` as soon as it has reaped
// the container's process. `podman run` learns of the exit only at its next status poll (libpod waits in steps
// of 250 ms) and then cleans up before it ends: 0.3 s or more after the process is gone. A kubelet on CRI-O
// watches conmon's exit files; the node does the same, so a pod's container is reported terminated when it ended.
import { existsSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

/** Where podman's conmon leaves exit files: its default tmp dir, rootful or rootless; undefined when absent. */
export function podmanExitsDir(env: NodeJS.ProcessEnv = process.env, uid = process.getuid?.() ?? 0): string | undefined {
  const tmp = uid === 0 ? '/run/libpod' : env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, 'libpod/tmp') : undefined;
  const dir = tmp && join(tmp, 'exits');
  return dir && existsSync(dir) ? dir : undefined;
}

/**
 * One watch of the exits directory for the whole node. A container whose file is never seen (podman removed
 * it first, another tmp dir is configured, the watch overflowed) is simply not told early: its `podman run`
 * still ends, as before.
 */
export class ExitFiles {
  private readonly waiting = new Map<string, (code: number) => void>();
  private readonly watcher?: FSWatcher;

  constructor(private readonly dir: string | undefined) {
    if (!dir) return;
    try {
      this.watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name) this.look(name.toString());
      });
      this.watcher.on('error', () => this.watcher?.close());
    } catch {
      this.watcher = undefined;
    }
  }

  /** Calls `onExit` once with the exit code conmon wrote for container `id`; the returned function stops waiting. */
  onExit(id: string, onExit: (code: number) => void): () => void {
    if (!this.watcher) return () => undefined;
    this.waiting.set(id, onExit);
    // the file may have been written before the id was known
    this.look(id);
    return () => this.waiting.delete(id);
  }

  close(): void {
    this.watcher?.close();
    this.waiting.clear();
  }

  private look(id: string): void {
    const onExit = this.waiting.get(id);
    if (!onExit || !this.dir) return;
    let text: string;
    try {
      text = readFileSync(join(this.dir, id), 'utf8').trim();
    } catch {
      return; // not there yet, or podman read and removed it first
    }
    const code = Number(text);
    if (text === '' || !Number.isInteger(code)) return;
    this.waiting.delete(id);
    onExit(code);
  }
}
