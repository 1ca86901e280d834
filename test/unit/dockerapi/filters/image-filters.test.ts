// `docker images --filter …` as dockerd reads it: dangling (no tag), label, before, since, until, reference
// (Go's path.Match against four forms of each name); unknown keys and unreadable values refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FilterError, parseFilters } from '../../../../src/dockerapi/filters/filters.js';
import { imageListFilter } from '../../../../src/dockerapi/filters/image-filters.js';
import { imageListItem } from '../../../../src/dockerapi/images/image-view.js';
import { API_VERSION } from '../../../../src/dockerapi/http/api-version.js';
import { pathPattern, PatternSyntaxError } from '../../../../src/dockerapi/filters/path-pattern.js';
import { normalizeImage, repositoryOf } from '../../../../src/dockerapi/images/image-ref.js';
import { imageId, type ImageRecord } from '../../../../src/dockerapi/model.js';
import { notFound } from '../../../../src/dockerapi/http/http.js';

const NOW = Date.parse('2026-03-10T12:00:00Z');
const DIGEST = `sha256:${'d'.repeat(64)}`;
const f = (v: Record<string, string[]>): ReturnType<typeof parseFilters> => parseFilters(JSON.stringify(v));

/** A record as a pull makes it; `hoursAgo` is when berth recorded it (no config: that is its Created). */
function image(refs: string[], hoursAgo: number, labels?: Record<string, string>): ImageRecord {
  const tags = new Set(refs.map(normalizeImage));
  const created = new Date(NOW - hoursAgo * 3_600_000);
  const info = labels
    ? { config: { Labels: labels }, configDigest: DIGEST, repoDigest: `${repositoryOf(normalizeImage(refs[0]))}@${DIGEST}`, created: created.toISOString() }
    : undefined;
  return { id: imageId(refs[0]), ref: [...tags][0], tags, created, ...(info ? { info } : {}) };
}

const busybox = image(['busybox:1.36', 'busybox:latest'], 30, { 'org.opencontainers.image.title': 'busybox' });
const app = image(['localhost:5000/team/app:2', 'localhost:5000/team/app:2-rc'], 20, { team: 'a' });
const byDigest = image([`alpine@${DIGEST}`], 10);
const web = image(['ghcr.io/acme/web:1'], 1, { team: 'b' });
const images = [busybox, app, byDigest, web];

function find(ref: string): ImageRecord {
  const found = images.find((i) => i.id === ref || [...i.tags].includes(normalizeImage(ref)));
  if (!found) throw notFound(`No such image: ${ref}`);
  return found;
}
const listed = (v: Record<string, string[]>): string[] => {
  const listing = imageListFilter(f(v), find, NOW);
  return images.filter(listing.includes).map((i) => [...(imageListItem(i, API_VERSION, 0, listing.references(i)).RepoTags as string[])].join(',') || '<none>');
};

test("dangling: an image with no tag (pulled by digest), which berth's images, with no layers, are only; false: the tagged ones", () => {
  assert.deepEqual(listed({ dangling: ['true'] }), ['<none>']);
  assert.deepEqual(listed({ dangling: ['1'] }), ['<none>']);
  assert.deepEqual(listed({ dangling: ['false'] }), [
    'busybox:1.36,busybox:latest',
    'localhost:5000/team/app:2,localhost:5000/team/app:2-rc',
    'ghcr.io/acme/web:1',
  ]);
  assert.deepEqual(listed({}).length, 4);
});

test("label: the image config's labels, all of them; an image whose config berth never read has none", () => {
  assert.deepEqual(listed({ label: ['team'] }), ['localhost:5000/team/app:2,localhost:5000/team/app:2-rc', 'ghcr.io/acme/web:1']);
  assert.deepEqual(listed({ label: ['team=b'] }), ['ghcr.io/acme/web:1']);
  assert.deepEqual(listed({ label: ['team=a', 'other'] }), []);
});

test('before, since: made before or after the image named (by name or id); several all hold', () => {
  assert.deepEqual(listed({ before: ['alpine@' + DIGEST] }), ['busybox:1.36,busybox:latest', 'localhost:5000/team/app:2,localhost:5000/team/app:2-rc']);
  assert.deepEqual(listed({ since: ['localhost:5000/team/app:2'] }), ['<none>', 'ghcr.io/acme/web:1']);
  assert.deepEqual(listed({ since: ['busybox'], before: [web.id] }), ['localhost:5000/team/app:2,localhost:5000/team/app:2-rc', '<none>']);
  assert.deepEqual(listed({ before: ['ghcr.io/acme/web:1', 'localhost:5000/team/app:2'] }), ['busybox:1.36,busybox:latest']);
  assert.throws(
    () => listed({ before: ['nope:1'] }),
    (err: Error & { status?: number }) => err.message === 'No such image: nope:1',
  );
});

