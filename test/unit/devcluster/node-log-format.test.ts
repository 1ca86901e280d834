import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeRecords, formatNs, LineSplitter, MAX_RECORD_BYTES, parseTimeNs, renderBlock, selectionStart } from '../../../src/devcluster/node/log-format.js';
import { encodeRecord, parseRecords, renderRecord, selectRecords, type LogRecord } from './log-reference.js';
import { scratchDir } from '../../util/scratch.js';

const rec = (time: string, stream: 'stdout' | 'stderr', content: string, partial = false): LogRecord => ({ time, stream, partial, content: Buffer.from(content) });

test('records survive encode and parse, including spaces and partial lines', () => {
  const records = [rec('2025-01-02T03:04:05.000000001Z', 'stdout', 'a b  c'), rec('2025-01-02T03:04:05.000000002Z', 'stderr', 'no newline', true)];
  const parsed = parseRecords(Buffer.concat(records.map(encodeRecord)));
  assert.deepEqual(parsed, records);
  assert.equal(encodeRecord(records[0]!).toString(), '2025-01-02T03:04:05.000000001Z stdout F a b  c\n');
});

test('a chunk\'s records are one block of lines with consecutive nanoseconds, across a second\'s end too', () => {
  const pieces = [{ content: Buffer.from('a b'), partial: false }, { content: Buffer.alloc(0), partial: false }, { content: Buffer.from('half'), partial: true }];
  const first = 1735787045999999999n;
  const block = encodeRecords('stderr', pieces, first);
  const expected = pieces.map((p, i) => encodeRecord({ time: formatNs(first + BigInt(i)), stream: 'stderr', ...p }));
  assert.equal(block.toString('latin1'), Buffer.concat(expected).toString('latin1'));
  assert.equal(parseRecords(block)[1]!.time, '2025-01-02T03:04:06.000000000Z', 'the next second');
  assert.equal(encodeRecords('stdout', [{ content: Buffer.from('x'), partial: false }], 1735787045000000007n).toString(), '2025-01-02T03:04:05.000000007Z stdout F x\n');
});

test('a block rendered in one pass is what selecting and rendering each record gives, for every stream and with timestamps', () => {
  const records: LogRecord[] = [];
  for (let i = 0; i < 300; i++) {
    const content = i % 7 === 0 ? '' : `${i} ${'y'.repeat(i % 13)} stdout F`;
    records.push(rec(`2025-01-02T03:04:05.${String(i).padStart(9, '0')}Z`, i % 3 ? 'stdout' : 'stderr', content, i % 5 === 0));
  }
  const data = Buffer.concat([...records.map(encodeRecord), Buffer.from('garbage line\n2025-01-02T03:04:05Z stdoot F no\n2025-01-02T03:04:05Z stdout X no\n'), Buffer.from('2025-01-02T03:04:05.1Z stdout F torn')]);
  for (const stream of [undefined, 'All', 'Stdout', 'Stderr']) {
    for (const timestamps of [false, true]) {
      const byRecord = Buffer.concat(selectRecords(parseRecords(data), { stream }).map((r) => renderRecord(r, timestamps)));
      assert.equal(Buffer.concat(renderBlock(data, { stream, timestamps })).toString('latin1'), byRecord.toString('latin1'), `stream ${stream}, timestamps ${timestamps}`);
    }
  }
});

test('long records go on as views of the block, short ones copied together; the result is the same', () => {
  const records = [rec('2025-01-02T03:04:05.000000001Z', 'stdout', 'short'), rec('2025-01-02T03:04:05.000000002Z', 'stdout', 'L'.repeat(MAX_RECORD_BYTES), true), rec('2025-01-02T03:04:05.000000003Z', 'stdout', 'end')];
  const data = Buffer.concat(records.map(encodeRecord));
  const pieces = renderBlock(data, { timestamps: true });
  assert.ok(pieces.some((p) => p.buffer === data.buffer && p.length === MAX_RECORD_BYTES), 'the long content is a view of the block');
  assert.equal(Buffer.concat(pieces).toString(), Buffer.concat(records.map((r) => renderRecord(r, true))).toString());
});

