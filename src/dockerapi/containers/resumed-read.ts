/**
 * One read out of a container (GET archive's tar), continued across runs of the same command when its stream was
 * lost after part of it went to the client: each run's output begins again at byte 0, so the bytes already passed
 * on are skipped, and their digest must equal what was passed on. A file that changed meanwhile gives other bytes:
 * the read then fails rather than splicing two versions together.
 */
import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { StreamDigest } from '../../runtime/stream-digest.js';

export class ChangedSinceFirstRun extends Error {}

const EMPTY = Buffer.alloc(0);

export class ResumedRead {
  /** what went to the client, over every run */
  readonly passed = new StreamDigest();

  /** A sink for one run's output into `out` (given once known; until then the run's bytes wait in it). */
  run(): RunSink {
    return new RunSink(this.passed);
  }
}

export class RunSink {
  private held: Buffer[] = [];
  private out: Writable | undefined;
  private skip: number;
  private readonly skipped: Hash = createHash('sha256');
  /** set when this run's first bytes differ from what an earlier run passed on */
  changed = false;

  constructor(private readonly passed: StreamDigest) {
    this.skip = passed.bytes;
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
      if (rest.length === 0 || this.out.write(rest)) return cb();
      once(this.out, 'drain').then(() => cb(), cb);
    },
  });

  /** The part of a chunk that goes on: none while an earlier run's bytes are skipped (and checked). */
  private take(chunk: Buffer): Buffer {
    if (this.changed) return EMPTY;
    if (this.skip > 0) {
      const head = chunk.subarray(0, this.skip);
      this.skipped.update(head);
      this.skip -= head.length;
      chunk = chunk.subarray(head.length);
      if (this.skip === 0 && this.skipped.digest('hex') !== this.passed.digest()) {
        this.changed = true;
        return EMPTY;
      }
    }
    this.passed.add(chunk);
    return chunk;
  }

  /** After the run's command ended: throws when it did not give again all that an earlier run passed on. */
  check(what: string): void {
    if (this.changed || this.skip > 0) throw new ChangedSinceFirstRun(`${what} changed while it was read (read it again)`);
  }
}
