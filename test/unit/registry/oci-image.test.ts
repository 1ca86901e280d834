// Image configs and manifests as values: the right media types, every part addressed by the digest of
// its bytes, the same image the same digests, and a base image grown by a layer as docker commit will.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { appendLayer, assembleImage, emptyImage, imageFromConfig, withSettings, type ImageLayer } from '../../../src/registry/oci-image.js';
import { DOCKER_LAYER_GZIP, OCI_CONFIG, OCI_LAYER_GZIP, OCI_MANIFEST } from '../../../src/registry/oci-media.js';

const sha256 = (b: Buffer | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const layer = (n: number): ImageLayer => ({
  descriptor: { mediaType: OCI_LAYER_GZIP, digest: sha256(`gz${n}`), size: 10 + n },
  diffId: sha256(`tar${n}`),
});
const platform = { architecture: 'amd64', os: 'linux' };

test('a one-layer image: OCI media types, config and manifest addressed by their digests, the same image the same bytes', () => {
  const make = (): ReturnType<typeof assembleImage> =>
    assembleImage(appendLayer(emptyImage(platform, { Env: ['A=1'], User: '1000', Cmd: ['sh'] }), layer(1), { created_by: 'test' }));
  const image = make();
  assert.equal(image.config.mediaType, OCI_CONFIG);
  assert.equal(image.config.digest, sha256(image.config.bytes));
  assert.equal(image.manifest.digest, sha256(image.manifest.bytes));
  assert.equal(image.manifest.size, image.manifest.bytes.length);
  const config = JSON.parse(image.config.bytes.toString());
  assert.deepEqual(config, {
    architecture: 'amd64',
    os: 'linux',
    config: { Env: ['A=1'], User: '1000', Cmd: ['sh'] },
    rootfs: { type: 'layers', diff_ids: [layer(1).diffId] },
    history: [{ created_by: 'test' }],
  });
  assert.deepEqual(JSON.parse(image.manifest.bytes.toString()), {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: { mediaType: OCI_CONFIG, digest: image.config.digest, size: image.config.size },
    layers: [layer(1).descriptor],
  });
  assert.equal(make().manifest.digest, image.manifest.digest, 'no clock in the bytes');
  const other = assembleImage(appendLayer(emptyImage(platform, { Env: ['A=2'] }), layer(1)));
  assert.notEqual(other.config.digest, image.config.digest);
  assert.notEqual(other.manifest.digest, image.manifest.digest);
});

test('a base image grown by a layer (docker commit): Docker media types read as OCI, diff ids and history appended, labels merged', () => {
  const baseConfig = Buffer.from(
    JSON.stringify({
      architecture: 'arm64',
      os: 'linux',
      config: { Env: ['PATH=/bin'], Labels: { a: '1' } },
      rootfs: { type: 'layers', diff_ids: [layer(1).diffId] },
      history: [{ created_by: 'base' }],
    }),
  );
  const base = imageFromConfig(baseConfig, [{ ...layer(1).descriptor, mediaType: DOCKER_LAYER_GZIP }], 'registry.example/base@sha256:x');
  assert.equal(base.layers[0].descriptor.mediaType, OCI_LAYER_GZIP);
  assert.equal(base.layers[0].file, undefined, 'the base layer stays in its registry');
  const committed = assembleImage(withSettings(appendLayer(base, layer(2), { created_by: 'docker commit' }), { Labels: { b: '2' }, Cmd: ['run'] }));
  const config = JSON.parse(committed.config.bytes.toString());
  assert.deepEqual(config.rootfs.diff_ids, [layer(1).diffId, layer(2).diffId]);
  assert.deepEqual(config.history, [{ created_by: 'base' }, { created_by: 'docker commit' }]);
  assert.deepEqual(config.config, { Env: ['PATH=/bin'], Labels: { a: '1', b: '2' }, Cmd: ['run'] });
  assert.equal(config.architecture, 'arm64');
  assert.deepEqual(
    JSON.parse(committed.manifest.bytes.toString()).layers.map((l: { digest: string }) => l.digest),
    [layer(1).descriptor.digest, layer(2).descriptor.digest],
  );
});

test('a config and layers that disagree are refused', () => {
  const image = appendLayer(emptyImage(platform), layer(1));
  assert.throws(() => assembleImage({ ...image, layers: [] }), /the image config lists 1 layers \(rootfs.diff_ids\) but the image has 0/);
  assert.throws(() => assembleImage({ ...image, layers: [layer(2)] }), /layer 1 \(sha256:[0-9a-f]+\) has diff id sha256:[0-9a-f]+, but the config lists/);
  assert.throws(() => imageFromConfig(Buffer.from('{'), [], 'base'), /the image config of base is not JSON/);
  assert.throws(
    () => imageFromConfig(Buffer.from('{"rootfs":{"diff_ids":[]}}'), [layer(1).descriptor], 'base'),
    /the image config of base lists 0 layers \(rootfs.diff_ids\) for the 1 of its manifest/,
  );
});
