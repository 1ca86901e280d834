// The one file feed (runtime/feed-receiver.ts plans the receiver, file-feed.ts sends): the receiver each face plans,
// and the sender's protocol against a fake attach whose receiver unpacks what arrives as tar would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { extract } from 'tar-stream';
import { planFeedReceiver } from '../../../src/runtime/feed-receiver.js';
import { sendFeed, type FeedAttach, type FeedSession } from '../../../src/runtime/file-feed.js';
import type { ContainerView } from '../../../src/runtime/pod-status.js';
import { planWorkload, FILES_CONTAINER } from '../../../src/runtime/plan.js';
import { INPUTS_CONTAINER, inputsFeed } from '../../../src/task/pod-plan.js';
import { feedPods } from './feed-pods.js';

const plan = { container: 'berth-files', marker: '.berth-complete' };

/** The names in an archive, and whether it ended with the marker (as the receiver's `test -e` would see it). */
async function names(tar: Buffer): Promise<string[]> {
  const out: string[] = [];
  const ex = extract();
  ex.on('entry', (h, s, next) => {
    out.push(h.name);
    s.on('end', next).resume();
  });
  await new Promise<void>((resolve, reject) => ex.on('finish', resolve).on('error', reject).end(tar));
  return out;
}

interface FakeReceiver extends FeedAttach {
  received: Promise<Buffer>;
  closed: boolean;
  ended(): Promise<ContainerView>;
}

/** A receiver that reads stdin to its end (or `cutAt` bytes), then exits as `exit` says, saying `stderr`. */
function receiver(o: { cutAt?: number; v5?: boolean; exit?: (tar: Buffer) => number; stderr?: string; neverEnds?: boolean } = {}): FakeReceiver {
  let end: (v: ContainerView) => void = () => undefined;
  const ended = new Promise<ContainerView>((resolve) => (end = resolve));
  let received: (b: Buffer) => void = () => undefined;
  const r: FakeReceiver = {
    closed: false,
    received: new Promise((resolve) => (received = resolve)),
    ended: () => ended,
    async attachFeed(_pod: string, _container: string, stdin: Readable, stderr: Writable): Promise<FeedSession> {
      let done: () => void = () => undefined;
      const session: FeedSession = {
        done: new Promise<void>((resolve) => (done = resolve)),
        supportsStdinClose: o.v5 ?? true,
        stdinSent: buffer(stdin).then(
          (all) => {
            const tar = o.cutAt === undefined ? all : all.subarray(0, o.cutAt);
            received(tar);
            if (o.neverEnds) return;
            const code = o.exit ? o.exit(tar) : 0;
            if (o.stderr) stderr.write(o.stderr);
            end({ state: 'terminated', exitCode: code });
            done();
          },
          () => undefined,
        ),
        close: () => {
          r.closed = true;
          stdin.destroy();
          done();
        },
      };
      return session;
    },
  };
  return r;
}

/** As the receiver's `test -e` would see it: whether the marker's header arrived. */
const markerArrived = (tar: Buffer): boolean => tar.includes(plan.marker);

test("a feed that arrives whole is delivered, the face's entries first and the marker last", async () => {
  const r = receiver();
  const result = await sendFeed({
    cluster: r,
    pod: 'p',
    plan,
    content: async (add) => {
      await add({ name: 'm0', type: 'directory', mode: 0o755 });
      await add({ name: 'm0/a.txt', type: 'file', mode: 0o644 }, Buffer.from('a\n'));
      await add({ name: 'm0/big', type: 'file', mode: 0o644, size: 3 }, PassThrough.from([Buffer.from('xyz')]));
    },
    ended: r.ended,
  });
  assert.deepEqual(result, { delivered: true });
  const tar = await r.received;
  assert.deepEqual(await names(tar), ['m0', 'm0/a.txt', 'm0/big', '.berth-complete']);
  assert.equal(tar.length % 10240, 0, 'padded to whole records: tar reaches the end marker without EOF');
  assert.ok(r.closed, 'the session is closed once the receiver ended');
});

test('a feed cut midway: the receiver misses the marker and its exit code and words come back', async () => {
  const r = receiver({
    cutAt: 1024,
    exit: () => 1,
    stderr: 'berth: the file copy stream was cut before its end\n',
  });
  const result = await sendFeed({
    cluster: r,
    pod: 'p',
    plan,
    content: async (add) => add({ name: 'f', type: 'file', mode: 0o644 }, Buffer.alloc(4096, 1)),
    ended: r.ended,
  });
  const sawMarker = markerArrived(await r.received);
  assert.equal(sawMarker, false);
  assert.deepEqual(result, { delivered: false, exitCode: 1, why: 'berth: the file copy stream was cut before its end' });
});

test('a receiver that reports failure: its log tail when its stderr did not come through', async () => {
  const r = receiver({ exit: () => 3 });
  const result = await sendFeed({ cluster: r, pod: 'p', plan, content: async () => undefined, ended: r.ended, logTail: async () => 'mkdir: out: File exists' });
  assert.deepEqual(result, { delivered: false, exitCode: 3, why: 'mkdir: out: File exists' });
});

