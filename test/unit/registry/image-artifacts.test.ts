// The image artifacts of Concourse steps, read as images to push: a rootfs folder with metadata.json,
// an OCI image layout (tarball, gzipped tarball, folder) and a docker save archive (what registry-image
// writes as image.tar). Corrupt or incomplete ones are refused naming the file and the fault.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ImageArtifactError } from '../../../src/registry/artifact-error.js';
import { readImageArchive } from '../../../src/registry/image-archive.js';
import { assembleImage, type AssembledImage } from '../../../src/registry/oci-image.js';
import { readRootfsArtifact } from '../../../src/registry/rootfs-artifact.js';
import { scratchDir } from '../../util/scratch.js';
import { dockerArchiveFiles, ociLayoutFiles, writeTar, writeTree, type ArchiveFile } from './image-fixtures.js';

const amd64 = { architecture: 'amd64', os: 'linux' };

function rootfsArtifact(metadata: string | null = '{"env":["GREETING=hello","PATH=/bin"],"user":"1000"}'): string {
  const dir = scratchDir('berth-artifact-');
  writeTree(path.join(dir, 'rootfs'), { 'bin/hello': '#!/bin/sh\necho "$GREETING"\n', 'etc/motd': 'hi\n' });
  if (metadata !== null) writeFileSync(path.join(dir, 'metadata.json'), metadata);
  return dir;
}

async function sampleImage(): Promise<AssembledImage> {
  return assembleImage((await readRootfsArtifact(rootfsArtifact(), scratchDir('berth-blobs-'), { platform: amd64 })).image);
}

async function refused(work: Promise<unknown>, file: string, problem: RegExp): Promise<void> {
  await assert.rejects(work, (err: Error) => {
    assert.ok(err instanceof ImageArtifactError, `${err.name}: ${err.message}`);
    assert.equal(err.file, file);
    assert.match(err.problem, problem);
    return true;
  });
}

test('a rootfs artifact: one layer of rootfs/, env and user from metadata.json, labels from labels.json; the same artifact the same image', async () => {
  const dir = rootfsArtifact('{"env":["GREETING=hello"],"user":"1000","cmd":["/bin/hello"]}');
  writeFileSync(path.join(dir, 'labels.json'), '{"org.example.step":"build"}');
  const { image } = await readRootfsArtifact(dir, scratchDir('berth-blobs-'), { platform: amd64 });
  assert.equal(image.layers.length, 1);
  assert.deepEqual(image.config.config, { User: '1000', Env: ['GREETING=hello'], Cmd: ['/bin/hello'], Labels: { 'org.example.step': 'build' } });
  assert.deepEqual(image.config.rootfs.diff_ids, [image.layers[0].diffId]);
  const again = await readRootfsArtifact(dir, scratchDir('berth-blobs-'), { platform: amd64 });
  assert.equal(assembleImage(again.image).manifest.digest, assembleImage(image).manifest.digest);
});

test('a corrupt or incomplete rootfs artifact is refused naming the file', async () => {
  const work = scratchDir('berth-blobs-');
  const noMeta = rootfsArtifact(null);
  await refused(readRootfsArtifact(noMeta, work), path.join(noMeta, 'metadata.json'), /^missing/);
  const badJson = rootfsArtifact('{"env": [');
  await refused(readRootfsArtifact(badJson, work), path.join(badJson, 'metadata.json'), /^not JSON/);
  const badEnv = rootfsArtifact('{"env": ["NOEQUALS"]}');
  await refused(readRootfsArtifact(badEnv, work), path.join(badEnv, 'metadata.json'), /"env" must be a list of "KEY=VALUE" strings/);
  const badUser = rootfsArtifact('{"env": [], "user": 0}');
  await refused(readRootfsArtifact(badUser, work), path.join(badUser, 'metadata.json'), /"user" must be a string/);
  const noRootfs = scratchDir('berth-artifact-');
  writeFileSync(path.join(noRootfs, 'metadata.json'), '{"env":[]}');
  await refused(readRootfsArtifact(noRootfs, work), path.join(noRootfs, 'rootfs'), /missing: a rootfs artifact holds its filesystem in a rootfs\/ folder/);
});

