// podman exec relays a process's stdout and stderr through conmon, which serves its stdout pipe first whenever
// both have data: `tar cf - /nonexistent` writes its error, then the empty archive, and podman hands them over in
// the opposite order. A client that stops at the end of the archive (kubectl cp) then never sees the error that a
// real node, which copies the two streams independently, delivers first.
// Three rules put stderr first where it matters:
// - the first stdout is held a few milliseconds and then released only after pending I/O has been read (a timer
//   that fires late on a busy loop runs before the poll phase; the release is deferred past it), so stderr that
//   podman wrote right after it goes first. This part is a mitigation, not a guarantee: podman may be descheduled
//   between its two writes for longer than the hold. Only the start is held: holding every chunk stalled each
//   pipe-full of a large output (a tar of a directory) by the hold once the reader paused the pipe, capping it
//   near 12 MiB/s.
// - what is still held when stdout ends, and the end itself, wait for the end of stderr: when the process exits,
//   podman has written all of stderr before it closes stdout. A short output (`tar cf - /nonexistent` writes
//   only the archive's end) is all still held then, so all of stderr goes out before it.
// - when stderr carried bytes just before the end, stdout's held bytes and its end wait a little longer: a client
//   copies the two channels in separate goroutines, and kubectl cp exits as soon as it has read the end of the archive.
import { PassThrough, type Readable } from 'node:stream';

/** long enough for podman to write the stderr that conmon relayed just after; short next to any network hop */
const HOLD_MS = 5;
/** the head start of stderr's last bytes over stdout's end, when stderr spoke within RECENT_MS of the end */
const TAIL_HEAD_START_MS = 25;
const RECENT_MS = 250;

export function stdoutHeldForStderr(stdout: Readable, stderr: Readable): Readable {
  const out = new PassThrough();
  let pending: Buffer[] = [];
  let timer: NodeJS.Timeout | undefined;
  /** the first hold is over: later stdout goes straight through */
  let released = false;
  let stdoutEnded = false;
  let stderrSpokeAt = -Infinity;
  stderr.on('data', () => (stderrSpokeAt = performance.now()));
  const stderrEnded = new Promise<void>((resolve) => {
    if (stderr.readableEnded || stderr.destroyed) resolve();
    stderr.once('end', resolve);
    stderr.once('close', resolve);
  });
  const flush = () => {
    const chunks = pending;
    pending = [];
    for (const c of chunks) if (!out.write(c)) stdout.pause();
  };
  out.on('drain', () => stdout.resume());
  stdout.on('data', (chunk: Buffer) => {
    if (released && pending.length === 0) {
      if (!out.write(chunk)) stdout.pause();
      return;
    }
    pending.push(chunk);
    timer ??= setTimeout(() => {
      setImmediate(() => {
        timer = undefined;
        released = true;
        if (!stdoutEnded) flush();
      });
    }, HOLD_MS);
  });
  stdout.on('end', () => {
    stdoutEnded = true;
    void stderrEnded.then(() => {
      clearTimeout(timer);
      const finish = () => {
        flush();
        out.end();
      };
      if (performance.now() - stderrSpokeAt < RECENT_MS) setTimeout(finish, TAIL_HEAD_START_MS);
      else finish();
    });
  });
  stdout.on('error', (e) => out.destroy(e));
  return out;
}
