import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { badRequest } from '../../../src/devcluster/api/errors.js';
import { handleRemoteCommandUpgrade } from '../../../src/devcluster/streams/remotecommand.js';
import { noFaults, type Faults, type StreamSession } from '../../../src/devcluster/types.js';
import { connectChannels, fakeSession, startStubServer, type FakeSession, type StubServer } from './streams-harness.js';

const V5 = 'v5.channel.k8s.io';
const V4 = 'v4.channel.k8s.io';
const ALL = [V5, V4, 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];

// each test installs what the next upgrade's open() returns
let nextOpen: () => Promise<StreamSession> = () => Promise.reject(new Error('no session prepared'));
const faults: Faults = noFaults();
let server: StubServer;

before(async () => {
  server = await startStubServer((req: IncomingMessage, socket, head) => handleRemoteCommandUpgrade(req, socket, head, () => nextOpen(), faults));
});
after(() => server.close());

function prepare(fake: FakeSession): FakeSession {
  nextOpen = () => Promise.resolve(fake.session);
  return fake;
}

const execUrl = (command: string[]) => `ws://127.0.0.1:${server.port}/api/v1/namespaces/default/pods/p/exec?${command.map((c) => `command=${encodeURIComponent(c)}`).join('&')}&stdin=true&stdout=true&stderr=true`;

test('v5: stdin CLOSE ends the process input, output and the Success status follow, then a normal close', async () => {
  const fake = prepare(fakeSession());
  const client = await connectChannels(execUrl(['cat']), ALL);
  assert.equal(client.protocol, V5);
  client.send(0, 'hello ');
  client.send(0, 'world');
  client.ws.send(Buffer.from([255, 0]));
  assert.equal(await fake.stdinText, 'hello world');
  fake.stdout.write('hello world');
  fake.exit({ exitCode: 0 });
  assert.equal(await client.closed, 1000);
  assert.equal(client.text(1), 'hello world');
  assert.deepEqual(JSON.parse(client.text(3)), { metadata: {}, status: 'Success' });
  assert.equal(fake.isAborted(), false);
});

test('v5: stdout and stderr stay apart and a non-zero exit reports NonZeroExitCode with the code', async () => {
  const fake = prepare(fakeSession());
  const client = await connectChannels(execUrl(['sh', '-c', 'exit 3']), [V5]);
  fake.stdout.write('out-1 ');
  fake.stderr.write('err-1 ');
  fake.stdout.write('out-2');
  fake.stderr.write('err-2');
  fake.exit({ exitCode: 3 });
  assert.equal(await client.closed, 1000);
  assert.equal(client.text(1), 'out-1 out-2');
  assert.equal(client.text(2), 'err-1 err-2');
  assert.deepEqual(JSON.parse(client.text(3)), {
    metadata: {},
    status: 'Failure',
    message: 'command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3',
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: '3' }] },
  });
});

test('v4: a session error becomes an InternalError status with code 500', async () => {
  const fake = prepare(fakeSession());
  const client = await connectChannels(execUrl(['x']), [V4]);
  assert.equal(client.protocol, V4);
  fake.exit({ error: 'runc exec failed' });
  assert.equal(await client.closed, 1000);
  const status = JSON.parse(client.text(3));
  assert.equal(status.status, 'Failure');
  assert.equal(status.reason, 'InternalError');
  assert.equal(status.code, 500);
  assert.match(status.message, /runc exec failed/);
});

test('v4: exit 0 gives Success; the client closing the socket first aborts the session', async () => {
  const first = prepare(fakeSession());
  const a = await connectChannels(execUrl(['true']), [V4]);
  first.exit({ exitCode: 0 });
  await a.closed;
  assert.deepEqual(JSON.parse(a.text(3)), { metadata: {}, status: 'Success' });

  const second = prepare(fakeSession());
  const b = await connectChannels(execUrl(['cat']), [V4]);
  b.send(0, 'data');
  b.ws.close();
  await second.aborted;
  assert.equal(second.isAborted(), true);
});