test('an OCI image layout, as a tarball, a gzipped tarball and a folder: the same image, its manifest kept byte for byte', async () => {
  const image = await sampleImage();
  const files = ociLayoutFiles(image);
  const dir = scratchDir('berth-oci-');
  const tarball = await writeTar(path.join(dir, 'image.tar'), files);
  const gzipped = path.join(dir, 'image.tar.gz');
  writeFileSync(gzipped, gzipSync(readFileSync(tarball)));
  const folder = path.join(dir, 'layout');
  for (const f of files) {
    mkdirSync(path.dirname(path.join(folder, f.name)), { recursive: true });
    writeFileSync(path.join(folder, f.name), f.content);
  }
  for (const source of [tarball, gzipped, folder]) {
    const read = await readImageArchive(source, scratchDir('berth-blobs-'), { platform: amd64 });
    assert.equal(read.manifest.digest, image.manifest.digest, source);
    assert.ok(read.manifest.bytes.equals(image.manifest.bytes), source);
    assert.equal(read.config.digest, image.config.digest, source);
    assert.deepEqual(
      read.layers.map((l) => [l.descriptor.digest, l.diffId]),
      image.layers.map((l) => [l.descriptor.digest, l.diffId]),
    );
    assert.ok(readFileSync(read.layers[0].file!).equals(readFileSync(image.layers[0].file!)), source);
  }
});

test('a docker save archive (registry-image image.tar): config kept by its digest, layers checked against the diff ids', async () => {
  const image = await sampleImage();
  const tarball = await writeTar(path.join(scratchDir('berth-docker-'), 'image.tar'), dockerArchiveFiles(image));
  const read = await readImageArchive(tarball, scratchDir('berth-blobs-'));
  assert.equal(read.config.digest, image.config.digest);
  assert.equal(read.manifest.digest, image.manifest.digest, 'the same config and layers make the same manifest');
  assert.equal(read.layers[0].descriptor.mediaType, 'application/vnd.oci.image.layer.v1.tar+gzip');
});

test('corrupt or incomplete image tarballs are refused naming the file and the fault', async () => {
  const image = await sampleImage();
  const dir = scratchDir('berth-bad-');
  const layerBlob = `blobs/${image.layers[0].descriptor.digest.replace(':', '/')}`;
  const configBlob = `blobs/${image.config.digest.replace(':', '/')}`;
  const cases: Array<[string, ArchiveFile[], RegExp]> = [
    [
      'tampered.tar',
      ociLayoutFiles(image).map((f) => (f.name === layerBlob ? { ...f, content: gzipSync('not the layer') } : f)),
      new RegExp(`blob ${layerBlob} does not match its digest: its content hashes to sha256:`),
    ],
    ['missing-blob.tar', ociLayoutFiles(image).filter((f) => f.name !== configBlob), new RegExp(`missing blob ${configBlob} \\(the config of manifest`)],
    ['no-index.tar', ociLayoutFiles(image).filter((f) => f.name !== 'index.json'), /neither an OCI image layout .* nor a docker save archive/],
    [
      'bad-layout.tar',
      ociLayoutFiles(image).map((f) => (f.name === 'oci-layout' ? { ...f, content: Buffer.from('{}') } : f)),
      /oci-layout has no imageLayoutVersion/,
    ],
    [
      'docker-missing-layer.tar',
      dockerArchiveFiles(image).filter((f) => !f.name.endsWith('.tar.gz')),
      /missing [0-9a-f]{64}\.tar\.gz \(a layer named by manifest\.json\)/,
    ],
    [
      'docker-wrong-layer.tar',
      dockerArchiveFiles(image).map((f) => (f.name.endsWith('.tar.gz') ? { ...f, content: gzipSync('other bytes') } : f)),
      /layer [0-9a-f]{64}\.tar\.gz does not match the image config: it unpacks to sha256:[0-9a-f]+, rootfs\.diff_ids\[0\] is/,
    ],
    [
      'docker-bad-config.tar',
      dockerArchiveFiles(image).map((f) => (f.name === image.config.digest ? { ...f, content: Buffer.from('{"rootfs":{}}') } : f)),
      new RegExp(`${image.config.digest} does not match its digest`),
    ],
  ];
  for (const [name, files, problem] of cases) {
    const file = await writeTar(path.join(dir, name), files);
    await refused(readImageArchive(file, scratchDir('berth-blobs-'), { platform: amd64 }), file, problem);
  }
  const cut = path.join(dir, 'cut.tar');
  const whole = readFileSync(await writeTar(path.join(dir, 'whole.tar'), ociLayoutFiles(image)));
  writeFileSync(cut, whole.subarray(0, 1500));
  await refused(readImageArchive(cut, scratchDir('berth-blobs-')), cut, /not a whole tar archive/);
  await refused(readImageArchive(path.join(dir, 'absent.tar'), scratchDir('berth-blobs-')), path.join(dir, 'absent.tar'), /^missing/);
  mkdirSync(path.join(dir, 'empty-folder'));
  await refused(readImageArchive(path.join(dir, 'empty-folder'), scratchDir('berth-blobs-')), path.join(dir, 'empty-folder'), /neither an OCI image layout/);
});
