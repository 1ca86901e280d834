// An image served from a pod (src/runtime/image-serving.ts) on an in-memory cluster whose kubelet the test drives:
// the reference names the pod's address and the digest once the server is ready; whatever fails on the way (the copy,
// the server) deletes the pod, and the error says why.
import assert from 'node:assert/strict';
import type { Readable, Writable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { test } from 'node:test';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { FeedSession } from '../../../src/runtime/file-feed.js';
import { IMAGE_FEED_CONTAINER, IMAGE_SERVER_CONTAINER, type ImagePodContext } from '../../../src/runtime/image-pod.js';
import { serveImage, type CertificateIssuer, type ImageServingCluster } from '../../../src/runtime/image-serving.js';
import { extract } from 'tar-stream';

const DIGEST = `sha256:${'c'.repeat(64)}`;

/** What the kubelet does once the image arrived: the server becomes ready, or fails with its last words. */
type ServerFate = { ready: true } | { exitCode: number; log: string };

class FakeCluster implements ImageServingCluster {
  readonly namespace = 'ci';
  readonly calls: string[] = [];
  fed = Buffer.alloc(0);
  private pod: V1Pod | undefined;
  private readonly watchers = new Set<(pod: V1Pod, type: string) => boolean>();
  private log = '';

  constructor(private readonly fate: ServerFate & { receiverExit?: number }) {}

  created: V1Pod | undefined;

  async createPod(pod: V1Pod): Promise<V1Pod> {
    this.calls.push(`create ${pod.metadata?.name}`);
    this.created = pod;
    this.pod = { ...structuredClone(pod), status: { phase: 'Pending', podIP: '10.244.0.9' } };
    setImmediate(() => this.set({ initContainerStatuses: [status(IMAGE_FEED_CONTAINER, { running: { startedAt: new Date() } })] }));
    return pod;
  }

  async deletePod(name: string): Promise<void> {
    this.calls.push(`delete ${name}`);
  }

  watchPod(_name: string, onPod: (pod: V1Pod, type: string) => boolean, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      this.watchers.add(onPod);
      if (this.pod) queueMicrotask(() => onPod(structuredClone(this.pod!), 'ADDED'));
      signal?.addEventListener('abort', () => (this.watchers.delete(onPod), resolve()));
    });
  }

  async readPodLog(_name: string, container: string): Promise<Buffer> {
    return Buffer.from(container === IMAGE_SERVER_CONTAINER ? this.log : '');
  }

  async attachFeed(_pod: string, _container: string, stdin: Readable, _stderr: Writable): Promise<FeedSession> {
    const done = buffer(stdin).then((b) => {
      this.fed = b;
      this.afterFeed();
    });
    return { done, supportsStdinClose: true, stdinSent: done, close: () => undefined };
  }

  private afterFeed(): void {
    const exitCode = this.fate.receiverExit ?? 0;
    this.set({ initContainerStatuses: [status(IMAGE_FEED_CONTAINER, { terminated: { exitCode } })] });
    if (exitCode !== 0) return;
    if ('ready' in this.fate) {
      this.set({
        containerStatuses: [status(IMAGE_SERVER_CONTAINER, { running: { startedAt: new Date() } })],
        conditions: [{ type: 'Ready', status: 'True' }],
      });
    } else {
      this.log = this.fate.log;
      this.set({ containerStatuses: [status(IMAGE_SERVER_CONTAINER, { terminated: { exitCode: this.fate.exitCode } })] });
    }
  }

  private set(s: Partial<NonNullable<V1Pod['status']>>): void {
    this.pod = { ...this.pod!, status: { ...this.pod!.status, ...s } };
    for (const w of this.watchers) w(structuredClone(this.pod), 'MODIFIED');
  }
}

function status(name: string, state: V1ContainerStatus['state']): V1ContainerStatus {
  return { name, state, image: 'x', imageID: '', ready: false, restartCount: 0 };
}

const pod: ImagePodContext = {
  namespace: 'ci',
  owner: 'unit',
  runId: 'abcd1234',
  now: new Date(),
  ttlSeconds: 600,
  serverImage: 'localhost/berth/berth:dev',
  helperImage: 'localhost/berth/busybox:1',
  labels: {},
  annotations: {},
};