test('v4 has no CLOSE: a [255, 0] frame is ignored and stdin stays open', async () => {
  let received!: (text: string) => void;
  const stdinData = new Promise<string>((resolve) => (received = resolve));
  const stdin = new Writable({
    write(chunk: Buffer, _enc, cb) {
      received(chunk.toString());
      cb();
    },
  });
  const fake = prepare(fakeSession({ stdin }));
  const client = await connectChannels(execUrl(['cat']), [V4]);
  client.ws.send(Buffer.from([255, 0]));
  client.send(0, 'after');
  // frames are handled in order: had the CLOSE ended stdin, 'after' could not have been written
  assert.equal(await stdinData, 'after');
  assert.equal(stdin.writableEnded, false);
  fake.exit({ exitCode: 0 });
  await client.closed;
});

test('attach reports Success whatever the exit code', async () => {
  const fake = prepare(fakeSession());
  const client = await connectChannels(`ws://127.0.0.1:${server.port}/api/v1/namespaces/default/pods/p/attach?stdout=true`, [V5]);
  fake.exit({ exitCode: 7 });
  await client.closed;
  assert.deepEqual(JSON.parse(client.text(3)), { metadata: {}, status: 'Success' });
});

test('resize frames reach the session, split or batched', async () => {
  const fake = prepare(fakeSession());
  const client = await connectChannels(execUrl(['sh']), [V5]);
  client.send(4, '{"Width":80,"Height":24}{"Width":100,');
  client.send(4, '"Height":40}');
  client.ws.send(Buffer.from([255, 0]));
  await fake.stdinText; // frames are handled in order, so the resizes are in by now
  assert.deepEqual(fake.resizes, [
    { width: 80, height: 24 },
    { width: 100, height: 40 },
  ]);
  fake.exit({ exitCode: 0 });
  await client.closed;
});

test('a malformed CLOSE drops the connection and aborts the session', async () => {
  const fake = prepare(fakeSession());
  const client = await connectChannels(execUrl(['cat']), [V5]);
  client.ws.send(Buffer.from([255, 0, 1]));
  assert.equal(await client.closed, 1006);
  await fake.aborted;
});

test('dropStreams cuts the socket without a status', async () => {
  faults.dropStreams = 1;
  try {
    const fake = prepare(fakeSession());
    const client = await connectChannels(execUrl(['sh']), [V5]);
    fake.stdout.write('first output');
    assert.equal(await client.closed, 1006);
    await fake.aborted;
    assert.equal(client.received.has(3), false);
  } finally {
    faults.dropStreams = 0;
  }
});

test('dropStreams also cuts a session that ends before any output', async () => {
  faults.dropStreams = 1;
  try {
    const fake = prepare(fakeSession());
    const client = await connectChannels(execUrl(['true']), [V5]);
    fake.exit({ exitCode: 0 });
    assert.equal(await client.closed, 1006);
    assert.equal(client.received.has(3), false);
  } finally {
    faults.dropStreams = 0;
  }
});

test('an ApiError from open() is the HTTP answer, with the Status body and no upgrade', async () => {
  nextOpen = () => Promise.reject(badRequest('container main is not running'));
  await assert.rejects(connectChannels(execUrl(['sh']), [V5]), (err: any) => {
    assert.equal(err.statusCode, 400);
    const status = JSON.parse(err.body);
    assert.equal(status.kind, 'Status');
    assert.equal(status.reason, 'BadRequest');
    assert.equal(status.message, 'container main is not running');
    return true;
  });
});

test('only protocols the real server serves are accepted', async () => {
  let opened = false;
  nextOpen = () => {
    opened = true;
    return Promise.reject(new Error('must not be called'));
  };
  await assert.rejects(connectChannels(execUrl(['sh']), ['v3.channel.k8s.io']), (err: any) => err.statusCode === 400);
  assert.equal(opened, false);
});

test('base64 protocol: text frames both ways', async () => {
  let stdinReceived!: (data: Buffer) => void;
  const firstStdin = new Promise<Buffer>((resolve) => (stdinReceived = resolve));
  const stdin = new Writable({
    write(chunk: Buffer, _enc, cb) {
      stdinReceived(chunk);
      cb();
    },
  });
  const fake = prepare(fakeSession({ stdin }));
  const client = await connectChannels(execUrl(['cat']), ['v4.base64.channel.k8s.io']);
  assert.equal(client.protocol, 'v4.base64.channel.k8s.io');
  let textFrames = 0;
  client.ws.on('message', (_d, isBinary) => (textFrames += isBinary ? 0 : 1));
  client.send(0, Buffer.from([0, 1, 2, 250]));
  assert.deepEqual([...(await firstStdin)], [0, 1, 2, 250]);
  fake.stdout.write(Buffer.from([9, 8, 7]));
  fake.exit({ exitCode: 0 });
  await client.closed;
  assert.deepEqual([...Buffer.concat(client.received.get(1)!)], [9, 8, 7]);
  assert.ok(textFrames >= 2);
});

