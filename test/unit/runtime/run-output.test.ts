// The output checks of a run: the log follower (resumes after a break without losing or doubling a byte,
// refuses a log that does not begin with what it delivered) and attach output against the merged log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { KubeCluster } from '../../../src/kube/cluster.js';
import { followLog } from '../../../src/runtime/log-follower.js';
import { RunError } from '../../../src/runtime/run-error.js';
import { reconcileMerged } from '../../../src/runtime/run-output.js';
import { StreamDigest } from '../../../src/runtime/stream-digest.js';

const LOG = Buffer.from(Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join(''));

/** A cluster whose follows break after `cutAt` bytes each time (the first `breaks` follows), then serve the rest. */
function flakyLogs(log: Buffer, breaks: number, cutAt: number, finalLog = log, onFollow: (n: number) => void = () => undefined): KubeCluster {
  let follows = 0;
  return {
    openPodLog: async () => {
      const n = ++follows;
      onFollow(n);
      if (n <= breaks) {
        // the connection drops mid-stream: some bytes, then an error
        const s = new Readable({ read() {} });
        s.push(log.subarray(0, Math.min(log.length, cutAt * n)));
        setImmediate(() => s.destroy(new Error('socket hang up')));
        return s as unknown as IncomingMessage;
      }
      return Readable.from([log]) as unknown as IncomingMessage;
    },
    readPodLog: async () => finalLog,
  } as unknown as KubeCluster;
}

async function follow(kube: KubeCluster, ended: Promise<unknown> = Promise.resolve()) {
  const out = new PassThrough();
  const collected = buffer(out);
  const digest = await followLog({
    kube,
    pod: 'p',
    container: 'main',
    stream: 'Stdout',
    out,
    ended,
    signal: new AbortController().signal,
    trace: () => undefined,
  });
  out.end();
  return { digest, bytes: await collected };
}

test('a follow that breaks three times still delivers every byte once', async () => {
  // the container ends only once the fourth follow (the first whole one) is open
  let ended!: () => void;
  const containerEnded = new Promise<void>((resolve) => (ended = resolve));
  let opened = 0;
  const { digest, bytes } = await follow(
    flakyLogs(LOG, 3, 500, LOG, (n) => (opened = n) === 4 && setImmediate(ended)),
    containerEnded,
  );
  assert.equal(opened, 4);
  assert.ok(bytes.equals(LOG));
  assert.equal(digest.bytes, LOG.length);
});

test('what a follow missed before the container ended comes from the whole log', async () => {
  // the only follow breaks after 100 bytes; the container has ended, so the rest is read once
  const kube = flakyLogs(LOG, 1, 100);
  (kube as { openPodLog: unknown }).openPodLog = async () => {
    const s = new Readable({ read() {} });
    s.push(LOG.subarray(0, 100));
    setImmediate(() => s.destroy(new Error('ECONNRESET')));
    return s;
  };
  const { bytes } = await follow(kube);
  assert.ok(bytes.equals(LOG));
});

test('a log that does not begin with what was delivered fails the run instead of delivering it', async () => {
  const changed = Buffer.from(LOG.toString().replace('line 3\n', 'line X\n'));
  await assert.rejects(
    follow(flakyLogs(LOG, 1, 500, changed)),
    (e: unknown) => e instanceof RunError && /does not match what berth delivered/.test((e as Error).message),
  );
});

function seen(stdout: string, stderr: string) {
  const d = { stdout: new StreamDigest(), stderr: new StreamDigest() };
  d.stdout.add(Buffer.from(stdout));
  d.stderr.add(Buffer.from(stderr));
  return d;
}

test('attach output against the merged log: equal, missed, nothing seen, TTY tail, rotated', () => {
  const log = Buffer.from('out\nerr\nmore\n');
  assert.equal(reconcileMerged(log, seen('out\nmore\n', 'err\n'), false, true).kind, 'exact');
  assert.equal(reconcileMerged(log, seen('out\n', 'err\n'), false, false).kind, 'lost');
  assert.equal(reconcileMerged(log, seen('', ''), false, true).kind, 'merged');
  const tail = reconcileMerged(log, seen('out\n', ''), true, false);
  assert.deepEqual(tail.kind === 'tail' && tail.stdout.toString(), 'err\nmore\n');
  // a log shorter than what was received: rotated; trusted only when the session ended with its status
  assert.equal(reconcileMerged(Buffer.from('x\n'), seen('out\nerr\n', ''), false, true).kind, 'exact');
  assert.equal(reconcileMerged(Buffer.from('x\n'), seen('out\nerr\n', ''), false, false).kind, 'lost');
});
