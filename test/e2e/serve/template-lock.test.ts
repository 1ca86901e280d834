// `--pod-template` (a file) and the label berth.dev/pod-template (a PodTemplate object) seen through kubectl and
// inside the container; `--lock`: a second berth of the same instance waits for the Lease, or gives up naming
// its holder, and takes over when the first stops.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../../util/eventually.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { BUSYBOX, freshNamespace, kubectl, kubectlOk } from '../harness/cluster.js';
import { berthLeftovers, bindServeRole, type DockerEngine, dropNamespace, startBerth } from './serve-env.js';

const instance = `bs${process.pid}-tpl`;
const lease = `berth-serve-${instance}`;
let engine: DockerEngine;
let namespace = '';
let dir = '';
const extraEngines: DockerEngine[] = [];

async function docker(args: string[], input?: string): Promise<string> {
  return (await engine.dockerOk(args, { input })).trim();
}

async function podOf(containerId: string): Promise<V1Pod> {
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
  const [pod] = (JSON.parse(out) as { items: V1Pod[] }).items;
  assert.ok(pod, `container ${containerId} has a pod`);
  return pod;
}

async function leaseHolder(): Promise<string> {
  const r = await kubectl(['-n', namespace, 'get', 'lease', lease, '-o', 'jsonpath={.spec.holderIdentity}']);
  return r.code === 0 ? r.stdout.trim() : '';
}

before(async () => {
  namespace = await freshNamespace('serve-tpl');
  await bindServeRole(namespace, 'shim');
  dir = mkdtempSync(join(tmpdir(), 'berth-tpl-'));
  const file = join(dir, 'template.yaml');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Pod',
      'metadata: {labels: {tier: ci}, annotations: {owner-team: platform}}',
      'spec:',
      '  terminationGracePeriodSeconds: 2',
      '  containers:',
      '  - name: base',
      '    env: [{name: FROM_TEMPLATE, value: file}]',
      '',
    ].join('\n'),
  );
  await kubectlOk(['-n', namespace, 'apply', '-f', '-'], {
    input: [
      'apiVersion: v1',
      'kind: PodTemplate',
      'metadata: {name: heavy}',
      'template:',
      '  metadata: {labels: {tier: heavy}}',
      '  spec:',
      '    containers:',
      '    - name: base',
      '      image: replaced-by-berth',
      '      env: [{name: FROM_TEMPLATE, value: object}]',
      '      resources: {requests: {memory: 32Mi}}',
      '',
    ].join('\n'),
  });
  engine = await startBerth(namespace, instance, { user: 'shim', extra: ['--pod-template', file, '--lock'] });
});

after(async () => {
  try {
    for (const e of extraEngines) await e.stop();
    await engine?.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
    const left = await berthLeftovers(namespace, instance);
    const heldAfter = await leaseHolder();
    await dropNamespace(namespace);
    assert.deepEqual(left, [], 'berth serve left objects behind after SIGTERM');
    assert.equal(heldAfter, '', 'the Lease is deleted when its holder stops');
  }
});

test('--pod-template: every pod is laid on the file; berth keeps its own defaults where the template is silent', async () => {
  const id = await docker(['run', '-d', BUSYBOX, 'sh', '-c', 'echo "env=$FROM_TEMPLATE"; sleep 300']);
  const pod = await podOf(id);
  assert.equal(pod.metadata!.labels!.tier, 'ci');
  assert.equal(pod.metadata!.annotations!['owner-team'], 'platform');
  assert.equal(pod.spec!.terminationGracePeriodSeconds, 2);
  assert.equal(pod.spec!.automountServiceAccountToken, false);
  assert.equal(pod.spec!.containers[0].securityContext?.allowPrivilegeEscalation, false);
  // `run -d` does not wait for the first line
  await eventually('the env line in the log', async () => assert.match((await engine.docker(['logs', id])).stdout, /env=file/) ?? true);
  await docker(['rm', '-f', id]);
});

test('the label berth.dev/pod-template names a PodTemplate object, which wins over the flag', async () => {
  const out = await docker(['run', '--rm', '--label', 'berth.dev/pod-template=heavy', BUSYBOX, 'sh', '-c', 'echo "env=$FROM_TEMPLATE"']);
  assert.equal(out, 'env=object');
});

test('a label naming a missing PodTemplate is a 400 at create, and nothing is created', async () => {
  const before = await docker(['ps', '-a', '-q']);
  const r = await engine.docker(['create', '--label', 'berth.dev/pod-template=nope', BUSYBOX, 'true']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /PodTemplate nope not found in namespace/);
  assert.equal(await docker(['ps', '-a', '-q']), before);
});

test('--lock: a second berth of the instance gives up naming the holder, or waits and takes over when the first stops', async () => {
  const holder = await leaseHolder();
  assert.ok(holder, 'the first berth holds the Lease');
  await assert.rejects(startBerth(namespace, instance, { user: 'shim', extra: ['--lock', '--lock-timeout', '1'] }), (err: Error) => {
    assert.match(err.message, new RegExp(`Lease ${lease} in namespace ${namespace} is held by ${holder}`));
    return true;
  });
  const id = await docker(['run', '-d', BUSYBOX, 'sleep', '300']);
  // The waiting berth answers /_ping only once it holds the Lease, after the first one stopped.
  let sawWait: () => void = () => undefined;
  const waiting = new Promise<void>((resolve) => (sawWait = resolve));
  const second = startBerth(namespace, instance, {
    user: 'shim',
    extra: ['--lock', '--lock-timeout', '60'],
    onOutput: (all) => {
      if (all.includes(`waiting for the Lease ${lease}, held by ${holder}`)) sawWait();
    },
  });
  second.then(
    (e) => extraEngines.push(e),
    () => undefined,
  );
  await Promise.race([waiting, second.then(() => assert.fail('the second berth served while the first held the Lease'))]);
  await engine.stop();
  const next = await second;
  const newHolder = await leaseHolder();
  assert.ok(newHolder && newHolder !== holder, `the Lease passed on (was ${holder}, now ${newHolder})`);
  // The first berth deleted its containers on the way out; the second starts clean and serves.
  assert.equal((await next.docker(['ps', '-a', '-q', '--filter', `id=${id}`])).stdout.trim(), '');
  const r = await next.docker(['run', '--rm', BUSYBOX, 'echo', 'served']);
  assert.equal(r.stdout.trim(), 'served');
  engine = next;
  extraEngines.splice(extraEngines.indexOf(next), 1);
});