test('channel.k8s.io (pre-v4): the error channel carries text, nothing on success', async () => {
  const ok = prepare(fakeSession());
  const a = await connectChannels(execUrl(['true']), ['channel.k8s.io']);
  ok.exit({ exitCode: 0 });
  await a.closed;
  assert.equal(a.text(3), '');
  const failing = prepare(fakeSession());
  const b = await connectChannels(execUrl(['false']), ['channel.k8s.io']);
  failing.exit({ exitCode: 1 });
  await b.closed;
  assert.match(b.text(3), /^command terminated with non-zero exit code: .*exit code 1$/);
});

test('10 MiB through stdin arrive whole into a slow stdin, with backpressure that keeps it fed', async () => {
  const size = 10 * 1024 * 1024;
  let received = 0;
  let refusals = 0;
  let mostQueued = 0;
  let ranEmpty = 0;
  const slowStdin = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer, _enc, cb) {
      received += chunk.length;
      setImmediate(cb);
    },
  });
  const write = slowStdin.write.bind(slowStdin);
  slowStdin.write = ((chunk: any, ...rest: any[]) => {
    if (slowStdin.writableLength === 0 && received > 0) ranEmpty++;
    const ok = write(chunk, ...rest);
    if (!ok) refusals++;
    mostQueued = Math.max(mostQueued, slowStdin.writableLength);
    return ok;
  }) as typeof slowStdin.write;
  const fake = prepare(fakeSession({ stdin: slowStdin }));
  const client = await connectChannels(execUrl(['cat']), [V5]);
  const block = Buffer.alloc(256 * 1024, 7);
  for (let sent = 0; sent < size; sent += block.length) client.send(0, block);
  client.ws.send(Buffer.from([255, 0]));
  await fake.stdinText;
  assert.equal(received, size);
  assert.ok(refusals > 0, 'stdin signalled backpressure');
  // The socket is paused while 1 MiB waits (one more 256 KiB message may arrive before it stops), and read
  // again before the process has taken everything, as a kubelet's copy keeps the pipe fed.
  assert.ok(mostQueued <= 1024 * 1024 + 256 * 1024, `${mostQueued} bytes were queued`);
  // Waiting for 'drain' let it run empty before every next message (39 of 40 here); now it hardly does.
  assert.ok(ranEmpty < 10, `stdin ran empty ${ranEmpty} times while the client had more`);
  fake.exit({ exitCode: 0 });
  assert.equal(await client.closed, 1000);
});

test('random stdout and stderr in pipe-sized chunks arrive exactly, each on its channel (frames are reused buffers)', async () => {
  const fake = prepare(fakeSession());
  const client = await connectChannels(execUrl(['cat']), [V5]);
  const out = randomBytes(6 * 1024 * 1024);
  const err = randomBytes(2 * 1024 * 1024);
  // sizes up to a pipe read (64 KiB) and one past it, so pooled and unpooled frames alternate
  const sizes = [65536, 1, 4096, 65535, 65537, 30000];
  for (let o = 0, e = 0, i = 0; o < out.length || e < err.length; i++) {
    const n = sizes[i % sizes.length]!;
    if (o < out.length) fake.stdout.write(out.subarray(o, (o += n)));
    if (e < err.length && i % 3 === 0) fake.stderr.write(err.subarray(e, (e += n)));
  }
  fake.exit({ exitCode: 0 });
  await client.closed;
  assert.ok(Buffer.concat(client.received.get(1)!).equals(out), 'stdout arrived byte for byte');
  assert.ok(Buffer.concat(client.received.get(2)!).equals(err), 'stderr arrived byte for byte');
});

test('10 MiB of stdout all arrive before the status', async () => {
  const fake = prepare(fakeSession());
  const client = await connectChannels(execUrl(['cat']), [V5]);
  const block = Buffer.alloc(1024 * 1024, 1);
  for (let i = 0; i < 10; i++) fake.stdout.write(block);
  fake.exit({ exitCode: 0 });
  await client.closed;
  assert.equal(Buffer.concat(client.received.get(1)!).length, 10 * 1024 * 1024);
  assert.equal(JSON.parse(client.text(3)).status, 'Success');
});
