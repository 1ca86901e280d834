import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeFrame, exitFrame, FRAME, FrameDecoder, agentEnabled, type Frame } from '../../../src/shim/agent-frames.js';

test('frames survive being split and joined at any byte', async () => {
  const frames = [encodeFrame(FRAME.header, '{"argv":["run"]}'), encodeFrame(FRAME.stdin, Buffer.alloc(70_000, 7)), encodeFrame(FRAME.stdinEnd), exitFrame(42)];
  const bytes = Buffer.concat(frames);
  for (const step of [1, 3, 5, 4096, bytes.length]) {
    const decoder = new FrameDecoder();
    const out: Frame[] = [];
    decoder.on('data', (f: Frame) => out.push(f));
    for (let i = 0; i < bytes.length; i += step) decoder.write(bytes.subarray(i, i + step));
    decoder.end();
    await new Promise((r) => decoder.on('end', r).resume());
    assert.deepEqual(
      out.map((f) => f.type),
      [FRAME.header, FRAME.stdin, FRAME.stdinEnd, FRAME.exit],
      `step ${step}`,
    );
    assert.equal(out[1].payload.length, 70_000);
    assert.equal(out[3].payload.readInt32BE(0), 42);
  }
});

test('the agent is the default, BERTH_SHIM_AGENT=0 opts out', () => {
  assert.equal(agentEnabled({}), true, 'the agent is the default');
  assert.equal(agentEnabled({ BERTH_SHIM_AGENT: '' }), true);
  assert.equal(agentEnabled({ BERTH_SHIM_AGENT: 'off' }), false);
  assert.equal(agentEnabled({ BERTH_SHIM_AGENT: '0' }), false);
  assert.equal(agentEnabled({ BERTH_SHIM_AGENT: '1' }), true);
  assert.equal(agentEnabled({ BERTH_SHIM_AGENT: 'true' }), true);
});
