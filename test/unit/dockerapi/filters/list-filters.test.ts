// docker volume ls and docker network ls filters as dockerd reads them; unknown keys and values refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFilters } from '../../../../src/dockerapi/filters/filters.js';
import { volumeListFilter } from '../../../../src/dockerapi/filters/volume-filters.js';
import { networkListFilter } from '../../../../src/dockerapi/filters/network-filters.js';
import type { NetworkRecord, VolumeRecord } from '../../../../src/dockerapi/model.js';

const f = (v: Record<string, string[]>): ReturnType<typeof parseFilters> => parseFilters(JSON.stringify(v));

const volume = (name: string, labels: Record<string, string> = {}): VolumeRecord => ({ name, claim: `${name}-abc`, created: new Date(), labels });
const volumes = [volume('data', { team: 'a' }), volume('cache'), volume('f'.repeat(64), { 'com.docker.volume.anonymous': '' })];
const usedVolumes = new Set(['data']);
const volumeNames = (v: Record<string, string[]>): string[] => volumes.filter(volumeListFilter(f(v), (n) => usedVolumes.has(n))).map((x) => x.name);

test('volume ls: dangling is used by no container; driver local is every volume, another none', () => {
  assert.deepEqual(volumeNames({ dangling: ['true'] }), ['cache', 'f'.repeat(64)]);
  assert.deepEqual(volumeNames({ dangling: ['0'] }), ['data']);
  assert.deepEqual(volumeNames({ driver: ['local'] }).length, 3);
  assert.deepEqual(volumeNames({ driver: ['nfs'] }), []);
});

test('volume ls: name is the name itself or a pattern; label as everywhere', () => {
  assert.deepEqual(volumeNames({ name: ['^ca'] }), ['cache']);
  assert.deepEqual(volumeNames({ name: ['data'] }), ['data']);
  assert.deepEqual(volumeNames({ label: ['team=a'] }), ['data']);
  assert.deepEqual(volumeNames({ label: ['com.docker.volume.anonymous'] }), ['f'.repeat(64)]);
});

test("volume ls: unknown keys and unreadable dangling refused in dockerd's words", () => {
  assert.throws(() => volumeNames({ bogus: ['1'] }), /^FilterError: invalid filter 'bogus'$|invalid filter 'bogus'/);
  assert.throws(() => volumeNames({ 'label!': ['a'] }), /invalid filter 'label!'/);
  assert.throws(() => volumeNames({ dangling: ['maybe'] }), /invalid filter 'dangling=\[maybe\]'/);
});

const network = (name: string, more: Partial<NetworkRecord> = {}): NetworkRecord => ({
  id: `${name.padEnd(8, '0')}${'c'.repeat(56)}`,
  name,
  driver: 'bridge',
  created: new Date(),
  labels: {},
  internal: false,
  builtin: false,
  ...more,
});
const networks = [
  network('bridge', { builtin: true }),
  network('host', { builtin: true, driver: 'host' }),
  network('none', { builtin: true, driver: 'null' }),
  network('busy', { labels: { ci: 'yes' } }),
  network('idle', { driver: 'macvlan' }),
];
const active = new Set([networks[3].id]);
const networkNames = (v: Record<string, string[]>): string[] => networks.filter(networkListFilter(f(v), (id) => active.has(id))).map((n) => n.name);

test('network ls: type, dangling (no running container, not built in), scope', () => {
  assert.deepEqual(networkNames({ type: ['custom'] }), ['busy', 'idle']);
  assert.deepEqual(networkNames({ type: ['builtin'] }), ['bridge', 'host', 'none']);
  assert.deepEqual(networkNames({ dangling: ['true'] }), ['idle']);
  assert.deepEqual(networkNames({ dangling: ['false'] }), ['bridge', 'host', 'none', 'busy']);
  assert.deepEqual(networkNames({ scope: ['local'] }).length, 5);
  assert.deepEqual(networkNames({ scope: ['swarm'] }), []);
});

test('network ls: driver exactly; name and id the value or a pattern; label', () => {
  assert.deepEqual(networkNames({ driver: ['macvlan'] }), ['idle']);
  assert.deepEqual(networkNames({ driver: ['null'] }), ['none']);
  assert.deepEqual(networkNames({ name: ['^b'] }), ['bridge', 'busy']);
  assert.deepEqual(networkNames({ id: [networks[4].id.slice(0, 6)] }), ['idle']);
  assert.deepEqual(networkNames({ label: ['ci=yes'] }), ['busy']);
});

test("network ls: unknown keys, types and dangling values refused in dockerd's words", () => {
  assert.throws(() => networkNames({ bogus: ['1'] }), /invalid filter 'bogus'/);
  assert.throws(() => networkNames({ type: ['overlay'] }), /invalid filter: 'type'='overlay'/);
  assert.throws(() => networkNames({ dangling: ['yes'] }), /invalid value for filter 'dangling', must be "true" \(or "1"\), or "false" \(or "0"\)/);
  assert.throws(() => networkNames({ dangling: ['true', 'false'] }), /got more than one value for filter key "dangling"/);
});
