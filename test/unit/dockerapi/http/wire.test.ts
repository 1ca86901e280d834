import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { demux, frame, STDERR, STDOUT } from '../../../../src/dockerapi/http/framing.js';
import { framedWriter } from '../../../../src/dockerapi/logs/framed-writer.js';
import { LogFramer, MESSAGE_BYTES } from '../../../../src/dockerapi/logs/log-frames.js';

/** a followed log chunk's frames, one per line, as one buffer */
const lineFrames = (stream: number, chunk: Buffer): Buffer => Buffer.concat(new LogFramer(stream, 'at-once').push([chunk]));
import { anyMatches, FilterError, labelsMatch, parseFilters } from '../../../../src/dockerapi/filters/filters.js';
import { splitVersion } from '../../../../src/dockerapi/http/http.js';
import { compareVersions } from '../../../../src/dockerapi/http/api-version.js';
import { parseListener } from '../../../../src/dockerapi/http/server.js';
import { isLoopbackAddress } from '../../../../src/dockerapi/http/loopback.js';
import { humanDuration } from '../../../../src/dockerapi/containers/container-view.js';
import { podState } from '../../../../src/dockerapi/containers/pod-state.js';
import { normalizeImage } from '../../../../src/dockerapi/images/image-ref.js';

test('frames carry the stream type and a big-endian length', () => {
  const f = frame(STDERR, Buffer.from('hello'));
  assert.deepEqual([...f.subarray(0, 8)], [2, 0, 0, 0, 0, 0, 0, 5]);
  assert.equal(f.subarray(8).toString(), 'hello');
  const both = Buffer.concat([frame(STDOUT, Buffer.from('a')), frame(STDERR, Buffer.from('bc'))]);
  assert.deepEqual(
    demux(both).map((x) => [x.stream, x.payload.toString()]),
    [
      [1, 'a'],
      [2, 'bc'],
    ],
  );
});

