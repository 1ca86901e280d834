// Images berth makes, pushed through its own distribution client to Debian's docker-registry on
// 127.0.0.1 and read back through the read path: by digest only (no tag unless named), blobs a
// repository has are not sent again, blobs mounted from another repository, a manifest deleted by
// digest is gone; with token authentication and docker config credentials, as users push.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { readImageInfo } from '../../../src/dockerapi/images/image-config.js';
import { RepositoryReader } from '../../../src/registry/distribution.js';
import { readImageArchive } from '../../../src/registry/image-archive.js';
import { ImagePusher } from '../../../src/registry/image-push.js';
import { assembleImage, type AssembledImage } from '../../../src/registry/oci-image.js';
import { OCI_MANIFEST } from '../../../src/registry/oci-media.js';
import { readRootfsArtifact } from '../../../src/registry/rootfs-artifact.js';
import { clearTokenCache } from '../../../src/registry/token.js';
import { startRegistry, type Registry } from '../../e2e/catalog/servers.js';
import { scratchDir } from '../../util/scratch.js';
import { dockerConfig, startTokenRegistry, type AuthRegistry } from './auth-servers.js';
import { countingProxy, type CountingProxy } from './counting-proxy.js';
import { ociLayoutFiles, writeTar, writeTree } from './image-fixtures.js';

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const amd64 = { architecture: 'amd64', os: 'linux' };

async function folderImage(files: Record<string, string>): Promise<AssembledImage> {
  const dir = scratchDir('berth-artifact-');
  writeTree(path.join(dir, 'rootfs'), files);
  writeTree(dir, { 'metadata.json': '{"env":["GREETING=from-a-step"],"user":"1000"}' });
  return assembleImage((await readRootfsArtifact(dir, scratchDir('berth-blobs-'), { platform: amd64 })).image);
}

const saved = process.env.DOCKER_CONFIG;
afterEach(() => clearTokenCache());
after(() => {
  if (saved === undefined) delete process.env.DOCKER_CONFIG;
  else process.env.DOCKER_CONFIG = saved;
});

describe('pushing images to docker-registry with token authentication', () => {
  let registry: AuthRegistry;
  let proxy: CountingProxy;
  let host = '';
  let image: AssembledImage;
  before(async () => {
    registry = await startTokenRegistry({ deletes: true });
    proxy = await countingProxy(registry.host);
    host = proxy.host;
    process.env.DOCKER_CONFIG = dockerConfig(host, 'auths').dir;
    image = await folderImage({ 'bin/hello': '#!/bin/sh\necho "$GREETING"\n', 'etc/motd': 'made by berth\n' });
  });
  after(async () => {
    await proxy.close();
    await registry.close();
  });

  test('an image made from a folder is pushed by its digest, with no tag, and reads back through the read client', async () => {
    const pushed = await new ImagePusher(host, 'team/app').pushImage(image);
    assert.equal(pushed.digest, image.manifest.digest);
    assert.equal(pushed.reference, `${host}/team/app@${image.manifest.digest}`);
    assert.deepEqual(Object.values(pushed.blobs), ['uploaded', 'uploaded']);
    assert.ok(!proxy.log.some((l) => /^PUT \/v2\/team\/app\/manifests\/(?!sha256:)/.test(l)), proxy.log.join('\n'));

    const reader = new RepositoryReader(host, 'team/app');
    const manifest = await reader.manifest(pushed.digest, [OCI_MANIFEST]);
    assert.ok(manifest.body.equals(image.manifest.bytes));
    await assert.rejects(reader.manifest('latest', [OCI_MANIFEST]), new RegExp(`registry ${host} refused to find manifest latest in team/app`));
    const config = JSON.parse((await reader.blob(image.config.digest)).body.toString());
    assert.deepEqual(config.config, { User: '1000', Env: ['GREETING=from-a-step'] });
    const layer = (await reader.blob(image.layers[0].descriptor.digest)).body;
    assert.equal(sha256(layer), image.layers[0].descriptor.digest);
    assert.equal(sha256(gunzipSync(layer)), image.layers[0].diffId);
    assert.match(gunzipSync(layer).toString('latin1'), /made by berth/);
    // berth serve's image lookup sees the settings a pod will run with.
    const info = await readImageInfo(pushed.reference, { platform: amd64 });
    assert.deepEqual(info.config.Env, ['GREETING=from-a-step']);
    assert.equal(info.configDigest, image.config.digest);
  });

  test("an OCI tarball's image keeps its digest; pushed again, no blob is sent twice", async () => {
    const tarball = await writeTar(path.join(scratchDir('berth-oci-'), 'image.tar'), ociLayoutFiles(image));
    const fromTar = await readImageArchive(tarball, scratchDir('berth-blobs-'), { platform: amd64 });
    const pusher = new ImagePusher(host, 'team/from-tar');
    const first = await pusher.pushImage(fromTar);
    assert.equal(first.digest, image.manifest.digest);
    proxy.log.length = 0;
    const again = await pusher.pushImage(fromTar);
    assert.deepEqual(Object.values(again.blobs), ['present', 'present']);
    assert.deepEqual(proxy.log, [
      `HEAD /v2/team/from-tar/blobs/${image.layers[0].descriptor.digest}`,
      `HEAD /v2/team/from-tar/blobs/${image.config.digest}`,
      `PUT /v2/team/from-tar/manifests/${image.manifest.digest}`,
    ]);
  });

  test('a tag only when the caller names one', async () => {
    await new ImagePusher(host, 'team/tagged').pushImage(image, { tag: 'v1' });
    const res = await new RepositoryReader(host, 'team/tagged').manifest('v1', [OCI_MANIFEST]);
    assert.equal(sha256(res.body), image.manifest.digest);
  });

  test('deleted by digest, the manifest is gone (404); deleting it again says so', async () => {
    const pusher = new ImagePusher(host, 'team/doomed');
    const { digest } = await pusher.pushImage(image);
    assert.equal(await pusher.manifestExists(digest), true);
    assert.equal(await pusher.deleteManifest(digest), true);
    assert.equal(await pusher.manifestExists(digest), false);
    await assert.rejects(new RepositoryReader(host, 'team/doomed').manifest(digest, [OCI_MANIFEST]), /answered 404/);
    assert.equal(await pusher.deleteManifest(digest), false);
    assert.ok(
      registry.tokenServer!.log.some((l) => l.startsWith('basic repository:team/doomed:delete -> delete')),
      registry.tokenServer!.log.join('\n'),
    );
  });

  test('without credentials the push is refused naming the registry and docker login; nothing is in the repository', async () => {
    process.env.DOCKER_CONFIG = dockerConfig(host, 'none').dir;
    try {
      await assert.rejects(
        new ImagePusher(host, 'team/denied').pushImage(image),
        new RegExp(`registry ${host} refused to push to team/denied .*run docker login ${host}`),
      );
    } finally {
      process.env.DOCKER_CONFIG = dockerConfig(host, 'auths').dir;
    }
    assert.equal(await new ImagePusher(host, 'team/denied').manifestExists(image.manifest.digest), false);
  });
});

