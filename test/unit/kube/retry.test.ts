// The Kubernetes API's retry policy (src/kube/retry.ts) on a manual clock, with failures shaped as client-node
// raises them: which are tried again, Retry-After, the budget and the sentence that names it, and creates whose
// 409 is read back only when an earlier try may have made the object.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { RetriesSpent } from '../../../src/kube/backoff.js';
import { KubeError, rehintKubeError, statusOf, toKubeError, type KubeAction } from '../../../src/kube/errors.js';
import { createWithRetry, isTransient, KUBE_BACKOFF, retryAfterMs, withRetry } from '../../../src/kube/retry.js';
import { manualClock } from '../../util/manual-clock.js';

const ACTION: KubeAction = { verb: 'create', resource: 'pods', namespace: 'ci', name: 'p', server: 'https://k:6443' };

/** A failed call as client-node reports it: the HTTP code, the server's Status as the body, the headers. */
function apiError(code: number, headers: Record<string, string> = {}, reason = 'Failure'): ApiException<string> {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: `${reason} (${code})` });
  return new ApiException(code, `HTTP ${code}`, body, headers);
}

/** A request whose answer never came: node-fetch's error for a connection reset mid-request. */
function lostAnswer(): Error {
  return Object.assign(new Error('request to https://k:6443/api/v1/namespaces/ci/pods failed, reason: socket hang up'), {
    type: 'system',
    code: 'ECONNRESET',
    errno: 'ECONNRESET',
  });
}

/** A call that fails with `failures` in turn, then answers `answer`. */
function scripted<T>(failures: unknown[], answer: T): { call: () => Promise<T>; calls: () => number } {
  let n = 0;
  return {
    call: async () => {
      const failure = failures[n++];
      if (n > failures.length) return answer;
      throw failure;
    },
    calls: () => n,
  };
}

test('transient failures are 429, 500, 502, 503, 504 and dropped connections; refusals are not', () => {
  for (const code of [429, 500, 502, 503, 504]) assert.ok(isTransient(apiError(code)), `${code}`);
  for (const code of [400, 401, 403, 404, 409, 410, 422]) assert.ok(!isTransient(apiError(code)), `${code}`);
  assert.ok(isTransient(lostAnswer()));
  assert.ok(isTransient(new KubeError('cannot get pods/log', undefined, undefined, lostAnswer())), 'a dropped connection under a sentence');
  assert.ok(isTransient(new Error('other side closed')));
  assert.ok(!isTransient(Object.assign(new Error('getaddrinfo ENOTFOUND k'), { code: 'ENOTFOUND' })));
  assert.ok(!isTransient(new Error('the kubeconfig names no cluster server')));
});

