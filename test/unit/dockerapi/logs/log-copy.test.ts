import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { LogIncomplete, copyLog, type LogSource } from '../../../../src/dockerapi/logs/log-copy.js';

const tick = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.min(ms, 5)));

/** A log that grows as `parts`; each open gives the log from the start and drops after `cutAt[i]` bytes (or ends). */
function source(log: Buffer, cuts: number[], ended: () => boolean) {
  let opens = 0;
  return {
    get opens() {
      return opens;
    },
    open: async () => {
      const cut = cuts[opens++];
      if (cut === undefined) return Readable.from([log.subarray(0, 3), log.subarray(3)]);
      const r = new Readable({ read() {} });
      r.push(log.subarray(0, cut));
      setImmediate(() => r.destroy(new Error('aborted')));
      return r;
    },
    ended: async () => ended(),
    changed: tick,
  };
}

async function collect(src: LogSource, o: Partial<Parameters<typeof copyLog>[2]> = {}): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await copyLog(src, out, { follow: true, signal: new AbortController().signal, what: 'the log', settleMs: 50, ...o });
  return Buffer.concat(chunks);
}

test('a dropped log is resumed: every byte once, in order', async () => {
  const log = Buffer.from('out-1\nout-2\nout-3\n');
  const src = source(log, [4, 9], () => true);
  assert.equal((await collect(src)).toString(), log.toString());
  assert.equal(src.opens, 3);
});

test('a log that reads back different is an error, not a splice', async () => {
  let opens = 0;
  const src = {
    open: async () => {
      opens++;
      if (opens === 1) {
        const r = new Readable({ read() {} });
        r.push(Buffer.from('abcdef'));
        setImmediate(() => r.destroy(new Error('aborted')));
        return r;
      }
      return Readable.from([Buffer.from('XYZdefghi')]);
    },
    ended: async () => true,
    changed: tick,
  };
  await assert.rejects(collect(src), (err: Error) => err instanceof LogIncomplete && /does not start with them/.test(err.message));
});

test('a follow that ends while the container runs is resumed; one that ends with it is whole', async () => {
  let running = true;
  let opens = 0;
  const src = {
    open: async () => {
      opens++;
      const text = opens === 1 ? 'a\n' : 'a\nb\n';
      if (opens === 2) running = false;
      return Readable.from([Buffer.from(text)]);
    },
    ended: async () => !running,
    changed: tick,
  };
  assert.equal((await collect(src)).toString(), 'a\nb\n');
  assert.equal(opens, 2);
});

test('a follow that ends a moment before the pod says so is whole, without reading again', async () => {
  // The kubelet ends the follow when the container exits; the pod's status says so at its next change.
  let asked = 0;
  let changes = 0;
  const src = {
    open: async () => Readable.from([Buffer.from('old\nnew1\n')]),
    ended: async () => ++asked > 1 && changes > 0,
    changed: async () => void changes++,
  };
  assert.equal((await collect(src, { settleMs: 60_000 })).toString(), 'old\nnew1\n');
  assert.equal(asked, 2);
});

test('a follow told to stop reads the log once more without follow, to its end', async () => {
  const stop = new AbortController();
  const follows: boolean[] = [];
  const src = {
    open: async (follow: boolean) => {
      follows.push(follow);
      if (!follow) return Readable.from([Buffer.from('a\nb\nc\n')]);
      // a follow that stays open: it has brought `a` when the stop comes
      const r = new Readable({ read() {} });
      r.push(Buffer.from('a\n'));
      setImmediate(() => stop.abort());
      return r;
    },
    ended: async () => false,
    changed: tick,
  };
  assert.equal((await collect(src, { stopFollowing: stop.signal })).toString(), 'a\nb\nc\n');
  assert.deepEqual(follows, [true, false]);
});

test('resumes run out, or a follow never ends with its container: LogIncomplete', async () => {
  const log = Buffer.from('0123456789');
  await assert.rejects(collect(source(log, [2, 2, 2, 2, 2, 2, 2, 2], () => true)), LogIncomplete);
  const running = { open: async () => Readable.from([Buffer.from('a\n')]), ended: async () => false, changed: tick };
  await assert.rejects(collect(running, { maxResumes: 2 }), /ended while the container runs/);
});

test('a follow whose open waits for a first byte (a kubelet holds the head of an empty log) is abandoned when asked to stop following, and the log is read once more without follow', async () => {
  const stop = new AbortController();
  const opened: boolean[] = [];
  const src: LogSource = {
    open: (follow, signal) => {
      opened.push(follow);
      if (!follow) return Promise.resolve(Readable.from([Buffer.from('kept\n')]));
      return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
    },
    ended: async () => false,
    changed: tick,
  };
  setTimeout(() => stop.abort(), 20);
  assert.equal((await collect(src, { stopFollowing: stop.signal })).toString(), 'kept\n');
  assert.deepEqual(opened, [true, false]);
});
