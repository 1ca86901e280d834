// An image served from a pod (--image-server) lives as long as that pod: when the pod ends (its --ttl, an eviction) or
// is deleted, berth serve deletes the image's record as `docker rmi` would, instead of listing an image no node can pull.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buffer } from 'node:stream/consumers';
import { pack } from 'tar-stream';
import { Engine } from '../../../../src/dockerapi/engine.js';
import { imagePodEnd } from '../../../../src/dockerapi/engine-watch.js';
import type { DockerEvent } from '../../../../src/dockerapi/event-bus.js';
import { IMAGE_POD_COMPONENT, type ImageOutlet } from '../../../../src/dockerapi/images/image-outlet.js';
import type { Pod } from '../../../../src/dockerapi/cluster.js';
import { LABEL_COMPONENT, ownershipLabels } from '../../../../src/runtime/pod-rules.js';
import { FakeCluster } from '../fake-cluster.js';
import { UNIT_IMAGE, unitEngine } from '../unit-engine.js';

const IMAGE = UNIT_IMAGE;

/** An outlet that "serves" each image from a pod named image-N, noting which it was asked to release. */
function podsOutlet(): ImageOutlet & { released: string[] } {
  let n = 0;
  const released: string[] = [];
  return {
    where: 'a pod of berth',
    released,
    put: async (_name, image) => {
      const pod = `image-${++n}`;
      return {
        reference: `10.0.0.${n}:5443/berth/x@${image.manifest.digest}`,
        digest: image.manifest.digest,
        pod,
        release: async () => void released.push(pod),
      };
    },
    insecureHosts: () => [],
  };
}

function imagePod(name: string, phase: string, reason?: string): Pod {
  return {
    metadata: { name, labels: { ...ownershipLabels('unit'), [LABEL_COMPONENT]: IMAGE_POD_COMPONENT } },
    status: { phase, ...(reason ? { reason, message: 'Pod was active on the node longer than the specified deadline' } : {}) },
  };
}

async function engineWithCommit(): Promise<{ engine: Engine; cluster: FakeCluster; outlet: ReturnType<typeof podsOutlet>; events: DockerEvent[] }> {
  const cluster = new FakeCluster();
  const tar = pack();
  tar.entry({ name: 'made', mode: 0o644 }, 'made\n');
  tar.finalize();
  const files = await buffer(tar);
  cluster.execAnswer = (call) => (call.argv.at(-1)?.includes('exec tar -c') ? { exitCode: 0, stdout: files } : { exitCode: 0 });
  const outlet = podsOutlet();
  const engine = unitEngine(cluster, { imageOutlet: outlet });
  const events: DockerEvent[] = [];
  engine.events.subscribe((e) => void events.push(e));
  await engine.create('c', { Image: IMAGE, Cmd: ['sleep', '60'] });
  await engine.start('c');
  await engine.commit('c', { repo: 'first', tag: '1', changes: [] });
  await engine.commit('c', { repo: 'second', tag: '1', changes: [] });
  return { engine, cluster, outlet, events };
}

test('the pod serving a made image ends at its deadline: the image is deleted (a delete event, its pod released); the other stays', async () => {
  const { engine, cluster, outlet, events } = await engineWithCommit();
  const first = engine.images.find('first:1');
  assert.equal(first.servedBy, 'image-1');
  cluster.notify('MODIFIED', imagePod('image-1', 'Running'));
  assert.equal(engine.images.find('first:1').id, first.id, 'a serving pod keeps its image');
  cluster.notify('MODIFIED', imagePod('image-1', 'Failed', 'DeadlineExceeded'));
  assert.throws(() => engine.images.find('first:1'), /No such image: first:1/);
  assert.deepEqual(outlet.released, ['image-1']);
  assert.ok(events.some((e) => e.Type === 'image' && e.Action === 'delete' && e.Actor.ID === first.id));
  assert.equal(engine.images.find('second:1').servedBy, 'image-2');
  await engine.shutdown();
});

test('the pod serving a made image deleted (kubectl delete, its node gone): the image is deleted; a pod of no image changes nothing', async () => {
  const { engine, cluster } = await engineWithCommit();
  const count = engine.images.size;
  cluster.notify('DELETED', imagePod('image-9', 'Running'));
  assert.equal(engine.images.size, count);
  cluster.notify('DELETED', imagePod('image-2', 'Running'));
  assert.throws(() => engine.images.find('second:1'), /No such image/);
  assert.equal(engine.images.size, count - 1);
  await engine.shutdown();
});

test('imagePodEnd: how an image pod ended, in the words of the line berth serve writes; nothing while it runs', () => {
  assert.equal(imagePodEnd('MODIFIED', imagePod('p', 'Running')), undefined);
  assert.equal(imagePodEnd('MODIFIED', imagePod('p', 'Pending')), undefined);
  assert.equal(imagePodEnd('DELETED', imagePod('p', 'Running')), 'was deleted');
  assert.equal(imagePodEnd('MODIFIED', imagePod('p', 'Succeeded')), 'ended');
  assert.equal(
    imagePodEnd('MODIFIED', imagePod('p', 'Failed', 'DeadlineExceeded')),
    'ended (DeadlineExceeded: Pod was active on the node longer than the specified deadline)',
  );
});
