import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { timeCut, type TimeCut } from '../../../../src/dockerapi/logs/log-cut.js';
import { dockerLogTimestamp, timestampNanos } from '../../../../src/dockerapi/logs/log-time.js';

const LOG = '2026-11-23T07:00:01.25Z one\n2026-11-23T07:00:01.5Z two\n2026-11-23T07:00:02Z three\n2026-11-23T07:00:03Z four';
const at = (ts: string): bigint => timestampNanos(ts)!;

/** The log through the cut, in chunks of `size` bytes (lines and timestamps split across chunks). */
function cutText(cut: TimeCut, size = LOG.length, log = LOG): Promise<string> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < log.length; i += size) chunks.push(Buffer.from(log.slice(i, i + size)));
  return text(Readable.from(chunks).pipe(timeCut(cut)));
}

/** LOG's timestamps as dockerd writes them: 9 fractional digits always */
const DOCKER_LOG =
  '2026-11-23T07:00:01.250000000Z one\n2026-11-23T07:00:01.500000000Z two\n2026-11-23T07:00:02.000000000Z three\n2026-11-23T07:00:03.000000000Z four';

test('lines from `from` on and up to `until`, both included; timestamps kept as dockerd writes them, or cut; a last partial line passes', async () => {
  for (const size of [LOG.length, 7, 1]) {
    assert.equal(await cutText({ keepTimestamps: false }, size), 'one\ntwo\nthree\nfour');
    assert.equal(await cutText({ keepTimestamps: true }, size), DOCKER_LOG);
    assert.equal(await cutText({ from: at('2026-11-23T07:00:01.5Z'), keepTimestamps: false }, size), 'two\nthree\nfour');
    assert.equal(await cutText({ from: at('2026-11-23T07:00:01.25Z') + 1n, until: at('2026-11-23T07:00:02Z'), keepTimestamps: false }, size), 'two\nthree\n');
    assert.equal(await cutText({ until: at('2026-11-23T07:00:01.5Z') - 1n, keepTimestamps: true }, size), '2026-11-23T07:00:01.250000000Z one\n');
  }
});

test('the first line past `until` is told once, and nothing after it passes, even a line stamped earlier', async () => {
  let told = 0;
  const log = `${LOG}\n2026-11-23T07:00:01Z late but early\n`;
  assert.equal(await cutText({ until: at('2026-11-23T07:00:01.9Z'), keepTimestamps: false, onPastUntil: () => told++ }, 5, log), 'one\ntwo\n');
  assert.equal(told, 1);
});

test('a line still being written passes as it arrives', async () => {
  const cut = timeCut({ from: at('2026-11-23T07:00:01Z'), keepTimestamps: false });
  const out: string[] = [];
  cut.on('data', (d: Buffer) => out.push(d.toString()));
  cut.write('2026-11-23T07:00:01.5Z $ ');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(out, ['$ ']);
  cut.end();
});

test('a line without a timestamp fails the cut instead of passing silently', async () => {
  await assert.rejects(cutText({ keepTimestamps: false }, 4, 'no timestamp here\n'), /has none/);
  await assert.rejects(cutText({ keepTimestamps: false }, 4, `${'x'.repeat(40)} late space\n`), /has none/);
  await assert.rejects(cutText({ keepTimestamps: false }, 4, '2026-11-23T07:00:01Z'), /has none/);
});

test('read only for a merge (stampLines, no cut, no timestamps shown): a line the kubelet left unstamped passes, led by the time before it or after all', async () => {
  const merge = { keepTimestamps: false, stampLines: true };
  // stderr's only line, written while stdout's long line was being recorded: no stamp at all
  for (const size of [2, 4, 64]) assert.equal(await cutText(merge, size, 'done\n'), '9999-12-31T23:59:59.999999999Z done\n');
  assert.equal(
    await cutText(merge, 4, '2026-11-23T07:00:01Z one\nno stamp here\n'),
    '2026-11-23T07:00:01.000000000Z one\n2026-11-23T07:00:01.000000000Z no stamp here\n',
  );
  // a cut by time, or timestamps shown, cannot do without the time: still an error
  await assert.rejects(cutText({ ...merge, from: at('2026-11-23T07:00:00Z') }, 4, 'done\n'), /has none/);
  await assert.rejects(cutText({ keepTimestamps: true, stampLines: true }, 4, 'done\n'), /has none/);
});

