import { test } from 'node:test';
import assert from 'node:assert/strict';
import { familiarImage, normalizeImage } from '../../../../src/dockerapi/images/image-ref.js';
import { ImageStore } from '../../../../src/dockerapi/images/image-store.js';
import { EventBus, type DockerEvent } from '../../../../src/dockerapi/event-bus.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

test('references normalize as Docker stores them', () => {
  for (const ref of [
    'busybox',
    'busybox:latest',
    'library/busybox',
    'docker.io/library/busybox',
    'docker.io/library/busybox:latest',
    'index.docker.io/library/busybox',
  ]) {
    assert.equal(normalizeImage(ref), 'docker.io/library/busybox:latest', ref);
  }
  assert.equal(normalizeImage('user/app:1'), 'docker.io/user/app:1');
  assert.equal(normalizeImage(`busybox@${DIGEST}`), `docker.io/library/busybox@${DIGEST}`);
  assert.equal(normalizeImage(`busybox:1@${DIGEST}`), `docker.io/library/busybox:1@${DIGEST}`);
  assert.equal(normalizeImage('localhost:5000/team/app'), 'localhost:5000/team/app:latest');
  assert.equal(normalizeImage('registry.example:5000/app:2'), 'registry.example:5000/app:2');
  assert.equal(normalizeImage('localhost/berth/busybox:1'), 'localhost/berth/busybox:1', "podman's local images stay localhost/");
  assert.equal(normalizeImage('ghcr.io/x/y'), 'ghcr.io/x/y:latest');
  assert.throws(
    () => normalizeImage('Busybox'),
    (err: Error & { status?: number }) => err.status === 400 && /invalid reference format/.test(err.message),
  );
});

test('the familiar form is what the docker CLI prints', () => {
  assert.equal(familiarImage('docker.io/library/busybox:latest'), 'busybox:latest');
  assert.equal(familiarImage('docker.io/user/app:1'), 'user/app:1');
  assert.equal(familiarImage('localhost/berth/busybox:1'), 'localhost/berth/busybox:1');
  assert.equal(familiarImage('ghcr.io/x/y:latest'), 'ghcr.io/x/y:latest');
});

test('an image pulled under one spelling is found under every other; each pull is an event', () => {
  const bus = new EventBus();
  const events: DockerEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const store = new ImageStore(bus, undefined);
  const img = store.pull('docker.io/library/busybox:latest');
  for (const ref of ['busybox', 'busybox:latest', 'library/busybox', 'docker.io/library/busybox']) assert.equal(store.find(ref), img, ref);
  assert.throws(() => store.find('busybox:1'), /No such image: busybox:1/);
  assert.equal(store.pull('busybox'), img, 'a re-pull is the same record');
  assert.deepEqual(
    events.map((e) => [e.Action, e.Actor.ID, e.Actor.Attributes.name]),
    [
      ['pull', 'busybox:latest', 'busybox'],
      ['pull', 'busybox:latest', 'busybox'],
    ],
  );
  img.info = { config: { Labels: { tier: 'base' } }, configDigest: DIGEST, repoDigest: `busybox@${DIGEST}` };
  store.pull('busybox');
  assert.equal(events.at(-1)?.Actor.Attributes.tier, 'base', "the pull event carries the image's labels, as dockerd's (docker events --filter label=)");
  store.tag('busybox', 'localhost:5000/mirror/busybox', 'v1');
  assert.equal(store.find('localhost:5000/mirror/busybox:v1'), img);
  assert.deepEqual(store.remove('busybox'), [{ Untagged: 'busybox:latest' }]);
  assert.equal(store.find('localhost:5000/mirror/busybox:v1'), img);
});
