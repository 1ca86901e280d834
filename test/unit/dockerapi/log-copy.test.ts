import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { LogIncomplete, copyLog } from '../../../src/dockerapi/log-copy.js';

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
  };
}

async function collect(src: Parameters<typeof copyLog>[0], o: Partial<Parameters<typeof copyLog>[2]> = {}): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await copyLog(src, out, { follow: true, resumable: true, signal: new AbortController().signal, what: 'the log', ...o });
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
  };
  assert.equal((await collect(src)).toString(), 'a\nb\n');
  assert.equal(opens, 2);
});

test('resumes run out, or a tail window cannot resume: LogIncomplete', async () => {
  const log = Buffer.from('0123456789');
  await assert.rejects(collect(source(log, [2, 2, 2, 2, 2, 2, 2, 2], () => true)), LogIncomplete);
  await assert.rejects(collect(source(log, [2], () => true), { resumable: false }), /tail window/);
});
