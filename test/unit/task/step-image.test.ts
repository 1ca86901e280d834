// A task step's image: ARTIFACT: the artifact read in either format the image resources write, pushed by digest to a
// registry (Debian's docker-registry on 127.0.0.1), deleted again; the registry flag's form; what is refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pack } from 'tar-stream';
import { ImagePusher } from '../../../src/registry/image-push.js';
import { imageInFolder, parseImageRegistry, pushStepImage } from '../../../src/task/step-image.js';
import { startRegistry, type Registry } from '../../e2e/catalog/servers.js';
import { dockerArchiveFiles, writeTar, writeTree } from '../registry/image-fixtures.js';
import { scratchDir } from '../../util/scratch.js';

let registry: Registry;
let work: string;
before(async () => {
  registry = await startRegistry({ deletes: true });
  work = scratchDir('berth-step-image-');
});
after(async () => {
  await registry.close();
});

const rootfs = (dir: string): string =>
  writeTree(dir, { 'rootfs/hello.txt': 'from the step before\n', 'metadata.json': JSON.stringify({ env: ['GREETING=hi'], user: '1000' }) });

test('--image-registry is REGISTRY/PREFIX; a bare name or an upper-case path is refused saying what to give', () => {
  assert.deepEqual(parseImageRegistry('127.0.0.1:5115/ci', '--image-registry'), { registry: '127.0.0.1:5115', prefix: 'ci', plainHttp: false });
  assert.deepEqual(parseImageRegistry('http://10.244.0.1:5115/ci', '--image-registry'), { registry: '10.244.0.1:5115', prefix: 'ci', plainHttp: true });
  assert.deepEqual(parseImageRegistry('registry.example.com/team/ci/', '$X'), { registry: 'registry.example.com', prefix: 'team/ci', plainHttp: false });
  assert.deepEqual(parseImageRegistry('localhost/ci', '$X'), { registry: 'localhost', prefix: 'ci', plainHttp: false });
  for (const bad of ['ci', 'ci/images', '127.0.0.1:5115', '127.0.0.1:5115/CI'])
    assert.throws(() => parseImageRegistry(bad, '--image-registry'), new RegExp(`^TaskUsageError: --image-registry ${bad}: give REGISTRY/PREFIX`));
});

test('a folder holds an image as rootfs/ + metadata.json, as image.tar, or as an OCI layout; anything else is refused', async () => {
  const blobs = path.join(work, 'blobs-detect');
  mkdirSync(blobs);
  const fromRootfs = await imageInFolder(rootfs(path.join(work, 'a')), blobs);
  const config = JSON.parse(fromRootfs.config.bytes.toString()) as { config: { Env: string[]; User: string } };
  assert.deepEqual([config.config.Env, config.config.User], [['GREETING=hi'], '1000']);
  const tarball = path.join(work, 'b');
  mkdirSync(tarball);
  await writeTar(path.join(tarball, 'image.tar'), dockerArchiveFiles(fromRootfs));
  assert.equal((await imageInFolder(tarball, blobs)).manifest.digest, fromRootfs.manifest.digest, 'the same image, whatever its wrapping');
  const empty = writeTree(path.join(work, 'c'), { 'README.md': 'no image here\n' });
  await assert.rejects(imageInFolder(empty, blobs), /holds no image: an image artifact has rootfs\/ beside metadata\.json \(format: rootfs\) or image\.tar/);
  const broken = writeTree(path.join(work, 'd'), { 'metadata.json': '{"env": "not a list"}', 'rootfs/x': 'x' });
  await assert.rejects(imageInFolder(broken, blobs), /metadata\.json/);
});

test('an artifact in memory (a tar) and one on disk are pushed by digest into a repository of their own, and deleted at release', async () => {
  const onDisk = rootfs(path.join(work, 'disk'));
  const target = { registry: registry.host, prefix: 'ci', plainHttp: false };
  const fromDir = await pushStepImage({ dir: onDisk }, 'My_Image', target, { expiresAt: new Date(1_900_003_600_000) });
  assert.match(fromDir.reference, new RegExp(`^${registry.host.replace(/\./g, '\\.')}/ci/my_image-[0-9a-f]{8}@sha256:[0-9a-f]{64}$`));
  const tar = pack();
  tar.entry({ name: 'metadata.json', mode: 0o644 }, JSON.stringify({ env: ['GREETING=hi'], user: '1000' }));
  tar.entry({ name: 'rootfs/', type: 'directory', mode: 0o755 });
  tar.entry({ name: 'rootfs/hello.txt', mode: 0o644 }, 'from the step before\n');
  tar.finalize();
  const artifact = { tar: await buffer(tar.pipe(new PassThrough())) };
  const before = Math.ceil(Date.now() / 1000);
  const fromTar = await pushStepImage(artifact, 'img', target, { ttlSeconds: 3600 });
  const [repo, digest] = fromTar.reference.slice(registry.host.length + 1).split('@') as [string, string];
  const pushed = new ImagePusher(registry.host, repo);
  assert.equal(await pushed.manifestExists(digest), true);
  const [tag = '', ...more] = await pushed.tags();
  const expires = Number(tag.replace('berth-expires-', ''));
  assert.ok(
    more.length === 0 && expires >= before + 3600 && expires <= Math.ceil(Date.now() / 1000) + 3600,
    `one expiry tag, BERTH_TTL after the push: ${tag}`,
  );
  assert.equal(await pushed.manifestDigest(tag), digest);
  const [dirRepo] = fromDir.reference.slice(registry.host.length + 1).split('@') as [string];
  assert.deepEqual(
    await new ImagePusher(registry.host, dirRepo).tags(),
    ['berth-expires-1900003600'],
    'an expiry given outright, for berth gc --image-registry',
  );
  await fromTar.release();
  await fromDir.release();
  assert.equal(await pushed.manifestExists(digest), false);
  assert.deepEqual(await pushed.tags(), [], 'the expiry tag went with the manifest');
});

test('an artifact whose image cannot be read pushes nothing', async () => {
  await assert.rejects(
    pushStepImage({ dir: writeTree(path.join(work, 'f'), { x: 'y' }) }, 'x', { registry: registry.host, prefix: 'ci', plainHttp: false }, { ttlSeconds: 60 }),
    /holds no image/,
  );
  const catalog = await fetch(`http://${registry.host}/v2/_catalog`);
  const repositories = ((await catalog.json()) as { repositories: string[] }).repositories;
  assert.ok(!repositories.some((r) => r.startsWith('ci/x-')), JSON.stringify(repositories));
});
