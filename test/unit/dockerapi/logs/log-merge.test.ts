// stdout and stderr read to their ends come out in the order their lines were written, each framed as its stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { demux } from '../../../../src/dockerapi/http/framing.js';
import { LogMerge } from '../../../../src/dockerapi/logs/log-merge.js';

const ts = (s: number): string => `2026-11-23T07:00:${String(s).padStart(2, '0')}.000000000Z `;

async function merged(keepTimestamps: boolean, feed: (m: LogMerge) => Promise<void>): Promise<Array<[number, string]>> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (d: Buffer) => chunks.push(d));
  const m = new LogMerge(sink, keepTimestamps);
  await feed(m);
  await m.done;
  return demux(Buffer.concat(chunks)).map((f) => [f.stream, f.payload.toString('latin1')]);
}

const write = (w: NodeJS.WritableStream, s: string): Promise<void> => new Promise((resolve) => w.write(s, () => resolve()));
const end = (w: NodeJS.WritableStream, s?: string): Promise<void> =>
  new Promise((resolve) => (s === undefined ? w.end(() => resolve()) : w.end(s, () => resolve())));

test('lines go out by their times, whatever the order their streams arrive in; times dropped or kept', async () => {
  const feed = async (m: LogMerge): Promise<void> => {
    // stdout arrives whole first; its later lines wait for stderr's
    void end(m.stdout, `${ts(1)}out1\n${ts(3)}out3\n${ts(5)}out5 no newline`);
    await write(m.stderr, `${ts(2)}err`);
    await write(m.stderr, `2\n${ts(4)}err4\n`);
    await end(m.stderr, `${ts(6)}err6\n`);
  };
  assert.deepEqual(await merged(false, feed), [
    [1, 'out1\n'],
    [2, 'err2\n'],
    [1, 'out3\n'],
    [2, 'err4\n'],
    [1, 'out5 no newline'],
    [2, 'err6\n'],
  ]);
  assert.deepEqual(
    (await merged(true, feed)).map(([, p]) => p.slice(0, 31)),
    [1, 2, 3, 4, 5, 6].map(ts),
  );
});

test('one stream empty: the other goes out whole; a long line stays in one piece, framed as dockerd frames it', async () => {
  const long = 'x'.repeat(16 * 1024 + 10);
  const frames = await merged(false, async (m) => {
    void end(m.stderr);
    await end(m.stdout, `${ts(1)}${long}\n${ts(2)}b\n`);
  });
  assert.deepEqual(
    frames.map(([id, p]) => [id, p.length]),
    [
      [1, 16 * 1024],
      [1, 11],
      [1, 2],
    ],
  );
});