test('a timestamp as dockerd writes it: UTC, all 9 fractional digits, whatever the kubelet left out', () => {
  assert.equal(dockerLogTimestamp(at('2026-11-23T07:00:01Z')), '2026-11-23T07:00:01.000000000Z');
  assert.equal(dockerLogTimestamp(at('2026-11-23T07:00:01.1234567Z')), '2026-11-23T07:00:01.123456700Z');
  assert.equal(dockerLogTimestamp(at('2026-11-23T07:00:01.999999999Z')), '2026-11-23T07:00:01.999999999Z');
  assert.equal(dockerLogTimestamp(at('2026-11-23T09:00:01.5+02:00')), '2026-11-23T07:00:01.500000000Z');
  assert.equal(dockerLogTimestamp(-1n), '1969-12-31T23:59:59.999999999Z');
});

test('a line longer than a record comes whole: the timestamps of its partial records are dropped, or kept as dockerd writes them', async () => {
  const part = (c: string): string => c.repeat(16 * 1024);
  // pods/log with timestamps: each record's time where it begins, a partial record without its newline
  const log = `2026-11-23T07:00:01Z ${part('a')}2026-11-23T07:00:01.5Z ${part('b')}2026-11-23T07:00:02Z ccc\n2026-11-23T07:00:03Z ${'d'.repeat(16 * 1024)}\n2026-11-23T07:00:04Z e\n`;
  for (const size of [log.length, 4096, 16 * 1024 + 7, 13]) {
    assert.equal(await cutText({ keepTimestamps: false }, size, log), `${part('a')}${part('b')}ccc\n${'d'.repeat(16 * 1024)}\ne\n`);
    assert.equal(
      await cutText({ from: at('2026-11-23T07:00:02Z'), keepTimestamps: false }, size, log),
      `ccc\n${'d'.repeat(16 * 1024)}\ne\n`,
      'each record is judged by its own time',
    );
    assert.equal(
      await cutText({ from: at('2026-11-23T07:00:01.5Z'), keepTimestamps: false, stampLines: true }, size, log),
      `2026-11-23T07:00:01.500000000Z ${part('b')}ccc\n2026-11-23T07:00:03.000000000Z ${'d'.repeat(16 * 1024)}\n2026-11-23T07:00:04.000000000Z e\n`,
      'a line led by the time of its first record that passes',
    );
    assert.equal(
      await cutText({ until: at('2026-11-23T07:00:02Z'), keepTimestamps: true }, size, log),
      `2026-11-23T07:00:01.000000000Z ${part('a')}2026-11-23T07:00:01.500000000Z ${part('b')}2026-11-23T07:00:02.000000000Z ccc\n`,
    );
  }
  // a record's worth of a line whose next bytes only look like a timestamp's start is text
  const plain = `2026-11-23T07:00:01Z ${part('a')}2026-11-23 is not a time\n`;
  assert.equal(await cutText({ keepTimestamps: false }, 100, plain), `${part('a')}2026-11-23 is not a time\n`);
});

test("a kubelet's long line, stamped only where it begins: its later records pass a `from` just past that stamp (a tail window), and nothing earlier", async () => {
  const log = `2026-11-28T06:31:30.536Z a\n2026-11-28T06:31:30.544Z ${'x'.repeat(20000)}\n2026-11-28T06:31:30.545Z last\n`;
  for (const size of [log.length, 4096, 16 * 1024 + 7, 13]) {
    const windowStart = at('2026-11-28T06:31:30.544Z') + 1n;
    assert.equal(await cutText({ from: windowStart, keepTimestamps: false }, size, log), `${'x'.repeat(20000 - 16384)}\nlast\n`);
    assert.equal(
      await cutText({ from: windowStart + 1n, keepTimestamps: false }, size, log),
      'last\n',
      'a later `from`: the unstamped records cannot be placed after it',
    );
    assert.equal(await cutText({ from: at('2026-11-28T06:31:30.540Z'), keepTimestamps: false }, size, log), `${'x'.repeat(20000)}\nlast\n`);
  }
});
