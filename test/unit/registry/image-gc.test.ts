// berth gc --image-registry's collection (registry/image-gc.ts) against Debian's docker-registry on 127.0.0.1 with
// deletes enabled: images pushed as berth pushes them (push-target.ts, an expiry tag each), collected once expired and
// only under the prefix; a dry run; the catalog paged two at a time; registries that refuse the catalog.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectExpiredImages, type ImageGcOptions } from '../../../src/registry/image-gc.js';
import { ImagePusher } from '../../../src/registry/image-push.js';
import { nextLink } from '../../../src/registry/listing.js';
import { assembleImage, type AssembledImage } from '../../../src/registry/oci-image.js';
import { expiryOfTag, expiryTag, pushToOwnRepository, type OwnImage } from '../../../src/registry/push-target.js';
import { readRootfsArtifact } from '../../../src/registry/rootfs-artifact.js';
import { startRegistry, type Registry } from '../../e2e/catalog/servers.js';
import { scratchDir } from '../../util/scratch.js';
import { countingProxy, type CountingProxy } from './counting-proxy.js';
import { writeTree } from './image-fixtures.js';

const NOW = new Date('2030-01-01T00:00:00Z');
const minutes = (m: number): Date => new Date(NOW.getTime() + m * 60_000);

async function smallImage(text: string): Promise<AssembledImage> {
  const dir = writeTree(scratchDir('berth-gc-image-'), { 'rootfs/data.txt': text, 'metadata.json': '{}' });
  return assembleImage((await readRootfsArtifact(dir, scratchDir('berth-gc-blobs-'), { platform: { architecture: 'amd64', os: 'linux' } })).image);
}

/** The repository and digest of what a push names. */
function partsOf(registry: string, pushed: OwnImage): { repository: string; digest: string } {
  const [repository, digest] = pushed.reference.slice(registry.length + 1).split('@') as [string, string];
  return { repository, digest };
}

const exists = (registry: string, pushed: OwnImage): Promise<boolean> => {
  const { repository, digest } = partsOf(registry, pushed);
  return new ImagePusher(registry, repository).manifestExists(digest);
};

test('the expiry tag records whole seconds, rounded up (never earlier than asked), and only berth-expires-N is one', () => {
  assert.equal(expiryTag(new Date(1_900_000_000_500)), 'berth-expires-1900000001');
  assert.equal(expiryOfTag('berth-expires-1900000001'), 1_900_000_001);
  for (const other of ['latest', 'berth-expires-', 'berth-expires-12a', 'x-berth-expires-1']) assert.equal(expiryOfTag(other), undefined, other);
});

test('a Link header names the next page however its rel is written; none, no next', () => {
  assert.equal(nextLink('</v2/_catalog?last=b&n=2>; rel="next"'), '/v2/_catalog?last=b&n=2');
  assert.equal(nextLink('<https://r.example/v2/_catalog?n=2&last=a%2Fb>;rel=next'), 'https://r.example/v2/_catalog?n=2&last=a%2Fb');
  assert.equal(nextLink('</p1>; rel="prev", </p3>; rel="last next"'), '/p3');
  assert.equal(nextLink(['</p1>; rel="prev"', '</p3>; rel="next"']), '/p3');
  assert.equal(nextLink('</p1>; rel="prev"'), undefined);
  assert.equal(nextLink(undefined), undefined);
});

