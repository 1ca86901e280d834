// docker commit through the engine on a fake cluster: the container's files (what tar in its pod gives) become one
// layer, its config with --change applied, pushed by digest to Debian's docker-registry on 127.0.0.1; the image runs
// as a container whose pod names that digest, and its manifest goes with `docker rmi`.
import { registryOutlet } from '../../../../src/dockerapi/images/image-outlet.js';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buffer } from 'node:stream/consumers';
import { pack } from 'tar-stream';
import { Engine } from '../../../../src/dockerapi/engine.js';
import { ImagePusher } from '../../../../src/registry/image-push.js';
import { FakeCluster } from '../fake-cluster.js';
import { UNIT_IMAGE, unitEngine } from '../unit-engine.js';
import { startRegistry, type Registry } from '../../../e2e/catalog/servers.js';

const IMAGE = UNIT_IMAGE;
let registry: Registry;
before(async () => {
  registry = await startRegistry({ deletes: true });
});
after(async () => {
  await registry.close();
});

async function filesystemTar(): Promise<Buffer> {
  const tar = pack();
  tar.entry({ name: 'bin/', type: 'directory', mode: 0o755 });
  tar.entry({ name: 'made', mode: 0o644 }, 'made in the container\n');
  tar.finalize();
  return buffer(tar);
}

function engineOn(cluster: FakeCluster, withRegistry: boolean): Engine {
  return unitEngine(cluster, withRegistry ? { imageOutlet: registryOutlet({ registry: registry.host, prefix: 'serve', plainHttp: false }, 600) } : {});
}

test('commit: the running container becomes an image pushed by digest; a container of it runs that digest; rmi deletes it', async () => {
  const cluster = new FakeCluster();
  const tar = await filesystemTar();
  cluster.execAnswer = (call) => (call.argv.at(-1)?.includes('exec tar -c') ? { exitCode: 0, stdout: tar } : { exitCode: 0 });
  const engine = engineOn(cluster, true);
  await engine.create('c', { Image: IMAGE, Cmd: ['sleep', '60'], Env: ['FROM_RUN=1'] });
  await engine.start('c');
  const before = Math.ceil(Date.now() / 1000);
  const id = await engine.commit('c', { repo: 'myimg', tag: '1', changes: ['ENV FROM_CHANGE=2', 'CMD ["cat", "/made"]'] });
  assert.match(id, /^sha256:[0-9a-f]{64}$/);
  const img = engine.images.find('myimg:1');
  assert.equal(img.id, id);
  assert.match(img.pullRef!, new RegExp(`^${registry.host.replace(/\./g, '\\.')}/serve/myimg-[0-9a-f]{8}@sha256:[0-9a-f]{64}$`));
  assert.deepEqual(img.info?.config.Env, ['FROM_RUN=1', 'FROM_CHANGE=2']);
  assert.deepEqual(img.info?.config.Cmd, ['cat', '/made']);

  const next = await engine.create('next', { Image: 'myimg:1' });
  await engine.start('next');
  assert.equal(cluster.pod(next.podName!).spec?.containers[0]?.image, img.pullRef, "the pod pulls the pushed digest, not docker.io's myimg");
  assert.deepEqual(next.cmd, ['cat', '/made'], 'its config is the committed one');

  const [repo, digest] = img.pullRef!.slice(registry.host.length + 1).split('@') as [string, string];
  const pushed = new ImagePusher(registry.host, repo);
  assert.equal(await pushed.manifestExists(digest), true);
  const [tag, ...more] = await pushed.tags();
  const expires = Number(tag?.replace('berth-expires-', ''));
  assert.ok(more.length === 0 && expires >= before + 600 && expires <= Math.ceil(Date.now() / 1000) + 600, `one expiry tag, --ttl on: ${tag} ${more}`);
  await engine.remove('next', true);
  engine.images.remove('myimg:1');
  // rmi releases in the background, and docker-registry deletes the manifest first, its tags a moment after.
  const gone = async (): Promise<boolean> => !(await pushed.manifestExists(digest)) && (await pushed.tags()).length === 0;
  for (let i = 0; !(await gone()) && i < 100; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await pushed.manifestExists(digest), false, 'rmi deleted the manifest');
  assert.deepEqual(await pushed.tags(), [], 'and its expiry tag with it');
  await engine.remove('c', true);
});

test('commit is refused saying what to do: without --image-registry (501), a container not running (409), tar failing (500)', async () => {
  const cluster = new FakeCluster();
  const without = engineOn(cluster, false);
  await without.create('a', { Image: IMAGE, Cmd: ['sleep', '60'] });
  await without.start('a');
  await assert.rejects(
    without.commit('a', { changes: [] }),
    (err: Error & { status?: number }) => err.status === 501 && /--image-registry REGISTRY\/PREFIX/.test(err.message),
  );

  const engine = engineOn(cluster, true);
  await engine.create('b', { Image: IMAGE, Cmd: ['sleep', '60'] });
  await assert.rejects(
    engine.commit('b', { changes: [] }),
    (err: Error & { status?: number }) => err.status === 409 && /commits a running container/.test(err.message),
  );
  await engine.start('b');
  cluster.execAnswer = () => ({ exitCode: 127, stderr: 'sh: tar: not found' });
  await assert.rejects(
    engine.commit('b', { changes: [] }),
    (err: Error & { status?: number }) => err.status === 500 && /tar exit 127\): sh: tar: not found; its image needs sh and tar/.test(err.message),
  );
  await assert.rejects(engine.commit('b', { changes: ['RUN x'] }), (err: Error & { status?: number }) => err.status === 400);
  assert.equal([...engine.images.values()].length, 1, 'no image recorded by a failed commit');
  await engine.remove('b', true);
  await without.remove('a', true);
});
