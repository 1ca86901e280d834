// podman exec relays a process's stdout and stderr through conmon, which serves its stdout pipe first whenever
// both have data: `tar cf - /nonexistent` writes its error, then the empty archive, and podman hands them over in
// the opposite order. A client that stops at the end of the archive (kubectl cp) then never sees the error that a
// real node, which copies the two streams independently, delivers first. Holding stdout for a few milliseconds lets
// the stderr podman writes right after it go out first. This is a mitigation of conmon's ordering, not a guarantee:
// a process that writes both streams at once can still see them reordered.
import { PassThrough, type Readable } from 'node:stream';

/** long enough for podman to write the stderr that conmon relayed just after; short next to any network hop */
const HOLD_MS = 5;

export function stdoutHeldForStderr(stdout: Readable): Readable {
  const out = new PassThrough();
  let pending: Buffer[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const chunks = pending;
    pending = [];
    for (const c of chunks) if (!out.write(c)) stdout.pause();
  };
  out.on('drain', () => stdout.resume());
  stdout.on('data', (chunk: Buffer) => {
    pending.push(chunk);
    if (!scheduled) {
      scheduled = true;
      setTimeout(flush, HOLD_MS);
    }
  });
  stdout.on('end', () => setTimeout(() => out.end(), HOLD_MS));
  stdout.on('error', (e) => out.destroy(e));
  return out;
}
