// ClusterClient (src/kube/client.ts) against a stand-in for the API server on loopback, which answers each request
// as a test scripts it (or drops the connection after taking the request in), on a manual clock: its creates read
// back after a 409 that followed a lost answer, its reads wait what a throttled server asks, and its failures say
// how long they were retried.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { ClusterClient } from '../../../src/kube/client.js';
import { KubeError } from '../../../src/kube/errors.js';
import { manualClock, type ManualClock } from '../../util/manual-clock.js';
import { stubKubeConfig } from '../../util/stub-kubeconfig.js';

/** What the stand-in does with one request: answer it, or take it in and drop the connection (the answer is lost). */
type Reply = { status: number; body: unknown; headers?: Record<string, string> } | 'drop';
type Script = (req: { method: string; path: string; body: unknown }) => Reply;

let server: http.Server;
let url: string;
let script: Script[] = [];
let seen: string[] = [];
let pods = new Map<string, V1Pod>();

before(async () => {
  server = http.createServer((req, res) => void answer(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  script = [];
  seen = [];
  pods = new Map();
});

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString();
  const request = { method: req.method ?? '', path: (req.url ?? '').split('?')[0], body: text ? JSON.parse(text) : undefined };
  seen.push(`${request.method} ${request.path}`);
  const step = script.shift();
  const reply = step ? step(request) : { status: 500, body: status(500, 'InternalError', `nothing scripted for ${request.method} ${request.path}`) };
  if (reply === 'drop') return void req.socket.destroy();
  res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
  res.end(JSON.stringify(reply.body));
}

function status(code: number, reason: string, message: string): object {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

/** The API server's create: stores the pod under its name, or 409 when one is there. */
const create: Script = ({ body }) => {
  const pod = body as V1Pod;
  const name = pod.metadata?.name ?? '';
  if (pods.has(name)) return { status: 409, body: status(409, 'AlreadyExists', `pods "${name}" already exists`) };
  pods.set(name, { ...pod, metadata: { ...pod.metadata, uid: `uid-${name}`, resourceVersion: '1' } });
  return { status: 201, body: pods.get(name) };
};
/** A create that takes effect, whose answer never reaches berth. */
const createAndDrop: Script = (req) => (create(req), 'drop');
const read: Script = ({ path }) => {
  const pod = pods.get(path.split('/').pop() ?? '');
  return pod ? { status: 200, body: pod } : { status: 404, body: status(404, 'NotFound', 'pods not found') };
};
const unavailable =
  (retryAfter: string): Script =>
  () => ({
    status: 503,
    body: status(503, 'ServiceUnavailable', 'the server is currently unable to handle the request'),
    headers: { 'retry-after': retryAfter },
  });

function client(clock: ManualClock): ClusterClient {
  return new ClusterClient(stubKubeConfig(url), 'ci', { clock });
}

const POD: V1Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', labels: { 'app.kubernetes.io/managed-by': 'berth', 'berth.dev/run': 'r1' } },
  spec: { containers: [{ name: 'main', image: 'busybox' }] },
};
const PODS = '/api/v1/namespaces/ci/pods';

test('a create whose answer was lost: the retry meets 409 and reads the pod back; it is created once', async () => {
  script = [createAndDrop, create, read];
  const clock = manualClock();
  const made = await client(clock).createPod(POD);
  assert.equal(made.metadata?.uid, 'uid-p', 'the pod the server holds');
  assert.deepEqual(seen, [`POST ${PODS}`, `POST ${PODS}`, `GET ${PODS}/p`]);
  assert.equal(pods.size, 1);
  assert.deepEqual(clock.waits, [100]);
});

test('a 409 on the first create is a real conflict: nothing is read back, and the create made nothing', async () => {
  pods.set('p', { ...POD, metadata: { name: 'p', labels: { other: 'owner' } } });
  script = [create, read];
  const err = await client(manualClock())
    .createPod(POD)
    .catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.match(err.message, /^pods p already exists in namespace ci: pods "p" already exists$/);
  assert.equal(err.createdNothing, true);
  assert.deepEqual(seen, [`POST ${PODS}`]);
});

test('a 409 after a lost answer on a pod that is not ours stands (someone else made it meanwhile)', async () => {
  const theirs: Script = () => (pods.set('p', { ...POD, metadata: { name: 'p', labels: { other: 'owner' } } }), 'drop');
  script = [theirs, create, read];
  const err = await client(manualClock())
    .createPod(POD)
    .catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.equal(err.code, 409);
  assert.equal(err.createdNothing, false, 'the lost try may have landed');
  assert.deepEqual(seen, [`POST ${PODS}`, `POST ${PODS}`, `GET ${PODS}/p`]);
});

test('a 409 after a try the server refused (429) is a real conflict: the pod there is not read back and taken as ours', async () => {
  script = [
    () => ({ status: 429, body: status(429, 'TooManyRequests', 'too many requests') }),
    (req) => (pods.set('p', { ...POD, metadata: { ...POD.metadata, uid: 'uid-theirs' } }), create(req)),
    read,
  ];
  const err = await client(manualClock())
    .createPod(POD)
    .catch((e: unknown) => e);
  assert.ok(err instanceof KubeError, `got ${JSON.stringify(err)}`);
  assert.equal(err.code, 409);
  assert.equal(err.createdNothing, true);
  assert.deepEqual(seen, [`POST ${PODS}`, `POST ${PODS}`]);
});

test('a read-back that meets a blip is tried again rather than failing the create as "already exists"', async () => {
  script = [createAndDrop, create, unavailable('1'), create, read];
  const clock = manualClock();
  const made = await client(clock).createPod(POD);
  assert.equal(made.metadata?.uid, 'uid-p');
  assert.deepEqual(seen, [`POST ${PODS}`, `POST ${PODS}`, `GET ${PODS}/p`, `POST ${PODS}`, `GET ${PODS}/p`]);
  assert.deepEqual(clock.waits, [100, 1000]);
});

test('a throttled read waits the Retry-After the server sent, then reads', async () => {
  pods.set('p', POD);
  script = [() => ({ status: 429, body: status(429, 'TooManyRequests', 'too many requests'), headers: { 'retry-after': '3' } }), read];
  const clock = manualClock();
  assert.equal((await client(clock).readPod('p')).metadata?.name, 'p');
  assert.deepEqual(clock.waits, [3000]);
});

test('a server that stays unavailable: the read fails once the budget is spent, and says for how long it was retried', async () => {
  script = Array.from({ length: 10 }, () => unavailable('5'));
  const clock = manualClock();
  const err = await client(clock)
    .readPod('p')
    .catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.equal(err.code, 503);
  assert.deepEqual(clock.waits, [5000, 5000, 5000]);
  assert.equal(
    err.message,
    'the cluster failed to get pods in namespace ci (503 ServiceUnavailable): the server is currently unable to handle the request (tried 4 times over 15 s; the next try, 5 s later, would pass its 15 s retry budget)',
  );
});

test('a refusal is not tried again', async () => {
  script = [
    () => ({ status: 403, body: status(403, 'Forbidden', 'pods "p" is forbidden: User "u" cannot get resource "pods" in API group "" in the namespace "ci"') }),
  ];
  const clock = manualClock();
  const err = await client(clock)
    .readPod('p')
    .catch((e: unknown) => e);
  assert.ok(err instanceof KubeError);
  assert.match(err.message, /^forbidden: cannot get pods in namespace ci/);
  assert.deepEqual(seen, [`GET ${PODS}/p`]);
  assert.deepEqual(clock.waits, []);
});

test('a delete whose answer was lost is done when its retry finds nothing (404)', async () => {
  pods.set('p', POD);
  const removeAndDrop: Script = () => (pods.delete('p'), 'drop');
  script = [removeAndDrop, read];
  await client(manualClock()).deletePod('p');
  assert.deepEqual(seen, [`DELETE ${PODS}/p`, `DELETE ${PODS}/p`]);
});
