// `docker ps --filter …` as dockerd reads it: every key it accepts filters, bad values and unknown keys are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FilterError, parseFilters } from '../../../../src/dockerapi/filters/filters.js';
import { containerListFilter } from '../../../../src/dockerapi/filters/container-filters.js';
import { freshRunState, type ContainerRecord, type CreateBody } from '../../../../src/dockerapi/model.js';
import { portSummaries } from '../../../../src/dockerapi/containers/container-view.js';
import { replanContainer } from '../../../../src/dockerapi/containers/create-plan.js';

let serial = 0;
function container(name: string, body: CreateBody = {}, more: Partial<ContainerRecord> = {}): ContainerRecord {
  serial++;
  return {
    id: `${String(serial).padStart(4, '0')}${'ab'.repeat(30)}`,
    name,
    created: new Date(Date.UTC(2026, 0, 1, 0, serial)),
    image: 'busybox',
    body: { Image: 'busybox', ...body },
    plan: replanContainer({ Image: 'busybox', ...body }, { allowed: [], allowPrivileged: false }),
    cmd: [],
    entrypoint: [],
    ...freshRunState(),
    status: 'running',
    networks: new Map(),
    ...more,
  };
}

const lookups = (all: ContainerRecord[]): Parameters<typeof containerListFilter>[1] => ({
  container: (ref) => {
    const c = all.find((x) => x.id.startsWith(ref) || x.name === ref);
    if (!c) throw new Error(`No such container: ${ref}`);
    return c;
  },
  networkName: () => undefined,
});

const names = (f: Record<string, string[]>, all: ContainerRecord[]): string[] =>
  all.filter(containerListFilter(parseFilters(JSON.stringify(f)), lookups(all))).map((c) => c.name);

test('volume: a container that mounts the named volume, or anything at the mount point; no other', () => {
  const all = [
    container('bind', { HostConfig: { Binds: ['data:/srv/data/:ro'] } }),
    container('mount', { HostConfig: { Mounts: [{ Type: 'volume', Source: 'data', Target: '/var/lib/db' }] } }),
    container('tmpfs', { HostConfig: { Mounts: [{ Type: 'tmpfs', Target: '/scratch' }] } }),
    container('anon', {}, { anonymousVolumes: [{ name: 'f'.repeat(64), target: '/cache' }] }),
    container('none'),
  ];
  assert.deepEqual(names({ volume: ['data'] }, all), ['bind', 'mount']);
  assert.deepEqual(names({ volume: ['/srv/data'] }, all), ['bind'], 'destinations are compared cleaned, as dockerd keeps them');
  assert.deepEqual(names({ volume: ['/scratch'] }, all), ['tmpfs']);
  assert.deepEqual(names({ volume: ['f'.repeat(64)] }, all), ['anon']);
  assert.deepEqual(names({ volume: ['/cache', 'data'] }, all), ['bind', 'mount', 'anon'], 'several values: any one');
  assert.deepEqual(names({ volume: ['nothing'] }, all), [], 'no match is no container, never all of them');
});

test("publish matches a host port, expose a container port, of what ps shows (a running container's ports)", () => {
  const web = container(
    'web',
    { ExposedPorts: { '80/tcp': {}, '9090/tcp': {}, '53/udp': {} } },
    {
      ports: [{ key: '80/tcp', containerPort: 80, hostIp: '127.0.0.1', reportedIp: '127.0.0.1', hostPort: 32768 }],
    },
  );
  const stopped = container('stopped', { ExposedPorts: { '80/tcp': {} } }, { status: 'exited' });
  const all = [web, stopped];
  assert.deepEqual(portSummaries(web), [
    { IP: '127.0.0.1', PrivatePort: 80, PublicPort: 32768, Type: 'tcp' },
    { PrivatePort: 9090, Type: 'tcp' },
    { PrivatePort: 53, Type: 'udp' },
  ]);
  assert.deepEqual(names({ publish: ['32768'] }, all), ['web']);
  assert.deepEqual(names({ publish: ['80'] }, all), [], 'publish is the host port');
  assert.deepEqual(names({ publish: ['32000-33000/tcp'] }, all), ['web']);
  assert.deepEqual(names({ expose: ['80'] }, all), ['web'], 'a stopped container shows no ports');
  assert.deepEqual(names({ expose: ['9090/tcp'] }, all), ['web'], 'exposed without a binding');
  assert.deepEqual(names({ expose: ['53'] }, all), [], 'no protocol is tcp');
  assert.deepEqual(names({ expose: ['53/udp'] }, all), ['web']);
  assert.deepEqual(names({ expose: ['1'], publish: ['32768'] }, all), ['web'], 'either one passes');
});

test('publish and expose values dockerd cannot read are refused', () => {
  const f = (v: Record<string, string[]>): unknown => containerListFilter(parseFilters(JSON.stringify(v)), lookups([]));
  assert.throws(() => f({ publish: ['127.0.0.1:80'] }), /filter for 'publish' should not contain ':': 127.0.0.1:80/);
  assert.throws(() => f({ expose: ['http'] }), /error while looking up for expose http/);
  assert.throws(() => f({ expose: ['90-80'] }), FilterError);
  assert.throws(() => f({ publish: ['70000'] }), FilterError);
});

test("status, health and exited values are checked in dockerd's words; unknown keys refused", () => {
  const f = (v: Record<string, string[]>): unknown => containerListFilter(parseFilters(JSON.stringify(v)), lookups([]));
  assert.throws(
    () => f({ status: ['bogus'] }),
    (err: Error) =>
      err instanceof FilterError && err.message.startsWith("invalid filter 'status=bogus': invalid value for state (bogus): must be one of created, running"),
  );
  assert.throws(() => f({ health: ['fine'] }), /invalid filter 'health=fine'/);
  assert.throws(() => f({ exited: ['x'] }), /invalid filter 'exited=x'/);
  assert.throws(() => f({ 'is-task': ['maybe'] }), /invalid filter 'is-task=\[maybe\]'/);
  assert.throws(() => f({ bogus: ['1'] }), /invalid filter 'bogus'/);
  assert.doesNotThrow(() => f({ status: ['paused'], health: ['none'], exited: ['137'] }));
});

test('name and id: the value itself or a Go pattern, the name with or without its slash', () => {
  const all = [container('web-1'), container('db')];
  assert.deepEqual(names({ name: ['^web'] }, all), ['web-1']);
  assert.deepEqual(names({ name: ['^/db$'] }, all), ['db']);
  assert.deepEqual(names({ id: [all[1].id.slice(0, 4)] }, all), ['db']);
});

test('is-task, isolation, exited, before and since', () => {
  const first = container('first', {}, { status: 'exited', exitCode: 3 });
  const second = container('second');
  const all = [first, second];
  assert.deepEqual(names({ 'is-task': ['true'] }, all), [], 'berth runs no swarm tasks');
  assert.deepEqual(names({ 'is-task': ['false'] }, all), ['first', 'second']);
  assert.deepEqual(names({ isolation: ['default'] }, all), ['first', 'second']);
  assert.deepEqual(names({ isolation: ['hyperv'] }, all), []);
  assert.deepEqual(names({ exited: ['3'] }, all), ['first']);
  assert.deepEqual(names({ before: ['second'] }, all), ['first']);
  assert.deepEqual(names({ since: ['first'] }, all), ['second']);
  assert.throws(() => names({ since: ['nobody'] }, all), /No such container: nobody/);
});
