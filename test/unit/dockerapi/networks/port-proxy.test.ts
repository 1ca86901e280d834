// Published ports' pure parts (backoff, mode choice, what is retried) and the proxy over real loopback sockets.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { backoffDelay, retrySchedule, RetriesSpent } from '../../../../src/kube/backoff.js';
import { KubeError } from '../../../../src/kube/errors.js';
import { DEFAULT_BACKOFF, PortProxy, PortTargetGone, isRetryable, openWithRetry, resolvePortMode } from '../../../../src/dockerapi/networks/port-proxy.js';
import { manualClock } from '../../../util/manual-clock.js';
import { closedPort, startEchoServer } from '../../../util/tcp.js';

test('backoff doubles from 100 ms, is capped, and the schedule fits the budget', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6].map((i) => backoffDelay(i, DEFAULT_BACKOFF)),
    [100, 200, 400, 800, 1600, 2000, 2000],
  );
  assert.equal(backoffDelay(1000, DEFAULT_BACKOFF), 2000);
  const schedule = retrySchedule(DEFAULT_BACKOFF);
  assert.deepEqual(schedule, [100, 200, 400, 800, 1600, 2000, 2000, 2000]);
  assert.ok(schedule.reduce((a, b) => a + b, 0) <= DEFAULT_BACKOFF.budgetMs);
  assert.deepEqual(retrySchedule({ initialMs: 50, maxMs: 60, budgetMs: 100 }), [50]);
});

test('auto mode is direct only with the in-cluster service account', () => {
  assert.equal(resolvePortMode('auto', 'in-cluster'), 'direct');
  assert.equal(resolvePortMode('auto', '/home/u/.kube/config'), 'forward');
  assert.equal(resolvePortMode('forward', 'in-cluster'), 'forward');
  assert.equal(resolvePortMode('direct', '/x'), 'direct');
  assert.throws(() => resolvePortMode('tunnel', '/x'), /--port-mode tunnel: give forward, direct or auto/);
});

test('busy or unreachable servers and missing pods are retried; refusals that stay are not', () => {
  assert.ok(isRetryable(new KubeError('busy', 500)));
  assert.ok(isRetryable(new KubeError('throttled', 429)));
  assert.ok(isRetryable(new KubeError('pod replaced', 404)));
  assert.ok(isRetryable(new KubeError('cannot reach the cluster')));
  assert.ok(isRetryable(Object.assign(new Error('no route'), { code: 'EHOSTUNREACH' })));
  assert.ok(!isRetryable(new KubeError('forbidden', 403)));
  assert.ok(!isRetryable(new KubeError('completed pod', 400)));
  assert.ok(!isRetryable(new PortTargetGone('exited')));
  assert.ok(!isRetryable(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })));
});

test('openWithRetry: succeeds after failures, stops at once on a final error, gives up after the budget', async () => {
  const fast = { initialMs: 5, maxMs: 20, budgetMs: 200 };
  let calls = 0;
  assert.equal(await openWithRetry(async () => (++calls < 4 ? Promise.reject(new KubeError('busy', 500)) : 'open'), { backoff: fast }), 'open');
  assert.equal(calls, 4);

  calls = 0;
  await assert.rejects(
    openWithRetry(async () => (calls++, Promise.reject(new KubeError('forbidden', 403))), { backoff: fast }),
    /forbidden/,
  );
  assert.equal(calls, 1);

  calls = 0;
  const started = Date.now();
  await assert.rejects(
    openWithRetry(async () => (calls++, Promise.reject(new KubeError('busy', 503))), { backoff: fast }),
    /busy/,
  );
  assert.ok(calls > 3, `${calls} attempts`);
  assert.ok(Date.now() - started < 1000);

  calls = 0;
  await assert.rejects(
    openWithRetry(async () => (calls++, Promise.reject(new KubeError('busy', 503))), { backoff: fast, cancelled: () => calls >= 2 }),
    /busy/,
  );
  assert.equal(calls, 2);
});

