// stdin of an exec session goes out in messages of at most MAX_STDIN_FRAME bytes (the kubelet refuses
// messages over 32 MiB and holds each whole before writing it), in order, ended by the v5 CLOSE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { stubKubeConfig } from '../../util/stub-kubeconfig.js';
import { WebSocketServer } from 'ws';
import { openExec } from '../../../src/kube/streams.js';
import { MAX_STDIN_FRAME } from '../../../src/kube/stdin-pump.js';

test('a 5 MiB stdin chunk is sent as ordered frames of at most MAX_STDIN_FRAME, then CLOSE', async () => {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => 'v5.channel.k8s.io' });
  const frames: Buffer[] = [];
  let closeFrame: Buffer | undefined;
  wss.on('connection', (ws) => {
    ws.on('message', (data: Buffer) => {
      if (data[0] === 255) {
        closeFrame = data;
        ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify({ status: 'Success' }))]));
        ws.close();
      } else frames.push(data);
    });
  });
  await new Promise((resolve) => wss.once('listening', resolve));
  try {
    const kc = stubKubeConfig(`http://127.0.0.1:${(wss.address() as AddressInfo).port}`);
    const input = Buffer.alloc(5 * 1024 * 1024 + 7);
    for (let i = 0; i < input.length; i++) input[i] = i % 251;
    const stdin = new PassThrough();
    stdin.end(input);
    const session = await openExec(kc, 'ns', 'pod', 'main', ['cat'], { stdin, stdout: new PassThrough().resume(), requireStdinClose: true });
    const result = await session.done;
    assert.equal(result.status.status, 'Success');
    assert.ok(frames.length >= 6, `${frames.length} frames`);
    for (const f of frames) {
      assert.equal(f[0], 0, 'stdin channel');
      assert.ok(f.length - 1 <= MAX_STDIN_FRAME, `a frame of ${f.length - 1} bytes`);
    }
    assert.ok(Buffer.concat(frames.map((f) => f.subarray(1))).equals(input), 'the bytes arrive whole and in order');
    assert.deepEqual([...(closeFrame ?? [])], [255, 0]);
  } finally {
    wss.close();
  }
});
