/**
 * Claiming the path of a unix socket listener. Only a stale socket (one nobody answers on) is removed:
 * a live socket belongs to another server (a second berth serve, dockerd), and anything that is not a
 * socket (a file given by mistake) is never deleted.
 */
import { lstatSync, unlinkSync } from 'node:fs';
import net from 'node:net';

export class SocketPathError extends Error {}

/** Whether something accepts connections on the socket at `path`. */
function answers(path: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(path);
    const done = (live: boolean): void => {
      clearTimeout(timer);
      probe.destroy();
      resolve(live);
    };
    // A listener that accepts but is too busy to answer within the timeout is still a listener.
    const timer = setTimeout(() => done(true), timeoutMs);
    probe.once('connect', () => done(true));
    probe.once('error', (err: NodeJS.ErrnoException) => done(err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT'));
  });
}

/** Makes `path` free for a new socket, or throws saying why it is not (and what to do). */
export async function claimSocketPath(path: string, timeoutMs = 2000): Promise<void> {
  let kind: 'socket' | 'other';
  try {
    kind = lstatSync(path).isSocket() ? 'socket' : 'other';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new SocketPathError(`unix://${path}: cannot inspect it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (kind === 'other')
    throw new SocketPathError(
      `unix://${path}: the path exists and is not a socket; berth never deletes it: remove it yourself or give another -H unix:///path`,
    );
  if (await answers(path, timeoutMs))
    throw new SocketPathError(
      `unix://${path}: another server is listening on this socket (a running berth serve or dockerd); stop it or give another -H unix:///path`,
    );
  unlinkSync(path);
}