test('until: made before it; a duration back from now, an RFC 3339 time or unix seconds; several all hold', () => {
  assert.deepEqual(listed({ until: ['15h'] }), ['busybox:1.36,busybox:latest', 'localhost:5000/team/app:2,localhost:5000/team/app:2-rc']);
  assert.deepEqual(listed({ until: ['2026-03-09T12:00:00Z'] }), ['busybox:1.36,busybox:latest']);
  assert.deepEqual(listed({ until: [String((NOW - 5 * 3_600_000) / 1000), '25h'] }), ['busybox:1.36,busybox:latest']);
  assert.throws(
    () => listed({ until: ['yesterday'] }),
    /^FilterError: invalid value for 'until' filter: failed to parse value as time or duration: "yesterday"|invalid value for 'until' filter: failed to parse value as time or duration: "yesterday"/,
  );
});

test('reference: a shell pattern against the name familiar and canonical, with and without the tag; only matching tags shown', () => {
  assert.deepEqual(listed({ reference: ['busybox'] }), ['busybox:1.36,busybox:latest']);
  assert.deepEqual(listed({ reference: ['busybox:1.*'] }), ['busybox:1.36']);
  assert.deepEqual(listed({ reference: ['docker.io/library/busybox:latest'] }), ['busybox:latest']);
  assert.deepEqual(listed({ reference: ['busy*'] }), ['busybox:1.36,busybox:latest']);
  assert.deepEqual(listed({ reference: ['*'] }), ['busybox:1.36,busybox:latest', '<none>'], "* crosses no /: Docker Hub's library only");
  assert.deepEqual(listed({ reference: ['*/team/*'] }), ['localhost:5000/team/app:2,localhost:5000/team/app:2-rc']);
  assert.deepEqual(listed({ reference: ['*/*/*'] }).length, 4, 'the canonical forms have three parts');
  assert.deepEqual(listed({ reference: ['localhost:5000/team/app:?'] }), ['localhost:5000/team/app:2']);
  assert.deepEqual(listed({ reference: ['alpine'] }), ['<none>'], 'an image pulled by digest is found by its name');
  assert.deepEqual(listed({ reference: ['library/busybox'] }), [], 'neither familiar nor canonical, as with dockerd');
  assert.deepEqual(listed({ reference: ['busybox', 'ghcr.io/*/web'] }), ['busybox:1.36,busybox:latest', 'ghcr.io/acme/web:1']);
  const listing = imageListFilter(f({ reference: ['busybox:latest'] }), find, NOW);
  assert.deepEqual(imageListItem(busybox, API_VERSION, 0, listing.references(busybox)).RepoDigests, [], 'the digest is not busybox:latest');
});

test("unknown keys, unreadable dangling and malformed patterns are refused in dockerd's words", () => {
  assert.throws(
    () => listed({ bogus: ['1'] }),
    (err: Error) => err instanceof FilterError && err.message === "invalid filter 'bogus'",
  );
  assert.throws(() => listed({ 'label!': ['a'] }), /invalid filter 'label!'/);
  assert.throws(() => listed({ dangling: ['maybe'] }), /invalid filter 'dangling=\[maybe\]'/);
  assert.throws(() => listed({ dangling: ['true', 'false'] }), /invalid filter 'dangling=\[true false\]'/);
  assert.throws(() => listed({ reference: ['busybox:[1'] }), /invalid filter 'reference=busybox:\[1': syntax error in pattern/);
});

test("path patterns as Go's path.Match reads them", () => {
  const cases: Array<[string, string, boolean]> = [
    ['abc', 'abc', true],
    ['*', 'abc', true],
    ['*c', 'abc', true],
    ['a*', 'a', true],
    ['a*/b', 'abc/b', true],
    ['a*/b', 'a/c/b', false],
    ['a*b*c*d*e*/f', 'axbxcxdxe/f', true],
    ['a*b*c*d*e*/f', 'axbxcxdxexxx/f', true],
    ['a*b*c*d*e*/f', 'axbxcxdxe/xxx/f', false],
    ['ab[c]', 'abc', true],
    ['ab[b-d]', 'abc', true],
    ['ab[e-g]', 'abc', false],
    ['ab[^c]', 'abc', false],
    ['ab[^b-d]', 'abe', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'ab', false],
    ['a?b', 'a☺b', true],
    ['a[^a]b', 'a☺b', true],
    ['a???b', 'a☺b', false],
    ['a?b', 'a/b', false],
    ['a[/]b', 'a/b', true],
    ['[\\]a]', ']', true],
    ['[\\-]', '-', true],
    ['[x\\-]', 'z', false],
    ['*x', 'xxx', true],
    ['a*', 'ab/c', false],
  ];
  for (const [pattern, name, want] of cases) assert.equal(pathPattern(pattern)(name), want, `${pattern} ~ ${name}`);
  for (const bad of ['[', '[^', '[^bc', 'a[', '[]a]', '[-]', '[x-]', '[a-b-c', 'a\\', '[\\', 'ab[', '*x[']) {
    assert.throws(() => pathPattern(bad), PatternSyntaxError, bad);
  }
});