test('since and tail select the end of a block from the record they name, as selecting record by record does', () => {
  const records = Array.from({ length: 60 }, (_, i) => rec(formatNs(1735787045000000000n + BigInt(i) * 250_000_000n), i % 4 ? 'stdout' : 'stderr', `line ${i}`, i % 9 === 0));
  const data = Buffer.concat([...records.map(encodeRecord), Buffer.from('2025-01-02T03:04:20Z stdout F torn')]);
  const since = (s: string): bigint => parseTimeNs(s);
  for (const stream of [undefined, 'Stdout', 'Stderr']) {
    for (const opts of [{ tailLines: 0 }, { tailLines: 1 }, { tailLines: 7 }, { tailLines: 1000 }, { sinceNs: since('2025-01-02T03:04:10Z') }, { sinceNs: since('2025-01-02T03:04:10.1Z'), tailLines: 3 }, { sinceNs: since('2025-01-02T03:04:12Z'), tailLines: 30 }, { sinceNs: since('2030-01-01T00:00:00Z') }]) {
      const all = { ...opts, stream };
      const expected = Buffer.concat(selectRecords(parseRecords(data), all).map((r) => renderRecord(r, false)));
      const start = selectionStart(data, all);
      assert.equal(Buffer.concat(renderBlock(data.subarray(start), all)).toString(), expected.toString(), JSON.stringify(all, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
    }
  }
});

test('a torn last line is ignored', () => {
  const data = Buffer.concat([encodeRecord(rec('2025-01-02T03:04:05.000000001Z', 'stdout', 'ok')), Buffer.from('2025-01-02T03:04:05.0')]);
  assert.equal(parseRecords(data).length, 1);
});

test('the splitter holds back unfinished lines and splits over-long ones', () => {
  const s = new LineSplitter();
  assert.deepEqual(s.push(Buffer.from('ab')), []);
  assert.deepEqual(s.push(Buffer.from('c\nd\n\ne')).map((p) => [p.content.toString(), p.partial]), [['abc', false], ['d', false], ['', false]]);
  assert.deepEqual(s.flush(), { content: Buffer.from('e'), partial: true });
  assert.equal(s.flush(), undefined);
  const long = s.push(Buffer.alloc(MAX_RECORD_BYTES + 10, 'x'));
  assert.equal(long.length, 1);
  assert.equal(long[0]!.partial, true);
});

test('the splitter cuts the same records however the output is chunked', () => {
  // the records of a whole output: lines, over-long ones cut every MAX_RECORD_BYTES from the line's start
  const expected = (all: Buffer): string[] => {
    const out: string[] = [];
    const lines = all.toString('latin1').split('\n');
    const last = lines.pop()!;
    const cut = (line: string, ended: boolean): void => {
      for (; line.length > MAX_RECORD_BYTES; line = line.slice(MAX_RECORD_BYTES)) out.push(`P:${line.slice(0, MAX_RECORD_BYTES)}`);
      if (ended) out.push(`F:${line}`);
      else if (line) out.push(`P:${line}`);
    };
    for (const line of lines) cut(line, true);
    cut(last, false);
    return out;
  };
  // a linear congruential generator in 32-bit integers (in doubles its products lose their low bits)
  let seed = 7;
  const random = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 16) % n;
  };
  for (let round = 0; round < 40; round++) {
    const parts: string[] = [];
    for (let length = 0; length < 80_000; length += parts[parts.length - 1]!.length) parts.push(random(4) === 0 ? '\n' : 'abcdefgh'.repeat(1 + random(round % 2 ? 5000 : 40)));
    const all = Buffer.from(parts.join(''), 'latin1');
    const s = new LineSplitter();
    const got: string[] = [];
    for (let at = 0; at < all.length; ) {
      const size = 1 + random(round % 3 === 0 ? 70_000 : 20_000);
      for (const r of s.push(Buffer.from(all.subarray(at, at + size)))) got.push(`${r.partial ? 'P' : 'F'}:${r.content.toString('latin1')}`);
      at += size;
    }
    const rest = s.flush();
    if (rest) got.push(`P:${rest.content.toString('latin1')}`);
    assert.deepEqual(got, expected(all), `round ${round}`);
  }
});

test('timestamps have nine fraction digits and parse back', () => {
  const ns = 1735787045123456789n;
  assert.equal(formatNs(ns), '2025-01-02T03:04:05.123456789Z');
  assert.equal(parseTimeNs('2025-01-02T03:04:05.123456789Z'), ns);
  assert.equal(parseTimeNs('2025-01-02T04:04:05+01:00'), 1735787045000000000n);
});