describe('collecting expired images from docker-registry', () => {
  let registry: Registry;
  let proxy: CountingProxy;
  let image: AssembledImage;
  before(async () => {
    registry = await startRegistry({ deletes: true });
    proxy = await countingProxy(registry.host);
    image = await smallImage('collect me\n');
  });
  after(async () => {
    await proxy.close();
    await registry.close();
  });

  /** Collection under `prefix` of the registry at `host` (the counting proxy, to see the requests). */
  const options = (prefix: string, more: Partial<ImageGcOptions> = {}, host = registry.host): ImageGcOptions => ({
    target: { registry: host, prefix, plainHttp: false },
    now: NOW,
    dryRun: false,
    includeUnexpired: false,
    ...more,
  });
  const push = (prefix: string, name: string, expiresAt: Date): Promise<OwnImage> =>
    pushToOwnRepository({ registry: registry.host, prefix, plainHttp: false }, name, image, { expiresAt });

  test('expired images under the prefix are deleted, tag and all; unexpired ones, other prefixes and untagged images are kept', async () => {
    const expired = await push('gc/a', 'old', minutes(-5));
    const justNow = await push('gc/a', 'edge', NOW);
    const fresh = await push('gc/a', 'new', minutes(+5));
    const sibling = await push('gc/ab', 'old', minutes(-5));
    const elsewhere = await push('other', 'old', minutes(-5));
    // A user's own image that happens to live under the prefix: no expiry tag, so not berth's to collect.
    const users = new ImagePusher(registry.host, 'gc/a/users-own');
    await users.pushImage(image, { tag: 'latest' });

    const collected = await collectExpiredImages(options('gc/a'));
    assert.deepEqual(collected.map((c) => c.reference).sort(), [expired, justNow].map((p) => p.reference).sort(), 'expired, and expiring at this very second');
    assert.deepEqual(
      collected.find((c) => c.reference === expired.reference),
      { reference: expired.reference, ...partsOf(registry.host, expired), expiresAt: new Date(Math.ceil(minutes(-5).getTime() / 1000) * 1000) },
    );
    assert.equal(await exists(registry.host, expired), false);
    assert.equal(await exists(registry.host, justNow), false);
    assert.deepEqual(await new ImagePusher(registry.host, partsOf(registry.host, expired).repository).tags(), [], 'the expiry tag went with it');
    for (const kept of [fresh, sibling, elsewhere]) assert.equal(await exists(registry.host, kept), true, kept.reference);
    assert.deepEqual(await users.tags(), ['latest']);

    assert.deepEqual(await collectExpiredImages(options('gc/a')), [], 'a second run finds nothing (the emptied repositories stay in the catalog)');
    const all = await collectExpiredImages(options('gc/a', { includeUnexpired: true }));
    assert.deepEqual(
      all.map((c) => c.reference),
      [fresh.reference],
      'includeUnexpired: every image with an expiry tag, still only under the prefix',
    );
    assert.equal(await exists(registry.host, fresh), false);
    assert.deepEqual(await users.tags(), ['latest']);
    await fresh.release(); // already gone: release says nothing
  });

  test('a dry run names what would be deleted and deletes nothing', async () => {
    const expired = await push('dry', 'old', minutes(-1));
    const fresh = await push('dry', 'new', minutes(+1));
    proxy.urls.length = 0;
    const listed = await collectExpiredImages(options('dry', { dryRun: true }, proxy.host));
    assert.deepEqual(
      listed.map((c) => c.repository),
      [partsOf(registry.host, expired).repository],
    );
    assert.equal(await exists(registry.host, expired), true);
    assert.equal(await exists(registry.host, fresh), true);
    assert.ok(!proxy.urls.some((u) => u.startsWith('DELETE')), proxy.urls.join('\n'));
    const wouldAll = await collectExpiredImages(options('dry', { dryRun: true, includeUnexpired: true }));
    assert.equal(wouldAll.length, 2);
    assert.equal(await exists(registry.host, fresh), true);
  });

  test('more repositories than one catalog page: every page is read, two names at a time; a manifest tagged again lives to its latest expiry', async () => {
    const pushed: OwnImage[] = [];
    for (let i = 0; i < 5; i++) pushed.push(await push('paged', `img${i}`, minutes(-10 - i)));
    // The same manifest pushed again into one repository under later expiries: it lives until the latest.
    const again = partsOf(registry.host, pushed[0]!);
    const pusher = new ImagePusher(registry.host, again.repository);
    for (const m of [+1, +2]) await pusher.pushManifest(image.manifest, expiryTag(minutes(m)));
    assert.equal((await pusher.tags()).length, 3);

    proxy.urls.length = 0;
    const collected = await collectExpiredImages(options('paged', { pageSize: 2 }, proxy.host));
    const catalogPages = proxy.urls.filter((u) => u.startsWith('GET /v2/_catalog'));
    assert.ok(catalogPages.length >= 3, `the catalog read in pages of two: ${catalogPages.join(', ')}`);
    assert.ok(
      catalogPages.every((u) => /[?&]n=2(&|$)/.test(u)),
      catalogPages.join(', '),
    );
    // docker-registry 2.8 answers a tags list whole, without a Link, whatever n asks: the pages are the catalog's
    // (the same paging code reads both), and here n is asked for.
    const tagPages = proxy.urls.filter((u) => u.startsWith(`GET /v2/${again.repository}/tags/list`));
    assert.ok(tagPages.length >= 1 && tagPages.every((u) => /[?&]n=2(&|$)/.test(u)), tagPages.join(', '));
    assert.deepEqual(
      collected.map((c) => c.repository).sort(),
      pushed
        .slice(1)
        .map((p) => partsOf(registry.host, p).repository)
        .sort(),
      'all four expired ones, from every page; the one tagged again later is kept',
    );
    assert.equal(await exists(registry.host, pushed[0]!), true);
    assert.deepEqual(
      (await collectExpiredImages(options('paged', { pageSize: 2, now: minutes(+3) }))).map((c) => [c.repository, c.expiresAt.getTime()]),
      [[again.repository, Math.ceil(minutes(+2).getTime() / 1000) * 1000]],
      'collected once its latest expiry passed',
    );
  });
});

describe('registries that refuse the catalog', () => {
  let server: http.Server;
  let host = '';
  /** What the fake registry answers a catalog request with (anything else: 404). */
  let catalogStatus = 404;
  before(async () => {
    server = http.createServer((req, res) => {
      const status = req.url?.startsWith('/v2/_catalog') ? catalogStatus : 404;
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ code: status === 404 ? 'NOT_FOUND' : 'DENIED', message: 'no catalog here' }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  for (const [status, said] of [
    [404, 'has no catalog \\(GET /v2/_catalog answered 404: NOT_FOUND: no catalog here\\)'],
    [403, 'refused to list its repositories \\(the catalog\\) \\(answered 403: DENIED: no catalog here\\)'],
  ] as const)
    test(`${status}: an error naming the registry and that berth needs its catalog`, async () => {
      catalogStatus = status;
      await assert.rejects(
        collectExpiredImages({
          target: { registry: host, prefix: 'ci', plainHttp: false },
          now: NOW,
          dryRun: false,
          includeUnexpired: false,
        }),
        (err: Error) =>
          new RegExp(`^registry ${host} ${said}`).test(err.message) &&
          /through the registry's catalog \(GET \/v2\/_catalog\).*many hosted registries have none/.test(err.message),
      );
    });
});