describe('pushing images to docker-registry without authentication', () => {
  let registry: Registry;
  let image: AssembledImage;
  before(async () => {
    registry = await startRegistry();
    image = await folderImage({ 'data.txt': 'mount me\n' });
  });
  after(() => registry.close());

  test('blobs another repository has are mounted, not uploaded', async () => {
    await new ImagePusher(registry.host, 'base/one').pushImage(image);
    const mounted = await new ImagePusher(registry.host, 'base/two').pushImage(image, { mountFrom: 'base/one' });
    assert.deepEqual(Object.values(mounted.blobs), ['mounted', 'uploaded'], 'the layer mounted; the config (not mounted: a few bytes) sent');
  });

  test('a base layer berth holds no copy of, not in the repository, is refused naming it', async () => {
    const base = { ...image, layers: image.layers.map((l) => ({ ...l, file: undefined })) };
    await assert.rejects(
      new ImagePusher(registry.host, 'base/elsewhere').pushImage(base),
      new RegExp(`registry ${registry.host} has no blob ${image.layers[0].descriptor.digest} in base/elsewhere, and berth holds no copy of it`),
    );
  });

  test('a registry that does not allow deletes: the refusal says how to allow them', async () => {
    const pusher = new ImagePusher(registry.host, 'base/one');
    await assert.rejects(
      pusher.deleteManifest(image.manifest.digest),
      new RegExp(
        `registry ${registry.host} could not delete manifest ${image.manifest.digest} from base/one \\(answered 405: UNSUPPORTED.*storage.delete.enabled`,
      ),
    );
  });

  test('a blob whose bytes do not match its digest is refused by the registry, and the sentence says so', async () => {
    const pusher = new ImagePusher(registry.host, 'base/bad');
    const fake = { mediaType: 'application/octet-stream', digest: sha256(Buffer.from('promised')), size: 8 };
    await assert.rejects(
      pusher.pushBlob(fake, Buffer.from('deceived')),
      /could not upload blob sha256:[0-9a-f]+ in base\/bad \(answered 400: DIGEST_INVALID.*do not match their digest/,
    );
  });
});
