// What the prunes may remove, as dockerd decides it: label, label!, until, volume prune's anonymous-only
// default; any other key, or a value dockerd cannot read, is refused before anything is removed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FilterError, parseFilters } from '../../../../src/dockerapi/filters/filters.js';
import { pruneFilter, volumePruneFilter } from '../../../../src/dockerapi/filters/prune-filters.js';

const NOW = Date.parse('2026-03-10T12:00:00Z');
const made = (labels: Record<string, string>, minutesAgo = 0): { labels: Record<string, string>; created: Date } => ({
  labels,
  created: new Date(NOW - minutesAgo * 60_000),
});
const filters = (f: Record<string, string[]>): ReturnType<typeof parseFilters> => parseFilters(JSON.stringify(f));

test('label! keeps what has the label (docker container prune --filter label!=keep=yes)', () => {
  const wanted = pruneFilter(filters({ 'label!': ['keep=yes'] }), NOW);
  assert.equal(wanted(made({ keep: 'yes' })), false);
  assert.equal(wanted(made({ keep: 'no' })), true);
  assert.equal(wanted(made({})), true);
  const byKey = pruneFilter(filters({ 'label!': ['keep'] }), NOW);
  assert.equal(byKey(made({ keep: 'anything' })), false);
});

test('label and label! together; several label! keep only what has them all, as dockerd', () => {
  const wanted = pruneFilter(filters({ label: ['ci'], 'label!': ['keep=yes'] }), NOW);
  assert.equal(wanted(made({ ci: '', keep: 'yes' })), false);
  assert.equal(wanted(made({ ci: '' })), true);
  assert.equal(wanted(made({ other: '' })), false, 'label must hold');
  const both = pruneFilter(filters({ 'label!': ['a', 'b'] }), NOW);
  assert.equal(both(made({ a: '' })), true);
  assert.equal(both(made({ a: '', b: '' })), false);
});

test('until: made at or before it; a duration counts back from now; RFC 3339 and unix seconds', () => {
  const hour = pruneFilter(filters({ until: ['1h'] }), NOW);
  assert.equal(hour(made({}, 61)), true);
  assert.equal(hour(made({}, 59)), false);
  const at = pruneFilter(filters({ until: ['2026-03-10T11:00:00Z'] }), NOW);
  assert.equal(at(made({}, 60)), true);
  assert.equal(at(made({}, 30)), false);
  const unix = pruneFilter(filters({ until: [String(NOW / 1000 - 600)] }), NOW);
  assert.equal(unix(made({}, 11)), true);
  assert.equal(unix(made({}, 9)), false);
});

test("unknown keys and unreadable values are refused in dockerd's words", () => {
  assert.throws(
    () => pruneFilter(filters({ bogus: ['1'] }), NOW),
    (err: Error) => err instanceof FilterError && err.message === "invalid filter 'bogus'",
  );
  assert.throws(() => pruneFilter(filters({ status: ['exited'] }), NOW), /invalid filter 'status'/);
  assert.throws(() => pruneFilter(filters({ until: ['1h', '2h'] }), NOW), /more than one until filter specified/);
  assert.throws(() => pruneFilter(filters({ until: ['yesterday'] }), NOW), /failed to parse value as time or duration: "yesterday"/);
  assert.throws(() => volumePruneFilter(filters({ dangling: ['true'] }), '1.44'), /invalid filter 'dangling'/);
  assert.throws(() => volumePruneFilter(filters({ until: ['1h'] }), '1.44'), /invalid filter 'until'/);
});

test('volume prune: anonymous volumes only from API 1.42, unless all; older clients get every volume', () => {
  const anonymous = { 'com.docker.volume.anonymous': '' };
  const named = { team: 'a' };
  const current = volumePruneFilter(filters({}), '1.44');
  assert.equal(current(anonymous), true);
  assert.equal(current(named), false);
  for (const yes of ['true', '1', 'True']) assert.equal(volumePruneFilter(filters({ all: [yes] }), '1.44')(named), true, yes);
  assert.equal(volumePruneFilter(filters({ all: ['false'] }), '1.44')(named), false);
  assert.equal(volumePruneFilter(filters({}), '1.41')(named), true);
  assert.throws(() => volumePruneFilter(filters({ all: ['maybe'] }), '1.44'), /invalid filter 'all': "maybe" is not a boolean/);
  assert.throws(() => volumePruneFilter(filters({ all: ['true', 'false'] }), '1.44'), /invalid filter 'all=\[true false\]': only one value is expected/);
});

test('volume prune: label and label! on top of the anonymous default', () => {
  const wanted = volumePruneFilter(filters({ all: ['true'], 'label!': ['keep'] }), '1.44');
  assert.equal(wanted({ keep: '' }), false);
  assert.equal(wanted({ other: '' }), true);
  const team = volumePruneFilter(filters({ label: ['team=a'] }), '1.44');
  assert.equal(team({ team: 'a' }), false, 'a named volume is not anonymous');
  assert.equal(team({ team: 'a', 'com.docker.volume.anonymous': '' }), true);
});
