import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IMAGE_SERVER_PORT, imageFeed, planImagePod, servedImageReference, type ImagePodContext } from '../../../src/runtime/image-pod.js';

const ctx: ImagePodContext = {
  namespace: 'ci',
  owner: 'alice-laptop',
  runId: '0a1b2c3d',
  now: new Date('2026-12-01T10:00:00Z'),
  ttlSeconds: 3600,
  serverImage: 'registry.example.com/berth/berth:0.1.0',
  helperImage: 'busybox:1.36',
  labels: { 'app.kubernetes.io/component': 'task', 'berth.dev/step': 'run-in-it' },
  annotations: { 'berth.dev/step': 'run in it' },
};

test("the image pod is labelled and bounded as every berth pod, carries its face's labels, and expires with the run's TTL", () => {
  const pod = planImagePod(ctx);
  assert.equal(pod.metadata?.name, 'image-0a1b2c3d');
  assert.equal(pod.metadata?.labels?.['app.kubernetes.io/managed-by'], 'berth');
  assert.equal(pod.metadata?.labels?.['berth.dev/owner'], 'alice-laptop');
  assert.equal(pod.metadata?.labels?.['berth.dev/run'], '0a1b2c3d');
  assert.equal(pod.metadata?.labels?.['app.kubernetes.io/component'], 'task', "the face's labels");
  assert.equal(pod.metadata?.labels?.['berth.dev/step'], 'run-in-it');
  assert.equal(pod.metadata?.annotations?.['berth.dev/expires-at'], '2026-12-01T11:00:00Z');
  assert.equal(pod.metadata?.annotations?.['berth.dev/step'], 'run in it');
  assert.equal(pod.spec?.activeDeadlineSeconds, 3600);
  assert.equal(pod.spec?.restartPolicy, 'Never');
  assert.equal(pod.spec?.automountServiceAccountToken, false);
  assert.deepEqual(pod.spec?.securityContext, { seccompProfile: { type: 'RuntimeDefault' }, runAsUser: 65532, runAsGroup: 65532, runAsNonRoot: true });
});

test('the image arrives through the file feed, then the berth image serves it read-only on its port, ready once it answers', () => {
  const pod = planImagePod(ctx);
  const [receiver] = pod.spec?.initContainers ?? [];
  assert.equal(receiver?.name, imageFeed.container);
  assert.equal(receiver?.image, 'busybox:1.36');
  assert.equal(receiver?.stdin, true);
  assert.match(receiver?.command?.[2] ?? '', new RegExp(`test -e /image/${imageFeed.marker.replace('.', '\\.')}`));
  const [server] = pod.spec?.containers ?? [];
  assert.equal(pod.spec?.containers?.length, 1);
  assert.equal(server?.image, ctx.serverImage);
  assert.deepEqual(server?.command, ['berth', 'image-serve', '/image', '--port', String(IMAGE_SERVER_PORT)]);
  assert.deepEqual(server?.volumeMounts, [{ name: 'image', mountPath: '/image', readOnly: true }]);
  assert.deepEqual(server?.readinessProbe?.httpGet, { path: '/v2/', port: IMAGE_SERVER_PORT, scheme: 'HTTPS' });
  assert.deepEqual(server?.securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true });
  assert.deepEqual(server?.env, [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }]);
});

test('the reference a node pulls names the pod address and the digest, never a tag', () => {
  const digest = `sha256:${'ab'.repeat(32)}`;
  assert.equal(servedImageReference('10.244.1.7', 'berth/img', digest), `10.244.1.7:5443/berth/img@${digest}`);
  assert.equal(servedImageReference('fd00::7', 'berth/img', digest), `[fd00::7]:5443/berth/img@${digest}`);
});