test("an attach that cannot open is no delivery, with its reason; a failing source is the source's failure", async () => {
  const refused: FeedAttach = { attachFeed: () => Promise.reject(new Error('forbidden: cannot create pods/attach')) };
  const never = (): Promise<ContainerView> => new Promise(() => undefined);
  assert.deepEqual(await sendFeed({ cluster: refused, pod: 'p', plan, content: async () => undefined, ended: never }), {
    delivered: false,
    why: 'forbidden: cannot create pods/attach',
  });
  const r = receiver({ neverEnds: true });
  const unreadable = new Error('input `src`: cannot read /src/secret (EACCES)');
  await assert.rejects(sendFeed({ cluster: r, pod: 'p', plan, content: () => Promise.reject(unreadable), ended: r.ended }), (err) => err === unreadable);
  assert.ok(r.closed, 'the session is closed: the receiver then sees its input end without the marker');
});

test("a receiver that never ends: the face's deadline ends the feed, and the session is closed", async () => {
  const r = receiver({ neverEnds: true });
  const timeout = new Error('the file copy did not finish within the start timeout');
  await assert.rejects(
    sendFeed({ cluster: r, pod: 'p', plan, content: async () => undefined, ended: () => new Promise((_, reject) => setTimeout(() => reject(timeout), 20)) }),
    (err) => err === timeout,
  );
  assert.ok(r.closed);
});

test("without v5 the sender ends the session once all of stdin is sent (the receiver's stdinOnce ends its input)", async () => {
  const r = receiver({ v5: false, neverEnds: true });
  let end: (v: ContainerView) => void = () => undefined;
  const ended = new Promise<ContainerView>((resolve) => (end = resolve));
  const sent = sendFeed({ cluster: r, pod: 'p', plan, content: async () => undefined, ended: () => ended });
  await r.received;
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(r.closed, 'closed before the receiver ended: busybox tar waits for EOF');
  end({ state: 'terminated', exitCode: 0 });
  assert.deepEqual(await sent, { delivered: true });
});

test('each face plans its receiver through the same planner: stdin once, locked down, the marker checked', async () => {
  const pods = await feedPods();
  const receivers = [
    ['shim', pods['shim: mounts and stdin as a file'], FILES_CONTAINER, { runAsUser: 1000, runAsGroup: 1000 }],
    ['fn', pods['fn: stdin as a file only'], FILES_CONTAINER, { runAsUser: 65534, runAsGroup: 65534 }],
    ['task', pods['task: inputs, outputs, params, run.dir'], INPUTS_CONTAINER, {}],
  ] as const;
  for (const [face, pod, name, user] of receivers) {
    const c = pod.spec?.initContainers?.find((x) => x.name === name);
    assert.ok(c, `${face}: its receiver`);
    assert.equal(c.stdin, true, face);
    assert.equal(c.stdinOnce, true, face);
    assert.deepEqual(c.securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, ...user }, face);
    assert.match(
      c.command?.[2] ?? '',
      /^tar -x -o -f - -C \S+ && test -e \S+ \|\| \{ echo 'berth: the (file copy|inputs) stream was cut before its end' >&2; exit 1; \}/,
      face,
    );
  }
  // the volume the shim's receiver fills, and the main container's view of it
  const shim = pods['shim: mounts and stdin as a file'];
  assert.deepEqual(
    shim.spec?.volumes?.find((v) => v.name === 'berth-files'),
    { name: 'berth-files', emptyDir: {} },
  );
  assert.deepEqual(shim.spec?.initContainers?.[0].volumeMounts, [{ name: 'berth-files', mountPath: '/berth' }]);
  assert.equal(inputsFeed.container, INPUTS_CONTAINER);
});

test('a receiver with follow-up lines ends with 1 when the receipt failed, and can run as the container it feeds', () => {
  const c = planFeedReceiver({
    ...plan,
    image: 'helper:1',
    dir: "/w/it's",
    carries: 'inputs',
    quoted: true,
    removeMarker: true,
    then: ['mkdir -p out || exit 3'],
    runAs: 'fed container',
    volumeMounts: [],
  });
  assert.equal(
    c.command?.[2],
    "tar -x -o -f - -C '/w/it'\\''s' && test -e '/w/it'\\''s/.berth-complete' || { echo 'berth: the inputs stream was cut before its end' >&2; exit 1; } && rm -f '/w/it'\\''s/.berth-complete' || exit 1\nmkdir -p out || exit 3",
  );
  assert.equal(c.securityContext, undefined, "the sandbox planner gives it the fed container's");
  assert.equal(planWorkload({ image: 'x' }, { namespace: 'n', owner: 'o', now: new Date(0), ttlSeconds: 1 }).mountData.feed, undefined);
});