test('framedWriter frames unless tty, and drops empty chunks', async () => {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const w = framedWriter(sink, STDOUT, false);
  w.write(Buffer.alloc(0));
  w.write(Buffer.from('x'));
  const raw = framedWriter(sink, STDOUT, true);
  raw.write(Buffer.from('y'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(Buffer.concat(chunks), Buffer.concat([frame(1, Buffer.from('x')), Buffer.from('y')]));
});

test('logs go out a frame per line; a part without its newline is a frame at once', () => {
  const frames = (chunk: string): string[] => demux(lineFrames(STDOUT, Buffer.from(chunk))).map((f) => f.payload.toString());
  assert.deepEqual(frames('one\ntwo\nthree\n'), ['one\n', 'two\n', 'three\n']);
  assert.deepEqual(frames('a\n\nprompt> '), ['a\n', '\n', 'prompt> ']);
  assert.deepEqual(frames('no newline'), ['no newline']);
  assert.equal(lineFrames(STDERR, Buffer.alloc(0)).length, 0);
  assert.equal(demux(lineFrames(STDERR, Buffer.from('x\n')))[0].stream, STDERR);
});

test('a long line goes out in frames of 16 KiB, as dockerd stores it, across the chunks it came in', () => {
  const framer = new LogFramer(STDOUT, 'at-once');
  const line = Buffer.alloc(MESSAGE_BYTES * 2 + 100, 'x');
  // chunks that do not fall on the message boundaries, and a newline in the last one
  const parts = [line.subarray(0, 10_000), line.subarray(10_000, 30_000), Buffer.concat([line.subarray(30_000), Buffer.from('\nnext')])];
  const sizes = demux(Buffer.concat(framer.push(parts))).map((f) => f.payload.length);
  assert.deepEqual(sizes, [MESSAGE_BYTES, MESSAGE_BYTES, 101, 4]);
});

test('a log read to its end holds a partial line until its message is full, its newline comes or the log ends', () => {
  const framer = new LogFramer(STDERR, 'held');
  assert.deepEqual(framer.push([Buffer.from('abc')]), [], 'held');
  const lines = demux(Buffer.concat(framer.push([Buffer.from('def\ngh')]))).map((f) => f.payload.toString());
  assert.deepEqual(lines, ['abcdef\n']);
  const full = demux(Buffer.concat(framer.push([Buffer.alloc(MESSAGE_BYTES, 'y')])));
  assert.deepEqual(
    full.map((f) => f.payload.length),
    [MESSAGE_BYTES],
    'a full message goes at once',
  );
  assert.equal(full[0].payload.subarray(0, 2).toString(), 'gh');
  const rest = demux(Buffer.concat(framer.flush()));
  assert.deepEqual(
    rest.map((f) => [f.stream, f.payload.toString()]),
    [[STDERR, 'yy']],
  );
  assert.deepEqual(framer.flush(), [], 'nothing twice');
});

test('a framed log writer sends what it held when it ends', async () => {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const w = framedWriter(sink, STDOUT, false, 'held');
  w.write(Buffer.from('no newline'));
  await new Promise<void>((r) => w.end(r));
  assert.deepEqual(
    demux(Buffer.concat(chunks)).map((f) => f.payload.toString()),
    ['no newline'],
  );
});

test('filters: map and list forms; labels AND, other keys OR', () => {
  const m = parseFilters('{"label":{"a=b":true,"c":true},"status":{"running":true,"exited":false}}');
  assert.deepEqual(m.get('label'), ['a=b', 'c']);
  assert.deepEqual(m.get('status'), ['running']);
  const l = parseFilters('{"label":["a=b"],"name":["x","y"]}');
  assert.deepEqual(l.get('name'), ['x', 'y']);
  assert.equal(labelsMatch(['a=b', 'c'], { a: 'b', c: '' }), true);
  assert.equal(labelsMatch(['a=b', 'c'], { a: 'b' }), false, 'every label value must match');
  assert.equal(labelsMatch(['a=b'], { a: 'bb' }), false);
  assert.equal(
    anyMatches(['x', 'y'], (v) => v === 'y'),
    true,
  );
  assert.equal(
    anyMatches(undefined, () => false),
    true,
  );
  assert.throws(() => parseFilters('{nope'), FilterError);
  assert.throws(() => parseFilters('[1]'), FilterError);
});

test('version prefixes are stripped and compared numerically', () => {
  assert.deepEqual(splitVersion('/v1.41/containers/json'), { version: '1.41', path: '/containers/json' });
  assert.deepEqual(splitVersion('/_ping'), { path: '/_ping' });
  assert.ok(compareVersions('1.9', '1.24') < 0);
  assert.ok(compareVersions('1.44', '1.44') === 0);
});

test('listeners as dockerd takes them', () => {
  assert.deepEqual(parseListener('unix:///run/b.sock'), { kind: 'unix', path: '/run/b.sock', spec: 'unix:///run/b.sock' });
  const t = parseListener('tcp://127.0.0.1:2475');
  assert.equal(t.port, 2475);
  assert.equal(t.host, '127.0.0.1');
  assert.throws(() => parseListener('unix://relative.sock'));
  assert.throws(() => parseListener('http://x'));
  assert.equal(isLoopbackAddress('127.0.0.1'), true);
  assert.equal(isLoopbackAddress('0.0.0.0'), false);
});

test('image names get :latest; pod states map to Docker states with the real exit code', () => {
  assert.equal(normalizeImage('busybox'), 'docker.io/library/busybox:latest');
  assert.equal(normalizeImage('localhost:5000/a/b'), 'localhost:5000/a/b:latest');
  assert.equal(normalizeImage('a/b:1'), 'docker.io/a/b:1');
  const term = podState({
    status: {
      containerStatuses: [
        {
          name: 'main',
          image: '',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 7, reason: 'Error', finishedAt: new Date('2024-01-01T00:00:00Z') } },
        },
      ],
    },
  });
  assert.equal(term.status, 'exited');
  assert.equal(term.exitCode, 7);
  assert.equal(term.finishedAt, '2024-01-01T00:00:00.000Z');
  const oom = podState({
    status: {
      containerStatuses: [
        { name: 'main', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } },
      ],
    },
  });
  assert.equal(oom.oomKilled, true);
  const pull = podState({
    status: {
      containerStatuses: [
        { name: 'main', image: '', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: 'nope' } } },
      ],
    },
  });
  assert.equal(pull.status, 'exited');
  assert.match(pull.error ?? '', /ImagePullBackOff/);
  assert.equal(podState({ status: { phase: 'Pending' } }).status, 'created');
  // a running container whose node stopped reporting: exited 255, as dockerd shows one whose machine went down
  const lost = podState({
    spec: { nodeName: 'berth-worker', containers: [{ name: 'main' }] },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'ContainersReady', status: 'True' },
      ],
      containerStatuses: [{ name: 'main', image: '', imageID: '', ready: true, restartCount: 0, state: { running: {} } }],
    },
  });
  assert.equal(lost.status, 'exited');
  assert.equal(lost.exitCode, 255);
  assert.match(lost.error ?? '', /^node berth-worker stopped reporting to the API server/);
  const helper = 'localhost/berth/does-not-exist:1';
  const feed = podState({
    spec: { containers: [{ name: 'main' }], initContainers: [{ name: 'berth-files', image: helper }] },
    status: {
      initContainerStatuses: [
        {
          name: 'berth-files',
          image: helper,
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ErrImagePull', message: 'not found' } },
        },
      ],
    },
  });
  assert.equal(feed.status, 'exited');
  assert.equal(
    feed.error,
    `init container berth-files (the helper image ${helper}, which delivers the files copied before start): ErrImagePull: not found (start berth serve with --helper-image, or $BERTH_HELPER_IMAGE, naming an image with sh and tar that the cluster can pull)`,
  );
});

test("docker ps STATUS durations in docker's words (go-units HumanDuration)", () => {
  const cases: Array<[number, string]> = [
    [400, 'Less than a second'],
    [1_500, '1 second'],
    [59_000, '59 seconds'],
    [61_000, 'About a minute'],
    [150_000, '2 minutes'],
    [3_500_000, '58 minutes'],
    [3_700_000, 'About an hour'],
    [5 * 3_600_000, '5 hours'],
    [72 * 3_600_000, '3 days'],
    [20 * 24 * 3_600_000, '2 weeks'],
    [90 * 24 * 3_600_000, '3 months'],
    [800 * 24 * 3_600_000, '2 years'],
  ];
  for (const [ms, text] of cases) assert.equal(humanDuration(ms), text, `${ms} ms`);
});