test('openWithRetry counts its budget from the first failure and ends with RetriesSpent, the last failure inside', async () => {
  const clock = manualClock();
  let calls = 0;
  const busy = new KubeError('busy', 503);
  const open = async (): Promise<never> => {
    // the first try waits 30 s for its pod: not spent from the budget
    if (++calls === 1) clock.advance(30_000);
    throw busy;
  };
  const err = await openWithRetry(open, { clock }).catch((e: unknown) => e);
  assert.ok(err instanceof RetriesSpent);
  assert.equal(err.last, busy);
  assert.deepEqual(clock.waits, retrySchedule(DEFAULT_BACKOFF));
  assert.equal(calls, clock.waits.length + 1);
});

/** A published port on loopback whose connections go through `proxy` to `target`. */
async function listen(proxy: PortProxy, port: number, target: () => Promise<{ podName: string; podIP?: string }>): Promise<{ port: number; close(): void }> {
  const server = net.createServer({ allowHalfOpen: true }, (s) => void proxy.handle(s, port, 'container t', target));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

function exchange(port: number, send: string, opts: { halfClose?: boolean } = {}): Promise<{ data: string; reset: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let data = '';
    let reset = false;
    s.on('data', (d: Buffer) => (data += d.toString()));
    s.on('error', () => (reset = true));
    s.on('close', () => resolve({ data, reset }));
    s.write(send);
    if (opts.halfClose) s.end();
  });
}

test('direct mode: bytes sent before the way opens arrive, the half-close is passed on, the answer comes back', async () => {
  const echo = await startEchoServer();
  const logs: string[] = [];
  let attempts = 0;
  const proxy = new PortProxy({
    mode: 'direct',
    forward: () => Promise.reject(new Error('no forwards in direct mode')),
    log: (l) => logs.push(l),
    backoff: { initialMs: 10, maxMs: 40, budgetMs: 2000 },
  });
  // The first two attempts find no pod IP yet (a pod still being scheduled): retried without losing the client's bytes.
  const published = await listen(proxy, echo.port, async () => ({ podName: 'p', podIP: ++attempts > 2 ? '127.0.0.1' : undefined }));
  try {
    const r = await exchange(published.port, 'sent before the pod had an IP', { halfClose: true });
    assert.deepEqual(r, { data: 'sent before the pod had an IP', reset: false });
    assert.equal(attempts, 3);
    assert.deepEqual(logs, []);
  } finally {
    published.close();
    await echo.close();
  }
});

test('a final failure resets the client and is logged once for any number of connections; a gone container is not logged', async () => {
  const refused = await closedPort();
  const logs: string[] = [];
  const proxy = new PortProxy({ mode: 'direct', forward: () => Promise.reject(new Error('unused')), log: (l) => logs.push(l) });
  const published = await listen(proxy, refused, async () => ({ podName: 'p', podIP: '127.0.0.1' }));
  try {
    for (let i = 0; i < 3; i++) assert.deepEqual(await exchange(published.port, 'x'), { data: '', reset: true });
    assert.equal(logs.length, 1, logs.join('\n'));
    assert.match(logs[0]!, /^container t: cannot open a connection to port \d+: .*ECONNREFUSED.* \(the connection was closed\)$/);
  } finally {
    published.close();
  }
  const gone = new PortProxy({ mode: 'forward', forward: () => Promise.reject(new Error('unused')), log: (l) => logs.push(l) });
  const published2 = await listen(gone, 80, async () => Promise.reject(new PortTargetGone('container t is exited')));
  try {
    assert.equal((await exchange(published2.port, 'x')).data, '');
    assert.equal(logs.length, 1);
  } finally {
    published2.close();
  }
});

test('a way that stays refused past the budget resets the client and is logged once, saying how long it was retried', async () => {
  const logs: string[] = [];
  let forwards = 0;
  const forward = async (): Promise<never> => {
    forwards++;
    throw new KubeError('the cluster failed to create pods/portforward (503): busy', 503);
  };
  const proxy = new PortProxy({ mode: 'forward', forward, log: (l) => logs.push(l), clock: manualClock() });
  const published = await listen(proxy, 80, async () => ({ podName: 'p' }));
  try {
    for (let i = 0; i < 2; i++) assert.deepEqual(await exchange(published.port, 'x'), { data: '', reset: true });
    assert.equal(forwards, 2 * (retrySchedule(DEFAULT_BACKOFF).length + 1));
    assert.deepEqual(logs, [
      'container t: cannot open a port-forward to port 80 (retried for 10 s): the cluster failed to create pods/portforward (503): busy (the connection was closed)',
    ]);
  } finally {
    published.close();
  }
});
