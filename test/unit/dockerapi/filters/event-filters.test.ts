// `docker events --filter …` as dockerd reads it (daemon/events/filter.go); keys it does not know refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FilterError, parseFilters } from '../../../../src/dockerapi/filters/filters.js';
import { eventFilter } from '../../../../src/dockerapi/filters/event-filters.js';
import { EventBus, type DockerEvent } from '../../../../src/dockerapi/event-bus.js';

const f = (v: Record<string, string[]>): ReturnType<typeof parseFilters> => parseFilters(JSON.stringify(v));

/** The events berth sends, made by its own bus. */
function recorded(): DockerEvent[] {
  const bus = new EventBus();
  const out: DockerEvent[] = [];
  bus.subscribe((e) => out.push(e));
  const web = { id: 'c0ffee'.padEnd(64, '1'), name: 'web', image: 'busybox:1.36', body: { Labels: { tier: 'front' } } };
  bus.emit('container', 'create', web);
  bus.emit('container', 'health_status: healthy', web);
  bus.emit('container', 'create', { id: 'beef'.padEnd(64, '2'), name: 'db', image: 'localhost/berth/postgres:16' });
  bus.emit('image', 'pull', { id: 'busybox:1.36', name: 'busybox', body: { Labels: { tier: 'base' } } });
  bus.emit('network', 'connect', { id: 'abc'.padEnd(64, '3'), name: 'webnet' }, { container: web.id });
  bus.emit('volume', 'create', { id: 'data', name: 'data' });
  return out;
}
const events = recorded();
const seen = (v: Record<string, string[]>): string[] => events.filter(eventFilter(f(v))).map((e) => `${e.Type}/${e.Action}/${e.Actor.Attributes.name}`);

test('type, event (health_status, exec_create, exec_start also by their beginning) and scope', () => {
  assert.deepEqual(seen({ type: ['image', 'volume'] }), ['image/pull/busybox', 'volume/create/data']);
  assert.deepEqual(seen({ event: ['create'] }), ['container/create/web', 'container/create/db', 'volume/create/data']);
  assert.deepEqual(seen({ event: ['health_status'] }), ['container/health_status: healthy/web']);
  assert.deepEqual(seen({ event: ['health_status: healthy'] }), ['container/health_status: healthy/web']);
  assert.deepEqual(seen({ event: ['health'] }), [], 'other actions are matched whole');
  assert.deepEqual(seen({ scope: ['local'] }).length, events.length);
  assert.deepEqual(seen({ scope: ['swarm'] }), []);
});

test("container, network, volume, daemon: the id or the name, whole or its beginning, whatever the event's type", () => {
  assert.deepEqual(
    seen({ container: ['web'] }),
    ['container/create/web', 'container/health_status: healthy/web', 'network/connect/webnet'],
    'webnet begins with web',
  );
  assert.deepEqual(seen({ container: ['c0ffee'] }), ['container/create/web', 'container/health_status: healthy/web']);
  assert.deepEqual(seen({ container: ['web', 'db'], type: ['container'] }), [
    'container/create/web',
    'container/health_status: healthy/web',
    'container/create/db',
  ]);
  assert.deepEqual(seen({ network: ['webnet'] }), ['network/connect/webnet']);
  assert.deepEqual(seen({ volume: ['data'] }), ['volume/create/data']);
  assert.deepEqual(seen({ container: ['web'], volume: ['data'] }), [], 'each key holds for every event, as dockerd');
  assert.deepEqual(seen({ daemon: ['x'] }), [], 'berth sends no daemon events, and other events are held to it too');
  for (const key of ['plugin', 'node', 'service', 'secret', 'config']) assert.deepEqual(seen({ [key]: ['nothing'] }), [], key);
});

test("image: an image event's id and name, a container event's image, each also without the tag", () => {
  assert.deepEqual(seen({ image: ['busybox'] }), ['container/create/web', 'container/health_status: healthy/web', 'image/pull/busybox']);
  assert.deepEqual(seen({ image: ['busybox:1.36'] }), ['container/create/web', 'container/health_status: healthy/web', 'image/pull/busybox']);
  assert.deepEqual(seen({ image: ['busybox:latest'] }), []);
  assert.deepEqual(seen({ image: ['localhost/berth/postgres'] }), ['container/create/db']);
  assert.deepEqual(seen({ image: ['docker.io/library/busybox'] }), [], 'matched as the event names it, as dockerd');
});

test("label: the attributes (a container's labels, an image's), all of them", () => {
  assert.deepEqual(seen({ label: ['tier'] }), ['container/create/web', 'container/health_status: healthy/web', 'image/pull/busybox']);
  assert.deepEqual(seen({ label: ['tier=base'] }), ['image/pull/busybox']);
  assert.deepEqual(seen({ label: ['tier=front', 'name=web'] }), ['container/create/web', 'container/health_status: healthy/web']);
  assert.deepEqual(seen({ label: ['tier=front', 'other'] }), []);
});

test('a key dockerd does not know is refused (dockerd would let it pass and show every event)', () => {
  assert.throws(
    () => eventFilter(f({ bogus: ['1'] })),
    (err: Error) => err instanceof FilterError && err.message === "invalid filter 'bogus'",
  );
  assert.throws(() => eventFilter(f({ contianer: ['web'] })), /invalid filter 'contianer'/);
  assert.throws(() => eventFilter(f({ 'label!': ['a'] })), /invalid filter 'label!'/);
});
