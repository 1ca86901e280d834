// An assembled image written as the entries of an OCI image layout: read back by berth's own layout reader
// (from a folder, and from the tar of a file feed) it is the same image, digest for digest; an image whose
// layers berth does not hold is refused before anything is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createWriteStream, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { readImageArchive } from '../../../src/registry/image-archive.js';
import { writeOciLayout } from '../../../src/registry/layout-entries.js';
import { OCI_INDEX, OCI_MANIFEST } from '../../../src/registry/oci-media.js';
import { feedTar } from '../../../src/runtime/feed-tar.js';
import { scratchDir } from '../../util/scratch.js';
import { folderWriter, layeredImage } from './image-fixtures.js';

const amd64 = { architecture: 'amd64', os: 'linux' };
const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

test('an image written into a folder reads back through the layout reader as the same image', async () => {
  const image = await layeredImage([{ 'bin/hello': '#!/bin/sh\necho hi\n' }, { 'etc/motd': 'second layer\n' }]);
  const dir = scratchDir('berth-layout-');
  const { add, added } = folderWriter(dir);
  await writeOciLayout(image, add, { refName: 'step-1' });

  const back = await readImageArchive(dir, scratchDir('berth-work-'), { platform: amd64 });
  assert.equal(back.manifest.digest, image.manifest.digest);
  assert.ok(back.manifest.bytes.equals(image.manifest.bytes));
  assert.equal(back.config.digest, image.config.digest);
  assert.deepEqual(
    back.layers.map((l) => [l.descriptor.digest, l.diffId]),
    image.layers.map((l) => [l.descriptor.digest, l.diffId]),
  );
  for (const layer of back.layers) assert.equal(sha256(readFileSync(layer.file!)), layer.descriptor.digest);

  assert.deepEqual(JSON.parse(readFileSync(path.join(dir, 'oci-layout'), 'utf8')), { imageLayoutVersion: '1.0.0' });
  assert.deepEqual(JSON.parse(readFileSync(path.join(dir, 'index.json'), 'utf8')), {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: [
      { mediaType: OCI_MANIFEST, digest: image.manifest.digest, size: image.manifest.size, annotations: { 'org.opencontainers.image.ref.name': 'step-1' } },
    ],
  });
  const blobs = [image.manifest.digest, image.config.digest, ...image.layers.map((l) => l.descriptor.digest)];
  assert.deepEqual(readdirSync(path.join(dir, 'blobs', 'sha256')).sort(), blobs.map((d) => d.slice(7)).sort());
  const layerHeaders = added.filter((h) => h.name.startsWith('blobs/sha256/') && h.size !== undefined);
  assert.deepEqual(
    layerHeaders.map((h) => [h.name, h.size]),
    image.layers.map((l) => [`blobs/sha256/${l.descriptor.digest.slice(7)}`, l.descriptor.size]),
    'layers are streamed, each with its size',
  );
});

test('without a ref name index.json carries no annotations; a layer named twice is written once', async () => {
  const once = await layeredImage([{ a: 'same\n' }]);
  const image = { ...once, layers: [once.layers[0], once.layers[0]] };
  const dir = scratchDir('berth-layout-');
  const { add, added } = folderWriter(dir);
  await writeOciLayout(image, add);
  const index = JSON.parse(readFileSync(path.join(dir, 'index.json'), 'utf8'));
  assert.deepEqual(index.manifests, [{ mediaType: OCI_MANIFEST, digest: image.manifest.digest, size: image.manifest.size }]);
  const layerName = `blobs/sha256/${once.layers[0].descriptor.digest.slice(7)}`;
  assert.equal(added.filter((h) => h.name === layerName).length, 1);
});

test("the entries go through a file feed's tar (runtime's AddEntry) and read back from the tarball", async () => {
  const image = await layeredImage([{ 'srv/index.html': '<p>hello</p>\n' }]);
  const tarball = path.join(scratchDir('berth-feed-'), 'feed.tar');
  await pipeline(
    feedTar((add) => writeOciLayout(image, add, { refName: 'latest' }), '.berth-feed-done'),
    createWriteStream(tarball),
  );
  const back = await readImageArchive(tarball, scratchDir('berth-work-'), { platform: amd64 });
  assert.equal(back.manifest.digest, image.manifest.digest);
  assert.equal(back.layers[0].descriptor.digest, image.layers[0].descriptor.digest);
});

test('a layer that stays in its registry (no file) is refused, and nothing is written', async () => {
  const image = await layeredImage([{ a: '1\n' }, { b: '2\n' }]);
  const remote = { ...image, layers: [image.layers[0], { ...image.layers[1], file: undefined }] };
  const { add, added } = folderWriter(scratchDir('berth-layout-'));
  await assert.rejects(
    writeOciLayout(remote, add),
    (err: Error) => err.message.includes(`layer 2 of image ${image.manifest.digest}`) && /not on this machine: it stays in the registry/.test(err.message),
  );
  assert.deepEqual(added, []);
});

test("a layer file whose size is not its descriptor's is refused before anything is written", async () => {
  const image = await layeredImage([{ a: '1\n' }]);
  const file = path.join(scratchDir('berth-short-'), 'layer');
  writeFileSync(file, 'short');
  const wrong = { ...image, layers: [{ ...image.layers[0], file }] };
  const { add, added } = folderWriter(scratchDir('berth-layout-'));
  await assert.rejects(writeOciLayout(wrong, add), new RegExp(`its file ${file} is 5 bytes, its descriptor says ${image.layers[0].descriptor.size}`));
  assert.deepEqual(added, []);
});