test('selection filters by stream, since and tail; rendering adds newlines and timestamps', () => {
  const all = [
    rec('2025-01-02T03:04:05.000000001Z', 'stdout', 'o1'),
    rec('2025-01-02T03:04:06.000000001Z', 'stderr', 'e1'),
    rec('2025-01-02T03:04:07.000000001Z', 'stdout', 'o2'),
  ];
  assert.deepEqual(selectRecords(all, { stream: 'Stderr' }).map((r) => r.content.toString()), ['e1']);
  assert.deepEqual(selectRecords(all, { tailLines: 2 }).map((r) => r.content.toString()), ['e1', 'o2']);
  assert.deepEqual(selectRecords(all, { tailLines: 0 }), []);
  assert.deepEqual(selectRecords(all, { sinceNs: parseTimeNs('2025-01-02T03:04:06Z') }).map((r) => r.content.toString()), ['e1', 'o2']);
  assert.equal(renderRecord(all[0]!, true).toString(), '2025-01-02T03:04:05.000000001Z o1\n');
  assert.equal(renderRecord(rec('t', 'stdout', 'p', true), false).toString(), 'p');
});

test('a served log is the records in order, in few writes, cut exactly at limitBytes', async () => {
  const { rmSync, writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { buffer } = await import('node:stream/consumers');
  const { serveLog } = await import('../../../src/devcluster/node/container-log.js');
  const dir = scratchDir('berth-log-');
  try {
    const file = join(dir, '0.log');
    const records = Array.from({ length: 200 }, (_, i) => rec(`2025-01-02T03:04:05.${String(i).padStart(9, '0')}Z`, i % 3 ? 'stdout' : 'stderr', `${i}:${'x'.repeat(4000)}`, i % 2 === 0));
    writeFileSync(file, Buffer.concat(records.map(encodeRecord)));
    const whole = Buffer.concat(records.map((r) => renderRecord(r, false)));
    const out = serveLog(file, undefined, {});
    let writes = 0;
    out.on('data', () => writes++);
    assert.deepEqual(await buffer(out), whole);
    assert.ok(writes < 10, `${writes} writes for ${whole.length} bytes`);
    for (const limit of [1, 4000, 4003, whole.length - 1, whole.length, whole.length + 5]) {
      assert.deepEqual(await buffer(serveLog(file, undefined, { limitBytes: limit })), whole.subarray(0, limit), `limitBytes ${limit}`);
    }
    const stderrOnly = Buffer.concat(records.filter((r) => r.stream === 'stderr').map((r) => renderRecord(r, true)));
    assert.deepEqual(await buffer(serveLog(file, undefined, { stream: 'Stderr', timestamps: true })), stderrOnly);
    // read from the file a block (1 MiB) at a time: records cut by a block's end are whole in the output
    const many = Array.from({ length: 700 }, (_, i) => rec(`2025-01-02T03:04:06.${String(i).padStart(9, '0')}Z`, i % 5 ? 'stdout' : 'stderr', `${i}:${'y'.repeat(3000 + i)}`, i % 7 === 0));
    writeFileSync(file, Buffer.concat(many.map(encodeRecord)));
    assert.deepEqual(await buffer(serveLog(file, undefined, { stream: 'Stdout' })), Buffer.concat(many.filter((r) => r.stream === 'stdout').map((r) => renderRecord(r, false))));
    const late = many.slice(400);
    assert.deepEqual(await buffer(serveLog(file, undefined, { sinceNs: parseTimeNs(late[0]!.time), timestamps: true })), Buffer.concat(late.map((r) => renderRecord(r, true))));
    assert.deepEqual(await buffer(serveLog(join(dir, 'none.log'), undefined, {})), Buffer.alloc(0), 'a container that wrote nothing has an empty log');
    // an ended log knows which streams it holds: a stream it never had is empty, the other one whole
    const { ContainerLog } = await import('../../../src/devcluster/node/container-log.js');
    const ended = new ContainerLog(join(dir, '1.log'));
    ended.write('stdout', Buffer.from('only out\n'));
    ended.close();
    assert.equal((await buffer(serveLog(join(dir, '1.log'), ended, { stream: 'Stderr' }))).length, 0);
    assert.equal((await buffer(serveLog(join(dir, '1.log'), ended, { stream: 'Stdout' }))).toString(), 'only out\n');
    assert.equal((await buffer(serveLog(join(dir, '1.log'), ended, { follow: true }))).toString(), 'only out\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
