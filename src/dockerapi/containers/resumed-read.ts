/**
 * One read out of a container (GET archive's tar), continued across runs of the same command when its stream was
 * lost after part of it went to the client: each run's output begins again at byte 0, so the bytes already passed
 * on are skipped, and their digest must equal what was passed on (runtime's Replay). A file that changed meanwhile
 * gives other bytes: the read then fails rather than splicing two versions together.
 */
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { Replay, type StreamDigest } from '../../runtime/stream-digest.js';

export class ChangedSinceFirstRun extends Error {}

/** One run's output, into `out` once it is known (until then the run's bytes wait here). */
export class RunSink {
  private held: Buffer[] = [];
  private out: Writable | undefined;
  private readonly replay: Replay;

  /** `passed`: what went to the client over every run of the read, shared by its sinks. */
  constructor(private readonly passed: StreamDigest) {
    this.replay = new Replay(passed);
  }

  /** Where the bytes go from now on; those that arrived before are written first (the stream buffers them). */
  attach(out: Writable): void {
    this.out = out;
    for (const b of this.held) {
      const rest = this.take(b);
      if (rest.length > 0) out.write(rest);
    }
    this.held = [];
  }

  readonly stream = new Writable({
    write: (chunk: Buffer, _enc, cb) => {
      if (!this.out) {
        this.held.push(chunk);
        return cb();
      }
      const rest = this.take(chunk);
      // nothing more reaches a client that went away: its bytes go nowhere
      if (rest.length === 0 || this.out.destroyed || this.out.write(rest)) return cb();
      // a client that went away closes `out` without a drain
      Promise.race([once(this.out, 'drain'), once(this.out, 'close')]).then(() => cb(), cb);
    },
  });

  /**
   * Once the run's command ended (or its stream was lost): every byte it gave has gone on to `out`. The exec's end
   * comes with its last frames, which may still wait here behind a slow client: `out` ended before them would cut
   * the tar short, and a next run would count them as never sent.
   */
  async ended(): Promise<void> {
    this.stream.end();
    await finished(this.stream);
  }

  /** The part of a chunk that goes on: none while an earlier run's bytes are skipped (and checked). */
  private take(chunk: Buffer): Buffer {
    const rest = this.replay.rest(chunk);
    this.passed.add(rest);
    return rest;
  }

  /** After the run's command ended: throws when it did not give again all that an earlier run passed on. */
  check(what: string): void {
    if (this.replay.differs || this.replay.pending) throw new ChangedSinceFirstRun(`${what} changed while it was read (read it again)`);
  }
}
