/**
 * Time bounds of request bodies. A client that sends headers and part of a body, then stalls, must not
 * hold a handler (and the memory of what it sent) forever: JSON bodies must arrive whole within the
 * timeout, uploads (archives) must not pause for longer than it. Either is answered 408.
 */
import { Transform } from 'node:stream';
import { DockerError } from './docker-error.js';

export const DEFAULT_BODY_TIMEOUT_MS = 60_000;

export function bodyTimeoutError(ms: number, what: string): DockerError {
  return new DockerError(
    408,
    `${what} stopped arriving: nothing came for ${Math.round(ms / 1000)} s (send the whole body, with a Content-Length that matches it)`,
  );
}

/**
 * Passes bytes through; fails with a 408 when none arrive for `ms` while the reader waits for them. The clock
 * runs only while the reader has asked for more and nothing came: a reader that is slow itself (inflating a
 * gzip on a busy machine holds the upload back) is not the client stalling.
 */
export function idleTimeout(ms: number, what: string): Transform {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      clearTimeout(timer);
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
  // A Transform's _read is called when its reader wants more: from then on, the bytes are the client's to send.
  const read = guard._read.bind(guard);
  guard._read = (size: number): void => {
    arm();
    read(size);
  };
  arm();
  return guard;
}
