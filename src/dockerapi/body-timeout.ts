/**
 * Time bounds of request bodies. A client that sends headers and part of a body, then stalls, must not
 * hold a handler (and the memory of what it sent) forever: JSON bodies must arrive whole within the
 * timeout, uploads (archives) must not pause for longer than it. Either is answered 408.
 */
import { Transform } from 'node:stream';
import { DockerError } from './http.js';

export const DEFAULT_BODY_TIMEOUT_MS = 60_000;

export function bodyTimeoutError(ms: number, what: string): DockerError {
  return new DockerError(408, `${what} stopped arriving: nothing came for ${Math.round(ms / 1000)} s (send the whole body, with a Content-Length that matches it)`);
}

/** Passes bytes through; fails with a 408 when none arrive for `ms` (the clock restarts with each chunk). */
export function idleTimeout(ms: number, what: string): Transform {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      arm();
      cb(null, chunk);
    },
    flush(cb) {
      clearTimeout(timer);
      cb();
    },
    destroy(err, cb) {
      clearTimeout(timer);
      cb(err);
    },
  });
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => guard.destroy(bodyTimeoutError(ms, what)), ms);
    timer.unref();
  };
  arm();
  return guard;
}