test('Retry-After in seconds, from the headers (either case) or the Status details', () => {
  assert.equal(retryAfterMs(apiError(429, { 'retry-after': '3' })), 3000);
  assert.equal(retryAfterMs(apiError(503, { 'Retry-After': '0' })), 0);
  assert.equal(retryAfterMs(new KubeError('throttled', 429, undefined, { code: 429, headers: { 'retry-after': ['2'] } })), 2000);
  assert.equal(retryAfterMs({ code: 429, body: { code: 429, details: { retryAfterSeconds: 5 } } }), 5000);
  assert.equal(retryAfterMs(apiError(429)), undefined);
  assert.equal(retryAfterMs(apiError(429, { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' })), undefined);
});

test('each transient failure is tried again, each refusal fails at once', async () => {
  for (const failure of [apiError(429), apiError(500), apiError(502), apiError(503), apiError(504), lostAnswer()]) {
    const clock = manualClock();
    const s = scripted([failure], 'ok');
    assert.equal(await withRetry(s.call, { clock }), 'ok');
    assert.equal(s.calls(), 2, `${statusOf(failure).code ?? 'lost answer'} tried again`);
    assert.deepEqual(clock.waits, [100]);
  }
  for (const failure of [apiError(400), apiError(403), apiError(404), apiError(409), apiError(422)]) {
    const clock = manualClock();
    const s = scripted([failure], 'ok');
    await assert.rejects(withRetry(s.call, { clock, action: ACTION }), (err) => err === failure);
    assert.equal(s.calls(), 1, `${statusOf(failure).code} not tried again`);
    assert.deepEqual(clock.waits, []);
  }
});

test('the wait a 429 or 503 asks for in Retry-After is waited in full, even past where the back-off has got', async () => {
  const clock = manualClock();
  const s = scripted([apiError(503, { 'retry-after': '12' }), apiError(429, { 'retry-after': '0' }), apiError(503)], 'ok');
  assert.equal(await withRetry(s.call, { clock }), 'ok');
  // 12 s, all of it (a try sooner is what the server refused); a shorter ask than the back-off's 200 ms does not shorten it
  assert.deepEqual(clock.waits, [12_000, 200, 400]);
});

test('a Retry-After that would pass the budget ends the retries at once: the sentence says the server was retried and names the budget', async () => {
  const clock = manualClock();
  const s = scripted(
    [
      apiError(429, { 'retry-after': '5' }),
      apiError(429, { 'retry-after': '5' }),
      apiError(429, { 'retry-after': '5' }),
      apiError(429, { 'retry-after': '8' }),
    ],
    'ok',
  );
  const err = await withRetry(s.call, { clock, action: ACTION }).catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.equal(err.code, 429);
  assert.deepEqual(clock.waits, [5000, 5000, 5000]);
  assert.equal(
    err.message,
    'the cluster is throttling berth (429 Too Many Requests) while trying to create pods in namespace ci: retry later (tried 4 times over 15 s; the next try, 8 s later, would pass its 15 s retry budget)',
  );
});

test('a 429 that says when to come back is tried 10 times in all, as client-go tries it; the same code without Retry-After, 6', async () => {
  const clock = manualClock();
  const throttled = scripted(
    Array.from({ length: 9 }, () => apiError(429, { 'retry-after': '1' })),
    'ok',
  );
  assert.equal(await withRetry(throttled.call, { clock }), 'ok');
  assert.equal(throttled.calls(), 10);
  assert.deepEqual(clock.waits, [1000, 1000, 1000, 1000, 1600, 2000, 2000, 2000, 2000]);

  const spent = scripted(
    Array.from({ length: 10 }, () => apiError(429, { 'retry-after': '1' })),
    'ok',
  );
  const err = await withRetry(spent.call, { clock: manualClock(), action: ACTION }).catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.equal(spent.calls(), 10);
  assert.match(err.message, /tried 10 times over 13\.6 s\)$/);

  const silent = scripted(
    Array.from({ length: 10 }, () => apiError(429)),
    'ok',
  );
  await assert.rejects(withRetry(silent.call, { clock: manualClock() }));
  assert.equal(silent.calls(), KUBE_BACKOFF.tries);
});

test('the tries run out: the last failure as a sentence, with how often and how long it was tried; its code stays', async () => {
  const clock = manualClock();
  const s = scripted(
    Array.from({ length: 10 }, () => apiError(503, {}, 'ServiceUnavailable')),
    'ok',
  );
  const err = await withRetry(s.call, { clock, action: { ...ACTION, verb: 'get' } }).catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.equal(s.calls(), KUBE_BACKOFF.tries);
  assert.deepEqual(clock.waits, [100, 200, 400, 800, 1600]);
  assert.equal(statusOf(err).code, 503);
  assert.equal(err.message, 'the cluster failed to get pods in namespace ci (503 ServiceUnavailable): ServiceUnavailable (503) (tried 6 times over 3.1 s)');
});

test('without an action the spent retries come back as RetriesSpent, which statusOf and toKubeError see through', async () => {
  const s = scripted(
    Array.from({ length: 10 }, () => apiError(500)),
    'ok',
  );
  const err = await withRetry(s.call, { clock: manualClock(), tries: 2 }).catch((e: unknown) => e);
  assert.ok(err instanceof RetriesSpent);
  assert.equal(statusOf(err).code, 500);
  assert.match(toKubeError(err, ACTION).message, /^the cluster failed to create pods in namespace ci \(500 Failure\): .* \(tried 2 times over 0\.1 s\)$/);
});

test("a face's hints keep the note: an unreachable cluster retried is told again with the face's context setting", async () => {
  const s = scripted(
    Array.from({ length: 10 }, () => lostAnswer()),
    'ok',
  );
  const err = await withRetry(s.call, { clock: manualClock(), tries: 2, action: ACTION }).catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  const told = rehintKubeError(err, { namespaceSetting: '--namespace', roleFile: 'serve-role.yaml', contextSetting: '--context of berth serve' });
  assert.match(told.message, /^cannot reach the cluster at https:\/\/k:6443: socket hang up, tried 2 times over 0\.1 s \(.*--context of berth serve\)$/);
});

test('an unreachable cluster retried: how long it was tried comes with the cause, the fix stays the last words', async () => {
  const s = scripted(
    Array.from({ length: 10 }, () => lostAnswer()),
    'ok',
  );
  const err = await withRetry(s.call, { clock: manualClock(), tries: 3, action: ACTION }).catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.match(
    err.message,
    /^cannot reach the cluster at https:\/\/k:6443: socket hang up, tried 3 times over [0-9.]+ s \(is it running\? check KUBECONFIG and the context: [^)]*\)$/,
  );
});

test('a call may narrow what is tried again (an exec: only an HTTP refusal proves the command never ran)', async () => {
  const dropped = lostAnswer();
  const s = scripted([dropped], 'ok');
  await assert.rejects(withRetry(s.call, { clock: manualClock(), retryable: (err) => statusOf(err).code !== undefined }), (err) => err === dropped);
  assert.equal(s.calls(), 1);
  const t = scripted([apiError(503)], 'ok');
  assert.equal(await withRetry(t.call, { clock: manualClock(), retryable: (err) => statusOf(err).code !== undefined }), 'ok');
});

/** A create scripted by its failures, and a read-back that finds `found` (undefined: not ours). */
function creation(
  failures: unknown[],
  readBacks: unknown[] = [{ name: 'p' }],
): { create: () => Promise<{ name: string }>; readBack: () => Promise<{ name: string } | undefined>; creates: () => number; reads: () => number } {
  const create = scripted(failures, { name: 'p', created: 'by this try' } as { name: string });
  let reads = 0;
  return {
    create: create.call,
    readBack: async () => {
      const next = readBacks[reads++];
      if (next instanceof Error) throw next;
      return next as { name: string } | undefined;
    },
    creates: create.calls,
    reads: () => reads,
  };
}

test('a 409 after a create whose answer was lost is our own object: it is read back, not created twice', async () => {
  const c = creation([lostAnswer(), apiError(409, {}, 'AlreadyExists')]);
  assert.deepEqual(await createWithRetry(c.create, c.readBack, { clock: manualClock(), action: ACTION }), { name: 'p' });
  assert.equal(c.creates(), 2);
  assert.equal(c.reads(), 1);
});

test('a 409 on the first try is a real conflict: not read back, and the create made nothing', async () => {
  const c = creation([apiError(409, {}, 'AlreadyExists')]);
  const err = await createWithRetry(c.create, c.readBack, { clock: manualClock(), action: ACTION }).catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.equal(err.code, 409);
  assert.match(err.message, /^pods p already exists in namespace ci/);
  assert.equal(err.createdNothing, true);
  assert.equal(c.reads(), 0);
});

test('a 409 after tries the server refused (429) is a real conflict too: nothing of ours can exist', async () => {
  const c = creation([apiError(429), apiError(409, {}, 'AlreadyExists')]);
  const err = await createWithRetry(c.create, c.readBack, { clock: manualClock(), action: ACTION }).catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.equal(err.code, 409);
  assert.equal(err.createdNothing, true);
  assert.equal(c.reads(), 0, 'someone else made the object: it must not be taken as ours');
});

test('a 409 after a lost answer whose object is not ours stands; the create may have landed', async () => {
  const c = creation([lostAnswer(), apiError(409, {}, 'AlreadyExists')], [undefined]);
  const err = await createWithRetry(c.create, c.readBack, { clock: manualClock(), action: ACTION }).catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.equal(err.code, 409);
  assert.equal(err.createdNothing, false);
  assert.equal(c.reads(), 1);
});

test('a blip while reading back is tried again; a refused read-back leaves the 409 standing', async () => {
  const c = creation([lostAnswer(), apiError(409, {}, 'AlreadyExists'), apiError(409, {}, 'AlreadyExists')], [apiError(503), { name: 'p' }]);
  assert.deepEqual(await createWithRetry(c.create, c.readBack, { clock: manualClock(), action: ACTION }), { name: 'p' });
  assert.equal(c.creates(), 3);
  assert.equal(c.reads(), 2);

  const d = creation([lostAnswer(), apiError(409, {}, 'AlreadyExists')], [apiError(403)]);
  const err = await createWithRetry(d.create, d.readBack, { clock: manualClock(), action: ACTION }).catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.equal(err.code, 409);
});

test('a create that kept failing says whether it may have made the object, and how long it was retried', async () => {
  const refused = creation(Array.from({ length: 10 }, () => apiError(429)));
  const err = await createWithRetry(refused.create, refused.readBack, { clock: manualClock(), action: ACTION }).catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.equal(err.createdNothing, true);
  assert.match(err.message, /\(tried 6 times over 3\.1 s\)$/);

  const lost = creation([lostAnswer(), ...Array.from({ length: 10 }, () => apiError(429))]);
  const err2 = await createWithRetry(lost.create, lost.readBack, { clock: manualClock(), action: ACTION }).catch((e: unknown) => e);
  assert.ok(err2 instanceof KubeError);
  assert.equal(err2.createdNothing, false, 'the first answer was lost: that try may have made the object');
});
