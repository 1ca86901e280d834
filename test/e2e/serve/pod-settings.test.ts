// Pod settings from `berth.dev/…` container labels and flags, and `--keep-failed`, seen through kubectl.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { BUSYBOX, freshNamespace, kubectlOk } from '../harness/cluster.js';
import { berthLeftovers, bindServeRole, type DockerEngine, dropNamespace, startBerth } from './serve-env.js';

const instance = `bs${process.pid}-settings`;
let engine: DockerEngine;
let namespace = '';
const names: string[] = [];

async function docker(args: string[]): Promise<string> {
  return (await engine.dockerOk(args)).trim();
}

async function podsOf(containerId: string): Promise<V1Pod[]> {
  const out = await kubectlOk([
    '-n',
    namespace,
    'get',
    'pods',
    '-l',
    `berth.dev/owner=${instance},berth.dev/container=${containerId.slice(0, 12)}`,
    '-o',
    'json',
  ]);
  return (JSON.parse(out) as { items: V1Pod[] }).items;
}

before(async () => {
  namespace = await freshNamespace('serve-settings');
  await bindServeRole(namespace, 'shim');
  engine = await startBerth(namespace, instance, {
    user: 'shim',
    extra: ['--request-memory', '16Mi', '--limit-memory', '1Gi', '--pod-name-prefix', 'ci', '--keep-failed', '5'],
  });
  await docker(['pull', BUSYBOX]);
});

after(async () => {
  try {
    for (const n of names) await engine.docker(['rm', '-f', n]);
  } finally {
    await engine.stop();
    // Pods kept for debugging outlive berth by design: the test removes them itself.
    await kubectlOk(['-n', namespace, 'delete', 'pods', '-l', `berth.dev/owner=${instance}`, '--wait=false']);
    const left = (await berthLeftovers(namespace, instance)).filter((x) => !x.startsWith('pod/'));
    await dropNamespace(namespace);
    assert.deepEqual(left, [], 'berth serve left objects behind after SIGTERM');
  }
});

test('container labels set requests and limits over the flags; the flag prefix names the pod', async () => {
  const name = `${instance}-res`;
  names.push(name);
  const id = await docker([
    'run',
    '-d',
    '--name',
    name,
    '--label',
    'berth.dev/limit-memory=64Mi',
    '--label',
    'berth.dev/request-cpu=50m',
    '--label',
    'berth.dev/pod-labels=team=qa',
    BUSYBOX,
    'sleep',
    '300',
  ]);
  const [pod] = await podsOf(id);
  assert.ok(pod, 'the container has a pod');
  assert.match(pod.metadata!.name!, /^ci-/);
  assert.equal(pod.metadata!.labels!.team, 'qa');
  assert.deepEqual(pod.spec!.containers[0].resources, { requests: { cpu: '50m', memory: '16Mi' }, limits: { memory: '64Mi' } });
});

test('a bad setting label is a 400 at create, before any pod', async () => {
  const r = await engine.docker(['create', '--label', 'berth.dev/request-cpu=lots', BUSYBOX, 'true']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /request-cpu="lots"/);
});

test('--keep-failed: the pod of a failed container stays after rm, marked to expire; a successful one goes', async () => {
  const failed = `${instance}-fail`;
  const passed = `${instance}-pass`;
  const failedId = await docker(['create', '--name', failed, BUSYBOX, 'sh', '-c', 'exit 3']);
  const passedId = await docker(['create', '--name', passed, BUSYBOX, 'true']);
  names.push(failed, passed);
  await docker(['start', failedId]);
  await docker(['start', passedId]);
  assert.equal(await docker(['wait', failedId]), '3');
  assert.equal(await docker(['wait', passedId]), '0');
  const removedAt = Date.now();
  await docker(['rm', failedId, passedId]);
  const [kept] = await podsOf(failedId);
  assert.ok(kept, 'the failed pod is kept');
  const until = Date.parse(kept.metadata!.annotations!['berth.dev/kept-failed-until']);
  assert.equal(kept.metadata!.annotations!['berth.dev/expires-at'], kept.metadata!.annotations!['berth.dev/kept-failed-until']);
  assert.ok(until > removedAt + 4 * 60_000 && until < Date.now() + 5 * 60_000 + 2000, `kept until ${new Date(until).toISOString()}`);
  const gone = (await podsOf(passedId)).filter((p) => !p.metadata!.deletionTimestamp);
  assert.deepEqual(gone, [], 'the successful pod is deleted');
});
