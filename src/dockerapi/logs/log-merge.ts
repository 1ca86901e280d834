/**
 * stdout and stderr of a log read to its end, in the order their lines were written, as dockerd's log files
 * give them. Each arrives through its own pods/log request, every line led by its time as dockerd writes it
 * (fixed width, so times compare as text); the line written first goes out first, its time kept or dropped.
 * The merge streams: a line is passed on as its bytes arrive once it is the earliest, and a stream waits (its
 * writes are not acknowledged) only while the other has not yet shown its next line's time. Both are framed
 * here, into the one sink, so no writer's queue lets a later line of one stream overtake the other's.
 */
import { Writable } from 'node:stream';
import { STDERR, STDOUT } from '../http/framing.js';
import { LogFramer } from './log-frames.js';

/** `2006-01-02T15:04:05.000000000Z ` */
const LEAD_BYTES = 31;
/** how many framed bytes one pass gathers into the sink's writes */
const BATCH_BYTES = 256 * 1024;

interface Side {
  queue: Buffer[];
  queued: number;
  ended: boolean;
  /** the acknowledgment of the write (or end) the merge still holds */
  held?: () => void;
  framer: LogFramer;
}

export class LogMerge {
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** Resolves when both have ended and every line went out. */
  readonly done: Promise<void>;
  private readonly sides: [Side, Side];
  /** the side whose line is going out, until its newline */
  private owner?: Side;
  private pumping = false;
  private awaitingDrain = false;
  private finish!: () => void;

  constructor(
    private readonly sink: Writable,
    private readonly keepTimestamps: boolean,
  ) {
    this.sides = [this.side(STDOUT), this.side(STDERR)];
    this.stdout = this.input(this.sides[0]);
    this.stderr = this.input(this.sides[1]);
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  private side(stream: number): Side {
    // a read to its end: a line's part is held until its 16 KiB, its newline or the end, as dockerd frames it
    return { queue: [], queued: 0, ended: false, framer: new LogFramer(stream, 'held') };
  }

  /** Frames into the sink; false when it is full. */
  private send(frames: Buffer[]): boolean {
    let ready = true;
    for (const f of frames) ready = this.sink.write(f) && ready;
    return ready;
  }

  private input(side: Side): Writable {
    return new Writable({
      write: (chunk: Buffer, _enc, cb) => {
        side.queue.push(chunk);
        side.queued += chunk.length;
        side.held = cb;
        this.pump();
      },
      final: (cb) => {
        side.ended = true;
        side.held = cb;
        this.pump();
      },
    });
  }

  private pump(): void {
    if (this.pumping || this.awaitingDrain) return;
    this.pumping = true;
    const frames: Buffer[] = [];
    let framed = 0;
    let needs: Side | undefined;
    // whole lines of one side in a row, framed together (a frame each) when the other side's turn comes
    let run: { side: Side; lines: Buffer[] } | undefined;
    // (its bytes were counted in `framed` as its lines joined it)
    const frameRun = (): void => {
      if (run) frames.push(...run.side.framer.push(run.lines));
      run = undefined;
    };
    for (;;) {
      if (this.owner) {
        const side = this.owner;
        const { bytes, lineEnded } = this.takeLine(side);
        if (lineEnded || (side.ended && side.queued === 0)) this.owner = undefined;
        for (const f of [...side.framer.push([bytes]), ...(this.owner ? [] : side.framer.flush())]) {
          frames.push(f);
          framed += f.length;
        }
        if (this.owner) {
          needs = side;
          break;
        }
        // a log of many short lines goes out in few writes, none of them too large
        if (framed >= BATCH_BYTES) break;
        continue;
      }
      const [a, b] = this.sides;
      const waiting = [a, b].find((s) => !s.ended && s.queued < LEAD_BYTES);
      if (waiting) {
        needs = waiting;
        break;
      }
      const ready = [a, b].filter((s) => s.queued > 0);
      if (ready.length === 0) break;
      const first = ready.length === 1 || this.lead(ready[0]) <= this.lead(ready[1]) ? ready[0] : ready[1];
      const head = first.queue[0];
      const nl = head.indexOf(0x0a);
      if (nl >= LEAD_BYTES) {
        // a whole line in one chunk: a view of it joins the run, no copy
        if (run?.side !== first) frameRun();
        run ??= { side: first, lines: [] };
        run.lines.push(head.subarray(this.keepTimestamps ? 0 : LEAD_BYTES, nl + 1));
        this.drop(first, nl + 1);
        framed += nl + 1;
        if (framed >= BATCH_BYTES) break;
        continue;
      }
      frameRun();
      if (!this.keepTimestamps && first.queued >= LEAD_BYTES) this.drop(first, LEAD_BYTES);
      this.owner = first;
    }
    frameRun();
    this.pumping = false;
    if (!this.send(frames)) {
      // the client reads slower: both sides wait until it has room again
      this.awaitingDrain = true;
      this.sink.once('drain', () => {
        this.awaitingDrain = false;
        this.pump();
      });
      return;
    }
    const over = !needs && !this.owner && this.sides.every((s) => s.ended && s.queued === 0);
    if (!needs && !over) {
      // a full batch, and more is queued
      setImmediate(() => this.pump());
      return;
    }
    // A side is let go on when the merge needs its bytes, or holds none of it; the other waits for its turn.
    for (const s of this.sides) {
      if (s.held && (s === needs || s.queued === 0)) {
        const cb = s.held;
        s.held = undefined;
        cb();
      }
    }
    if (over) this.finish();
  }

  private lead(side: Side): string {
    const head = side.queue[0];
    if (head.length >= LEAD_BYTES) return head.toString('latin1', 0, LEAD_BYTES);
    return Buffer.concat(side.queue, Math.min(side.queued, LEAD_BYTES)).toString('latin1');
  }

  private drop(side: Side, n: number): void {
    while (n > 0) {
      const head = side.queue[0];
      const take = Math.min(n, head.length);
      if (take === head.length) side.queue.shift();
      else side.queue[0] = head.subarray(take);
      side.queued -= take;
      n -= take;
    }
  }

  /** The queued bytes of the current line, up to its newline. */
  private takeLine(side: Side): { bytes: Buffer; lineEnded: boolean } {
    const pieces: Buffer[] = [];
    while (side.queue.length > 0) {
      const head = side.queue[0];
      const nl = head.indexOf(0x0a);
      const end = nl < 0 ? head.length : nl + 1;
      pieces.push(head.subarray(0, end));
      this.drop(side, end);
      if (nl >= 0) return { bytes: Buffer.concat(pieces), lineEnded: true };
    }
    return { bytes: Buffer.concat(pieces), lineEnded: false };
  }
}
