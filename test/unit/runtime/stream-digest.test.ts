import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Replay, StreamDigest } from '../../../src/runtime/stream-digest.js';

const delivered = (text: string): StreamDigest => {
  const d = new StreamDigest();
  d.add(Buffer.from(text));
  return d;
};

test('a replay skips what was delivered, across chunk borders, and passes on what follows', () => {
  const replay = new Replay(delivered('hello '));
  assert.equal(replay.rest(Buffer.from('hel')).toString(), '');
  assert.ok(replay.pending);
  assert.equal(replay.rest(Buffer.from('lo wor')).toString(), 'wor');
  assert.equal(replay.rest(Buffer.from('ld')).toString(), 'ld');
  assert.deepEqual([replay.pending, replay.differs], [false, false]);
});

test('a replay of nothing delivered passes everything on', () => {
  const replay = new Replay(new StreamDigest());
  assert.equal(replay.rest(Buffer.from('all')).toString(), 'all');
});

test('a replay whose first bytes differ from what was delivered passes nothing on, then or later', () => {
  const replay = new Replay(delivered('version 1 '));
  assert.equal(replay.rest(Buffer.from('version 2 and more')).toString(), '');
  assert.ok(replay.differs);
  assert.equal(replay.rest(Buffer.from('even more')).toString(), '');
});

test('a replay shorter than what was delivered is still pending at its end', () => {
  const replay = new Replay(delivered('long content'));
  replay.rest(Buffer.from('long'));
  assert.deepEqual([replay.pending, replay.differs], [true, false]);
});
