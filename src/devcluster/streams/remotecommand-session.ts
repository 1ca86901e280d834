// The parts of an exec/attach session's life both transports (WebSocket, SPDY) share: opening it before
// the protocol switch, and knowing when it is over.
import type { Duplex } from 'node:stream';
import { ApiError, internalError } from '../api/errors.js';
import type { ExitResult, StreamSession } from '../types.js';
import { writeStatusResponse } from './http-error.js';

/** how long output may trail the process's exit before the status is sent anyway */
export const OUTPUT_GRACE_MS = 2000;

/** the session, or undefined after answering the failure on the (not yet upgraded) socket */
export async function openSession(socket: Duplex, open: () => Promise<StreamSession>): Promise<StreamSession | undefined> {
  try {
    const session = await open();
    if (socket.destroyed) {
      session.abort(); // the client gave up while the node was starting the process
      return undefined;
    }
    return session;
  } catch (err) {
    writeStatusResponse(socket, err instanceof ApiError ? err : internalError(err instanceof Error ? err.message : String(err)));
    return undefined;
  }
}

/** the session's result once it is over and its output flushed (or OUTPUT_GRACE_MS after the exit) */
export async function sessionOutcome(session: StreamSession, outputsDone: Promise<unknown>): Promise<ExitResult> {
  const result = await session.done.catch((err: unknown): ExitResult => ({ error: err instanceof Error ? err.message : String(err) }));
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, OUTPUT_GRACE_MS);
    void outputsDone.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
  return result;
}
