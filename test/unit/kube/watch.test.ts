import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resumableWatch, type WatchQuery, type WatchRequest } from '../../../src/kube/watch.js';

interface Obj {
  metadata?: { name?: string; resourceVersion?: string };
}

/** A fake server: each watch request is recorded and driven by the test. */
function fakeServer(): {
  request: WatchRequest;
  requests: Array<{ query: WatchQuery; send(type: string, obj: unknown): void; end(err?: unknown): void; aborted: boolean }>;
} {
  const requests: Array<{ query: WatchQuery; send(type: string, obj: unknown): void; end(err?: unknown): void; aborted: boolean }> = [];
  const request: WatchRequest = async (query, onEvent, done) => {
    const r = { query, send: onEvent, end: done, aborted: false };
    requests.push(r);
    return { abort: () => void (r.aborted = true) };
  };
  return { request, requests };
}

const obj = (name: string, rv: string): Obj => ({ metadata: { name, resourceVersion: rv } });
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('a watch resumes from the last resourceVersion seen (bookmarks too) after the server ends it', async () => {
  const server = fakeServer();
  const seen: string[] = [];
  const w = resumableWatch<Obj>({
    request: server.request,
    query: { fieldSelector: 'metadata.name=p' },
    onEvent: (type, o) => void seen.push(`${type} ${o.metadata?.resourceVersion}`),
    retryAfter: () => undefined,
  });
  await tick();
  assert.deepEqual(server.requests[0].query, { fieldSelector: 'metadata.name=p', allowWatchBookmarks: true });
  server.requests[0].send('ADDED', obj('p', '5'));
  server.requests[0].send('BOOKMARK', obj('', '7'));
  server.requests[0].end();
  await tick();
  assert.equal(server.requests[1].query.resourceVersion, '7');
  server.requests[1].send('MODIFIED', obj('p', '8'));
  w.stop();
  await w.done;
  assert.equal(server.requests[1].aborted, true);
  assert.deepEqual(seen, ['ADDED 5', 'MODIFIED 8']);
});

test('a reflector lists first, and lists again when its version expired (410)', async () => {
  const server = fakeServer();
  const lists: string[] = [];
  let rv = 10;
  const w = resumableWatch<Obj>({
    request: server.request,
    query: { labelSelector: 'a=b' },
    list: async () => ({ items: [obj('p', String(rv))], resourceVersion: String(rv++) }),
    onList: (items) => void lists.push(items.map((i) => i.metadata?.name).join()),
    onEvent: () => undefined,
    retryAfter: () => 0,
    background: true,
  });
  await tick();
  assert.equal(server.requests[0].query.resourceVersion, '10');
  server.requests[0].send('ERROR', { code: 410 });
  server.requests[0].end();
  await tick();
  assert.equal(server.requests[1].query.resourceVersion, '11');
  assert.deepEqual(lists, ['p', 'p']);
  w.stop();
  await w.done;
});

test('onEvent returning true ends the watch; a failure the policy gives up on rejects done with it', async () => {
  const server = fakeServer();
  const w = resumableWatch<Obj>({ request: server.request, query: {}, onEvent: (type) => type === 'DELETED', retryAfter: () => undefined });
  await tick();
  server.requests[0].send('DELETED', obj('p', '3'));
  await w.done;
  assert.equal(server.requests[0].aborted, true);

  const failures: number[] = [];
  const w2 = resumableWatch<Obj>({
    request: server.request,
    query: {},
    onEvent: () => undefined,
    retryAfter: (_err, n) => {
      failures.push(n);
      return n < 3 ? 0 : undefined;
    },
  });
  await tick();
  server.requests[1].send('ERROR', { code: 500, message: 'boom' });
  await tick();
  server.requests[2].end(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
  await tick();
  server.requests[3].end(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
  await assert.rejects(w2.done, { message: 'socket hang up' });
  assert.deepEqual(failures, [1, 2, 3]);
});
