import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { inheritedFrom, inheritRequested, InheritPodError, ownPodRef, readInheritedSettings, withInherited } from '../../../src/runtime/inherit-pod.js';
import { applySettings, loadRunSettings } from '../../../src/runtime/settings.js';
import { planWorkload } from '../../../src/runtime/plan.js';
import { planSandboxPod } from '../../../src/runtime/sandbox-plan.js';
import { scratchDir } from '../../util/scratch.js';

const ciPod: V1Pod = {
  metadata: { name: 'build-7-abc', namespace: 'ci' },
  spec: {
    containers: [{ name: 'step', image: 'img' }],
    nodeSelector: { pool: 'ci' },
    tolerations: [
      { key: 'dedicated', operator: 'Equal', value: 'ci', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
    imagePullSecrets: [{ name: 'registry-creds' }],
  },
};

const noSaDir = join(tmpdir(), 'berth-no-such-sa-dir');

test('a pod passes on its node selector, its own tolerations and its pull secrets (not the admission defaults)', () => {
  const got = inheritedFrom(ciPod, 'ci');
  assert.deepEqual(got.nodeSelector, { pool: 'ci' });
  assert.deepEqual(got.tolerations, [{ key: 'dedicated', operator: 'Equal', value: 'ci', effect: 'NoSchedule' }]);
  assert.deepEqual(got.imagePullSecrets, [{ name: 'registry-creds' }]);
  assert.equal(got.origin, 'pod ci/build-7-abc');
  assert.deepEqual(got.notes, []);
});

test('pull secrets stay behind when berth runs pods in another namespace, and it says so', () => {
  const got = inheritedFrom(ciPod, 'fns');
  assert.equal(got.imagePullSecrets, undefined);
  assert.match(got.notes[0], /registry-creds .* namespace ci, and berth's pods run in fns/);
  assert.deepEqual(got.nodeSelector, { pool: 'ci' });
});

test('a pod without constraints passes on nothing', () => {
  const got = inheritedFrom({ metadata: { name: 'p', namespace: 'ci' }, spec: { containers: [] } }, 'ci');
  assert.deepEqual({ ...got, origin: undefined }, { origin: undefined, notes: [] });
});

test("the user's template wins on node selector keys; tolerations and pull secrets are the union", () => {
  const inherited = inheritedFrom(ciPod, 'ci');
  const merged = withInherited(
    {
      origin: 'PodTemplate big',
      template: {
        metadata: { labels: { team: 'qa' } },
        spec: {
          nodeSelector: { pool: 'big', zone: 'a' },
          tolerations: [
            { key: 'dedicated', operator: 'Equal', value: 'ci', effect: 'NoSchedule' },
            { key: 'gpu', operator: 'Exists' },
          ],
          containers: [{ name: 'base' }],
        },
      },
    },
    inherited,
  );
  const spec = merged.template.spec as Record<string, unknown>;
  assert.deepEqual(spec.nodeSelector, { pool: 'big', zone: 'a' });
  assert.deepEqual(spec.tolerations, [
    { key: 'dedicated', operator: 'Equal', value: 'ci', effect: 'NoSchedule' },
    { key: 'gpu', operator: 'Exists' },
  ]);
  assert.deepEqual(spec.imagePullSecrets, [{ name: 'registry-creds' }]);
  assert.deepEqual(spec.containers, [{ name: 'base' }]);
  assert.deepEqual(merged.template.metadata, { labels: { team: 'qa' } });
  assert.equal(merged.origin, 'PodTemplate big (with the settings of pod ci/build-7-abc)');
});

test('berth serve: a container pod planned under the inherited settings carries them', () => {
  const template = withInherited(undefined, inheritedFrom(ciPod, 'ci'));
  const pod = planSandboxPod(
    { podName: 'p', shortId: 'abc', image: 'img', cmd: ['sleep', '1'], template },
    { namespace: 'ci', owner: 'i', now: new Date(0), ttlSeconds: 60 },
  );
  assert.deepEqual(pod.spec!.nodeSelector, { pool: 'ci' });
  assert.deepEqual(pod.spec!.tolerations, [{ key: 'dedicated', operator: 'Equal', value: 'ci', effect: 'NoSchedule' }]);
  assert.deepEqual(pod.spec!.imagePullSecrets, [{ name: 'registry-creds' }]);
  assert.equal(pod.spec!.automountServiceAccountToken, false, 'inheriting never hands the pod a token');
});

test('the pod is found by POD_NAME, else HOSTNAME, in POD_NAMESPACE, else the service account namespace file', () => {
  const sa = scratchDir('berth-sa-');
  writeFileSync(join(sa, 'namespace'), 'ci\n');
  assert.deepEqual(ownPodRef({ HOSTNAME: 'build-7-abc' }, sa), { namespace: 'ci', name: 'build-7-abc' });
  assert.deepEqual(ownPodRef({ HOSTNAME: 'h', POD_NAME: 'p', POD_NAMESPACE: 'other' }, sa), { namespace: 'other', name: 'p' });
  assert.equal(ownPodRef({ HOSTNAME: 'laptop' }, noSaDir), undefined);
});

test('inheritance asked for outside a pod, or without the right to read it, fails with a sentence', async () => {
  await assert.rejects(
    readInheritedSettings(() => Promise.reject(new Error('unused')), 'ci', { HOSTNAME: 'laptop' }, noSaDir),
    (e: Error) => e instanceof InheritPodError && /does not know its pod .*POD_NAME/.test(e.message),
  );
  await assert.rejects(
    readInheritedSettings(() => Promise.reject(new Error('forbidden')), 'ci', { POD_NAME: 'p', POD_NAMESPACE: 'ci' }, noSaDir),
    /cannot read berth's own pod ci\/p \(grant get on pods in namespace ci\): forbidden/,
  );
  const asked: string[] = [];
  const got = await readInheritedSettings(
    async (ns, name) => (asked.push(`${ns}/${name}`), ciPod),
    'ci',
    { POD_NAME: 'build-7-abc', POD_NAMESPACE: 'ci' },
    noSaDir,
  );
  assert.deepEqual(asked, ['ci/build-7-abc']);
  assert.deepEqual(got.nodeSelector, { pool: 'ci' });
});

test('BERTH_INHERIT_POD_SETTINGS turns it on for the shim and berth fn', () => {
  assert.equal(inheritRequested({ BERTH_INHERIT_POD_SETTINGS: '1' }), true);
  assert.equal(inheritRequested({ BERTH_INHERIT_POD_SETTINGS: '0' }), false);
  const home = scratchDir('berth-home-');
  assert.equal(loadRunSettings({ BERTH_INHERIT_POD_SETTINGS: 'true' }, home).inheritPodSettings, true);
  assert.equal(loadRunSettings({}, home).inheritPodSettings, false);
});

test('the shim: applySettings needs the cluster connection, and without inheritance asks nothing', async () => {
  const home = scratchDir('berth-home-');
  const off = await applySettings({ image: 'img' }, loadRunSettings({}, home), { readPodTemplate: () => Promise.reject(new Error('unused')) });
  assert.equal(off.podTemplate, undefined);
  await assert.rejects(
    applySettings({ image: 'img' }, loadRunSettings({ BERTH_INHERIT_POD_SETTINGS: '1' }, home), { readPodTemplate: () => Promise.reject(new Error('unused')) }),
    /needs a connection/,
  );
  // a shim pod planned under the inherited template
  const template = withInherited(undefined, inheritedFrom(ciPod, 'ci'));
  const { pod } = planWorkload({ image: 'img', podTemplate: template }, { namespace: 'ci', owner: 'o', now: new Date(0), ttlSeconds: 60, runId: 'abc12345' });
  assert.deepEqual(pod.spec!.nodeSelector, { pool: 'ci' });
  assert.deepEqual(pod.spec!.imagePullSecrets, [{ name: 'registry-creds' }]);
});