const serve = (cluster: FakeCluster, certificate?: CertificateIssuer) =>
  serveImage({
    cluster,
    pod,
    repository: 'berth/img',
    digest: DIGEST,
    layout: async (add) => add({ name: 'index.json', type: 'file' }, Buffer.from('{}')),
    startTimeoutSeconds: 5,
    ...(certificate ? { certificate } : {}),
  });

/** The entries of a tar, with their modes, in order. */
async function tarEntries(tar: Buffer): Promise<Array<{ name: string; mode: number; body: string }>> {
  const out: Array<{ name: string; mode: number; body: string }> = [];
  const ex = extract();
  ex.on('entry', (header, stream, next) => {
    void buffer(stream).then((b) => {
      out.push({ name: header.name, mode: header.mode ?? 0, body: b.toString() });
      next();
    });
  });
  const done = new Promise<void>((resolve, reject) => ex.on('finish', () => resolve()).on('error', reject));
  ex.end(tar);
  await done;
  return out;
}

test('with an image CA: the certificate issued for the pod address and its key arrive ahead of the layout, the key for the server alone, and the server presents them', async () => {
  const cluster = new FakeCluster({ ready: true });
  const asked: string[][] = [];
  const served = await serve(cluster, (ips) => (asked.push(ips), { cert: 'CERT', key: 'KEY' }));
  assert.deepEqual(asked, [['10.244.0.9']]);
  const entries = await tarEntries(cluster.fed);
  const names = entries.map((e) => e.name.replace(/\/$/, ''));
  assert.deepEqual(names.slice(0, 4), ['.berth-tls', '.berth-tls/tls.crt', '.berth-tls/tls.key', 'index.json']);
  assert.equal(entries[2].body, 'KEY');
  assert.equal(entries[2].mode & 0o077, 0, 'the key is readable by its owner only');
  const command = cluster.created?.spec?.containers[0].command ?? [];
  assert.deepEqual(command.slice(-4), ['--cert', '/image/.berth-tls/tls.crt', '--key', '/image/.berth-tls/tls.key']);
  await served.release();
});

test('without an image CA the server makes its own certificate: no --cert, nothing but the layout fed', async () => {
  const cluster = new FakeCluster({ ready: true });
  await (await serve(cluster)).release();
  assert.ok(!(cluster.created?.spec?.containers[0].command ?? []).includes('--cert'));
  assert.ok(!cluster.fed.toString('latin1').includes('.berth-tls'));
});

test('the image is fed into its pod; once the server is ready the reference is the pod address and the digest; release deletes the pod', async () => {
  const cluster = new FakeCluster({ ready: true });
  const served = await serve(cluster);
  assert.equal(served.reference, `10.244.0.9:5443/berth/img@${DIGEST}`);
  assert.match(cluster.fed.toString('latin1'), /index\.json/, 'the layout went through the feed');
  assert.deepEqual(cluster.calls, ['create image-abcd1234']);
  await served.release();
  assert.deepEqual(cluster.calls, ['create image-abcd1234', 'delete image-abcd1234']);
});

test('a server that exits: the error has its exit code and last words and names --image-server; the pod is deleted', async () => {
  const cluster = new FakeCluster({ exitCode: 1, log: 'berth image-serve: no such file /image/index.json\n' });
  await assert.rejects(
    serve(cluster),
    /the image server in pod image-abcd1234 did not start: .*\(berth image-serve: no such file \/image\/index\.json\); --image-server names the berth image/,
  );
  assert.deepEqual(cluster.calls, ['create image-abcd1234', 'delete image-abcd1234']);
});

test('a copy that the receiver refused: the error says the image could not be copied; the pod is deleted', async () => {
  const cluster = new FakeCluster({ ready: true, receiverExit: 1 });
  await assert.rejects(serve(cluster), /the image could not be copied into pod image-abcd1234/);
  assert.deepEqual(cluster.calls, ['create image-abcd1234', 'delete image-abcd1234']);
});
