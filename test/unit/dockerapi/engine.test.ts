// The serve Engine on an in-memory cluster: lifecycle, recovery from annotations, exec records, alias Services.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, type EngineOptions } from '../../../src/dockerapi/engine.js';
import type { DockerEvent } from '../../../src/dockerapi/event-bus.js';
import type { ContainerRecord, CreateBody } from '../../../src/dockerapi/model.js';
import { inspectContainer } from '../../../src/dockerapi/containers/container-view.js';
import { API_VERSION } from '../../../src/dockerapi/http/api-version.js';
import { FakeCluster } from './fake-cluster.js';
import { UNIT_IMAGE, unitEngine } from './unit-engine.js';
import { pack } from 'tar-stream';
import { Writable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { ArchiveError, heldTar, type HeldTar } from '../../../src/runtime/files.js';
import { DEFAULT_HELPER_IMAGE } from '../../../src/runtime/plan.js';

const IMAGE = UNIT_IMAGE;

function engineOn(cluster: FakeCluster, more: Partial<EngineOptions> = {}): Engine {
  return unitEngine(cluster, more);
}

function create(engine: Engine, name: string, body: CreateBody = {}): Promise<ContainerRecord> {
  return engine.create(name, { Image: IMAGE, Cmd: ['sh', '-c', 'exit 3'], ...body });
}

async function until(what: string, ok: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

test('create, start, wait and remove: one pod, its exit code, nothing left', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const events: string[] = [];
  engine.events.subscribe((e: DockerEvent) => events.push(`${e.Type}/${e.Action}`));
  const c = await create(engine, 'one');
  assert.equal(c.status, 'created');
  assert.equal(cluster.pods.size, 0, 'a created container is a record only');
  assert.equal(await engine.start('one'), 'started');
  assert.equal(c.status, 'running');
  assert.equal(cluster.pods.size, 1);
  const podName = c.podName!;
  const waited = engine.wait(c, 'not-running', new AbortController().signal);
  cluster.exit(podName, 3);
  assert.deepEqual(await waited, { StatusCode: 3, Error: null });
  assert.equal(c.status, 'exited');
  await engine.remove('one', false);
  assert.equal(cluster.pods.size, 0);
  assert.equal(engine.containers.size, 0);
  assert.deepEqual(events, ['container/create', 'container/start', 'container/die', 'container/destroy']);
});

test('a running container is not removed without force (409); with force its pod goes', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  await create(engine, 'busy');
  await engine.start('busy');
  await assert.rejects(engine.remove('busy', false), (err: Error & { status?: number }) => err.status === 409);
  await engine.remove('busy', true);
  assert.equal(cluster.pods.size, 0);
});

test('stop sends the stop signal through exec and waits its timeout; where it cannot be sent the pod ends at once', { timeout: 10_000 }, async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const c = await create(engine, 'stubborn', { Cmd: ['sleep', '3600'], StopSignal: 'SIGQUIT' });
  await engine.start('stubborn');
  const stopped = engine.stop('stubborn', 3600);
  await until('the stop signal sent', () => cluster.execs.length === 1);
  assert.deepEqual(cluster.execs[0]!.argv, ['kill', '-QUIT', '1']);
  cluster.exit(c.podName!, 131);
  assert.equal(await stopped, 'stopped', 'the process ended on its signal: no deadline waited');
  assert.equal(c.exitCode, 131);
  // an image without kill: the exec answers 127, and the stop does not wait the hour before ending the pod
  cluster.execAnswer = () => ({ exitCode: 127, stderr: 'kill: not found' });
  await engine.start('stubborn');
  assert.equal(await engine.stop('stubborn', 3600), 'stopped');
  assert.equal(c.status, 'exited');
  assert.equal(c.exitCode, 137, 'ended through the pod');
});

test('parallel starts of one container make one pod; the others answer already', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  await create(engine, 'par');
  const results = await Promise.all([engine.start('par'), engine.start('par'), engine.start('par')]);
  assert.deepEqual(results.sort(), ['already', 'already', 'started']);
  assert.equal(cluster.pods.size, 1);
});

test('a pod that does not run within the start timeout fails the start; an AutoRemove container is removed', async () => {
  const cluster = new FakeCluster();
  cluster.autoRun = false;
  const engine = engineOn(cluster, { startTimeoutMs: 50 });
  await create(engine, 'slow', { HostConfig: { AutoRemove: true } });
  await assert.rejects(engine.start('slow'), /did not run within 0.05 s/);
  assert.equal(cluster.pods.size, 0);
  await until('auto-remove', () => engine.containers.size === 0);
});

test('a container whose pod ended before the watch saw it run has a start event before its die; a start keeps RestartCount', async () => {
  const cluster = new FakeCluster();
  cluster.autoRun = false;
  const engine = engineOn(cluster);
  const seen: string[] = [];
  engine.events.subscribe((e: DockerEvent) => seen.push(e.Action));
  const c = await create(engine, 'quick');
  const started = engine.start('quick');
  await until('its pod', () => c.podName !== undefined && cluster.pods.has(c.podName));
  cluster.exit(c.podName!, 0);
  await started.catch(() => undefined);
  await until('exited', () => c.status === 'exited');
  assert.deepEqual(
    seen.filter((a) => ['create', 'start', 'die'].includes(a)),
    ['create', 'start', 'die'],
  );
  cluster.autoRun = true;
  await engine.start('quick');
  assert.equal(c.restartCount, 0, 'dockerd counts only its restart policy');

  // a process that never ran (StartError, the epoch as startedAt): no start event, only the failure
  cluster.autoRun = false;
  const never = await create(engine, 'never');
  const failing = engine.start('never');
  await until('its pod', () => never.podName !== undefined && cluster.pods.has(never.podName));
  const pod = cluster.pod(never.podName!);
  pod.status = {
    phase: 'Failed',
    containerStatuses: [
      {
        name: 'main',
        image: '',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode: 128, reason: 'StartError', message: 'exec: "nope": not found', startedAt: new Date(0), finishedAt: new Date() } },
      },
    ],
  };
  const before = seen.length;
  cluster.notify('MODIFIED', pod);
  await assert.rejects(failing, /nope/);
  assert.deepEqual(
    seen.slice(before).filter((a) => ['start', 'die'].includes(a)),
    ['die'],
  );
});

test('a berth restarted with the same instance takes the containers over from their pod annotations', async () => {
  const cluster = new FakeCluster();
  const first = engineOn(cluster);
  first.networks.create({ Name: 'net1', Labels: { team: 'a' } });
  const c = await create(first, 'db', { NetworkingConfig: { EndpointsConfig: { net1: { Aliases: ['database'] } } }, Labels: { app: 'x' } });
  await first.start('db');
  await first.volumes.ensure('data', { team: 'a' });
  const second = engineOn(cluster);
  assert.equal(await second.recover(), 1);
  const taken = second.container('db');
  assert.equal(taken.id, c.id);
  assert.equal(taken.status, 'running');
  assert.equal(taken.podName, c.podName);
  assert.deepEqual(taken.body.Labels, { app: 'x' });
  const net = second.networks.find('net1');
  assert.deepEqual(net.labels, { team: 'a' });
  assert.deepEqual(taken.networks.get(net.id), ['database']);
  assert.ok(second.volumes.has('data'), 'the volume is known again from its claim');
  assert.deepEqual(second.volumes.get('data')?.labels, { team: 'a' }, 'with its labels');
  cluster.exit(c.podName!, 0);
  await until('exit seen by the new berth', () => taken.status === 'exited');
});

test('a host-network container taken over by a berth without --allow-privileged is removed, its record gone', async () => {
  const cluster = new FakeCluster();
  const first = engineOn(cluster, { allowPrivileged: true });
  const c = await create(first, 'hostnet', { Cmd: ['sleep', '60'], HostConfig: { NetworkMode: 'host' } });
  await first.start('hostnet');
  assert.equal(cluster.pod(c.podName!).spec?.hostNetwork, true);
  const second = engineOn(cluster);
  assert.equal(await second.recover(), 1);
  await second.remove('hostnet', true);
  assert.equal(second.containers.size, 0, 'the record is gone');
  assert.equal(cluster.pods.size, 0, 'its pod is gone');
});

test('a container the policy of the berth taking it over refuses stays to inspect and remove, and its start says which flag it needs', async () => {
  const cluster = new FakeCluster();
  const first = engineOn(cluster, { allowPrivileged: true });
  const c = await create(first, 'isolated', { Cmd: ['sleep', '60'], HostConfig: { NetworkMode: 'none', CapAdd: ['NET_ADMIN'] } });
  await first.start('isolated');
  cluster.exit(c.podName!, 0);
  const second = engineOn(cluster);
  assert.equal(await second.recover(), 1);
  const taken = second.container('isolated');
  await until('exit seen by the new berth', () => taken.status === 'exited');
  assert.equal((inspectContainer(taken, second.networks.records, second.mountsOf(taken), API_VERSION) as { Id: string }).Id, c.id);
  const pods = [...cluster.pods.keys()];
  await assert.rejects(
    second.start('isolated'),
    (err: Error & { status?: number }) =>
      err.status === 403 && /^cannot start container isolated: this berth serve's policy refuses it: CapAdd=NET_ADMIN: .*--allow-privileged/.test(err.message),
  );
  assert.deepEqual([...cluster.pods.keys()], pods, 'no pod made');
  assert.equal(cluster.policies.size, 1);
  await second.remove('isolated', false);
  assert.equal(second.containers.size, 0);
  assert.equal(cluster.policies.size, 0, 'its deny-all policy went with it');
});

test('start, restart and removal lay the pod from the plan made at create and judge nothing again', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const c = await create(engine, 'planned', {
    Cmd: ['sleep', '60'],
    Labels: { 'berth.dev/name-prefix': 'ci' },
    HostConfig: { NetworkMode: 'none', CapDrop: ['ALL'], Tmpfs: { '/t': '' } },
  });
  const plan = c.plan;
  // What each judge would refuse, had it read the config again: the HostConfig, the mounts, the settings.
  Object.assign(c.body.HostConfig!, { CapAdd: ['SYS_ADMIN'], Binds: ['/etc:/host-etc'] });
  c.body.Labels!['berth.dev/name-prefix'] = 'NOT A PREFIX';
  await engine.start('planned');
  await engine.restart('planned', 0);
  const pod = cluster.pod(c.podName!);
  assert.match(pod.metadata!.name!, /^ci-planned-[0-9a-f]{12}-2$/);
  assert.equal(pod.spec!.containers[0].securityContext?.capabilities?.add, undefined, 'CapDrop ALL as planned, no SYS_ADMIN');
  assert.deepEqual(
    pod.spec!.volumes?.map((v) => v.emptyDir),
    [{ medium: 'Memory' }],
  );
  assert.equal(c.plan, plan, 'the record keeps the one plan');
  await engine.remove('planned', true);
  assert.equal(engine.containers.size, 0);
  assert.equal(cluster.policies.size, 0);
});

test('a rename and network changes after the start reach the pod: a berth taking the container over sees them', async () => {
  const cluster = new FakeCluster();
  const first = engineOn(cluster);
  first.networks.create({ Name: 'front' });
  first.networks.create({ Name: 'back' });
  const c = await create(first, 'web', { Cmd: ['sleep', '60'], NetworkingConfig: { EndpointsConfig: { back: {} } } });
  await first.start('web');
  await first.rename('web', 'web2');
  await first.connect('front', 'web2', ['www']);
  await first.disconnect('back', 'web2');
  const second = engineOn(cluster);
  assert.equal(await second.recover(), 1);
  const taken = second.container(c.id);
  assert.equal(taken.name, 'web2');
  const names = [...taken.networks.keys()].map((id) => second.networks.get(id)?.name);
  assert.deepEqual(names.sort(), ['bridge', 'front']);
  assert.deepEqual(taken.networks.get(second.networks.find('front').id), ['www']);
});

test('recovery passes by pods of other instances and pods kept for debugging, and deletes stray peek pods', async () => {
  const cluster = new FakeCluster();
  const other = engineOn(cluster, { owner: 'other' });
  await create(other, 'theirs');
  await other.start('theirs');
  const mine = engineOn(cluster);
  await create(mine, 'kept');
  await mine.start('kept');
  const kept = mine.container('kept');
  await cluster.annotatePod(kept.podName!, { 'berth.dev/kept-failed-until': '2099-01-01T00:00:00Z' });
  await cluster.createPod({ metadata: { name: 'peek-1', labels: { 'berth.dev/owner': 'unit', 'berth.dev/peek-of': 'abc' } } });
  const again = engineOn(cluster);
  assert.equal(await again.recover(), 0);
  assert.ok(!cluster.pods.has('peek-1'));
  assert.ok(cluster.pods.has(kept.podName!), 'a kept pod stays');
});

test('exec records: an ended exec is forgotten after the keep, and with its container', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const c = await create(engine, 'ex');
  await engine.start('ex');
  const spec = { containerId: c.id, cmd: ['true'], env: [], workingDir: '', user: '', tty: false, attachStdin: false, attachStdout: true, attachStderr: false };
  const rec = engine.execs.create(spec);
  const other = engine.execs.create(spec);
  engine.execs.started(rec);
  engine.execs.ended(rec, 0);
  assert.equal(engine.execs.get(rec.id)?.exitCode, 0);
  await engine.remove('ex', true);
  assert.equal(engine.execs.get(rec.id), undefined);
  assert.equal(engine.execs.get(other.id), undefined);
});

test('exec records: pruned a while after they ended, never-started ones later, and bounded in count', async () => {
  const { ExecStore } = await import('../../../src/dockerapi/containers/exec-records.js');
  let now = 0;
  const store = new ExecStore({ keepEndedMs: 1000, keepUnstartedMs: 5000, max: 3, now: () => now });
  const spec = { containerId: 'c', cmd: ['true'], env: [], workingDir: '', user: '', tty: false, attachStdin: false, attachStdout: true, attachStderr: false };
  const ended = store.create(spec);
  store.started(ended);
  store.ended(ended, 1);
  const running = store.create(spec);
  store.started(running);
  const idle = store.create(spec);
  now = 999;
  assert.equal(store.get(ended.id)?.exitCode, 1, 'kept until the keep has passed');
  now = 1000;
  assert.equal(store.get(ended.id), undefined);
  assert.ok(store.get(running.id), 'a running exec is never pruned');
  now = 5000;
  assert.equal(store.get(idle.id), undefined, 'never started: forgotten after keepUnstartedMs');
  const many = [store.create(spec), store.create(spec), store.create(spec), store.create(spec)];
  assert.equal(store.size, 3);
  assert.ok(store.get(running.id), 'the bound drops idle records, not running ones');
  assert.equal(store.get(many[0].id), undefined, 'the oldest idle record went first');
  assert.ok(store.get(many[3].id));
});

test('network aliases: a Service per alias selecting the container, deleted with it; later members see earlier ones', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const net = engine.networks.create({ Name: 'app' });
  const db = await create(engine, 'db', { NetworkingConfig: { EndpointsConfig: { app: { Aliases: ['postgres'] } } } });
  await engine.start('db');
  const name = engine.networks.serviceName(net.id, 'postgres');
  assert.match(name, /^postgres-[0-9a-f]{8}$/);
  const svc = cluster.services.get(name);
  assert.ok(svc, 'the alias Service exists');
  assert.equal(svc.spec?.clusterIP, 'None');
  assert.deepEqual(svc.spec?.selector, { 'berth.dev/container': db.id.slice(0, 12), 'berth.dev/owner': 'unit' });
  await create(engine, 'web', { NetworkingConfig: { EndpointsConfig: { app: { Aliases: [] } } } });
  await engine.start('web');
  const web = cluster.pod(engine.container('web').podName!);
  assert.deepEqual(web.spec?.hostAliases, [{ ip: db.podIP, hostnames: ['postgres', 'db'] }]);
  const webIp = engine.container('web').podIP!;
  await until('web announced to db', () => cluster.execs.some((e) => e.pod === db.podName && e.argv.at(-1) === `${webIp}\tweb`));
  await assert.rejects(async () => engine.networks.remove('app'), /has active endpoints/);
  await engine.remove('db', true);
  assert.equal(cluster.services.has(name), false);
});

test('an alias that is not a DNS label is refused at create', async () => {
  const engine = engineOn(new FakeCluster());
  engine.networks.create({ Name: 'n' });
  await assert.rejects(
    async () => create(engine, 'bad', { NetworkingConfig: { EndpointsConfig: { n: { Aliases: ['Not_A_Label'] } } } }),
    /must be a DNS label/,
  );
});

test('an alias in capitals (testcontainers-java gives each container one: tc-DoFSs5TP) is taken, and the cluster gets its lower-case form', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const net = engine.networks.create({ Name: 'mixed' });
  const db = await create(engine, 'DB', { NetworkingConfig: { EndpointsConfig: { mixed: { Aliases: ['tc-DoFSs5TP'] } } } });
  await engine.start('DB');
  const name = engine.networks.serviceName(net.id, 'tc-DoFSs5TP');
  assert.match(name, /^tc-dofss5tp-[0-9a-f]{8}$/);
  assert.ok(cluster.services.get(name), 'the alias Service exists');
  await create(engine, 'web', { NetworkingConfig: { EndpointsConfig: { mixed: { Aliases: [] } } } });
  await engine.start('web');
  assert.deepEqual(cluster.pod(engine.container('web').podName!).spec?.hostAliases, [{ ip: db.podIP, hostnames: ['tc-dofss5tp', 'db'] }]);
  await engine.remove('DB', true);
  assert.equal(cluster.services.has(name), false);
});

test('NetworkMode none: a deny-all policy selecting the container exists before its pod, and goes with it', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  let policyBeforePod = false;
  const createPod = cluster.createPod.bind(cluster);
  cluster.createPod = async (pod) => {
    policyBeforePod = cluster.policies.size === 1;
    return createPod(pod);
  };
  const c = await create(engine, 'isolated', { HostConfig: { NetworkMode: 'none' } });
  await engine.start('isolated');
  assert.ok(policyBeforePod);
  const policy = [...cluster.policies.values()][0];
  assert.deepEqual(policy.spec, {
    podSelector: { matchLabels: { 'berth.dev/container': c.id.slice(0, 12), 'berth.dev/owner': 'unit' } },
    policyTypes: ['Ingress', 'Egress'],
  });
  const inits = cluster.pod(c.podName!).spec?.initContainers ?? [];
  assert.deepEqual(
    inits.map((x) => [x.name, x.image]),
    [['berth-isolation', DEFAULT_HELPER_IMAGE]],
    'the gate holds the container until the policy holds',
  );
  await engine.remove('isolated', true);
  assert.equal(cluster.policies.size, 0);
});

test('Dns settings become the pod dnsConfig; RestartPolicy is accepted with a warning', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const c = await create(engine, 'dns', {
    HostConfig: { Dns: ['10.0.0.2'], DnsSearch: ['corp.example'], DnsOptions: ['ndots:2'], RestartPolicy: { Name: 'always' } },
  });
  assert.equal(c.warnings?.length, 1);
  assert.match(c.warnings![0], /RestartPolicy=always is accepted, but berth does not restart containers/);
  await engine.start('dns');
  const spec = cluster.pod(c.podName!).spec!;
  assert.equal(spec.dnsPolicy, 'None');
  assert.deepEqual(spec.dnsConfig, { nameservers: ['10.0.0.2'], searches: ['corp.example'], options: [{ name: 'ndots', value: '2' }] });
});

test('names given to unnamed containers never contain undefined (ids past 0x80000000 too)', async () => {
  const { generatedName } = await import('../../../src/dockerapi/containers/names.js');
  for (const prefix of ['00000000', '7fffffff', '80000000', 'ffffffff', 'deadbeef']) {
    assert.match(generatedName(`${prefix}${'0'.repeat(56)}`), /^[a-z]+_[a-z]+_[0-9a-f]{6}$/, prefix);
  }
});

test("berth's Ryuk container carries the image's label org.testcontainers.ryuk=true", async () => {
  const engine = engineOn(new FakeCluster());
  engine.images.pull('testcontainers/ryuk:0.14.0');
  const c = await engine.create(null, { Image: 'testcontainers/ryuk:0.14.0', Labels: { 'org.testcontainers.session-id': 's1' } });
  assert.deepEqual(c.body.Labels, { 'org.testcontainers.ryuk': 'true', 'org.testcontainers.session-id': 's1' });
});

async function tarOf(files: Array<{ name: string; content: string }>): Promise<Buffer> {
  const p = pack();
  for (const f of files) p.entry({ name: f.name, mode: 0o644 }, f.content);
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of p) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

test('files copied before start into a container whose command is unknown come through the helper init container', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster, { helperImage: 'localhost/berth/busybox:1' });
  const c = await create(engine, 'fed', { Cmd: null });
  await engine.putArchive(
    'fed',
    '/etc/app',
    Promise.resolve(
      heldTar(
        await tarOf([
          { name: 'conf.txt', content: 'x=1\n' },
          { name: 'sub/deep.txt', content: 'deep\n' },
        ]),
      ),
    ),
  );
  await engine.start('fed');
  assert.equal(c.status, 'running');
  const spec = cluster.pod(c.podName!).spec!;
  assert.deepEqual(
    spec.initContainers?.map((i) => [i.name, i.image]),
    [['berth-files', 'localhost/berth/busybox:1']],
  );
  const main = spec.containers[0];
  assert.equal(main.command, undefined, "the image's own command runs, unwrapped");
  assert.deepEqual(
    main.volumeMounts?.filter((m) => m.name === 'berth-files'),
    [
      { name: 'berth-files', mountPath: '/etc/app/conf.txt', subPath: '0/conf.txt', readOnly: false },
      { name: 'berth-files', mountPath: '/etc/app/sub/deep.txt', subPath: '0/sub/deep.txt', readOnly: false },
    ],
  );
  assert.deepEqual(
    cluster.execs.filter((e) => e.container === 'berth-files'),
    [],
    'nothing goes through exec: the receiver is fed through its attach',
  );
  assert.deepEqual(
    cluster.feeds.map((f) => f.entries.map((e) => e.name)),
    [['0', '0/conf.txt', '0/sub/deep.txt', '.berth-complete']],
  );
});

/** A container whose command is unknown, with `archives` copied into it before its start (each at `/etc/app<k>`). */
async function fedContainer(engine: Engine, name: string, archives: Buffer[], body: CreateBody = {}): Promise<ContainerRecord> {
  const c = await create(engine, name, { Cmd: null, ...body });
  for (const [k, tar] of archives.entries()) await engine.putArchive(name, `/etc/app${k}`, Promise.resolve(heldTar(tar)));
  return c;
}

test('files copied before start are delivered whole in one feed: every copy under its folder, hard links and long names moved with them, the marker last', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const long = `${'l'.repeat(60)}/${'n'.repeat(80)}.txt`;
  const linked = pack();
  linked.entry({ name: 'data.bin', mode: 0o600 }, 'payload');
  linked.entry({ name: 'again.bin', type: 'link', linkname: 'data.bin' });
  linked.entry({ name: long, mode: 0o644 }, 'long');
  linked.entry({ name: 'to-data', type: 'symlink', linkname: 'data.bin' });
  linked.finalize();
  const c = await fedContainer(engine, 'whole', [await tarOf([{ name: 'conf.txt', content: 'x=1\n' }]), await buffer(linked)]);
  await engine.start('whole');
  assert.equal(c.status, 'running');
  assert.equal(cluster.feeds.length, 1, 'one feed, one attach');
  assert.deepEqual(cluster.feeds[0]!.entries, [
    { name: '0', type: 'directory', data: '' },
    { name: '0/conf.txt', type: 'file', data: 'x=1\n' },
    { name: '1', type: 'directory', data: '' },
    { name: '1/data.bin', type: 'file', data: 'payload' },
    { name: '1/again.bin', type: 'link', linkname: '1/data.bin', data: '' },
    { name: `1/${long}`, type: 'file', data: 'long' },
    { name: '1/to-data', type: 'symlink', linkname: 'data.bin', data: '' },
    { name: '.berth-complete', type: 'file', data: '' },
  ]);
  assert.equal(cluster.feeds[0]!.received.length % 10240, 0, 'padded to a whole record');
  assert.deepEqual(
    cluster.pod(c.podName!).spec!.containers[0]!.volumeMounts?.map((m) => [m.mountPath, m.subPath]),
    [
      ['/etc/app0/conf.txt', '0/conf.txt'],
      ['/etc/app1/data.bin', '1/data.bin'],
      [`/etc/app1/${long}`, `1/${long}`],
    ],
  );
  // a restart is a new pod, fed the same files again
  cluster.exit(c.podName!, 0);
  await until('exited', () => c.status === 'exited');
  await engine.start('whole');
  assert.equal(cluster.feeds.length, 2);
  assert.deepEqual(cluster.feeds[1]!.entries, cluster.feeds[0]!.entries);
});

test('a feed cut midway fails the start with its cause and leaves no pod; the files stay for the next start', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const c = await fedContainer(engine, 'cut', [await tarOf([{ name: 'conf.txt', content: 'x=1\n' }]), await tarOf([{ name: 'b.txt', content: 'b' }])]);
  cluster.feedCutAfter = 3 * 512; // the first folder and its file: a stream cut between two entries, which tar alone takes for a whole one
  await assert.rejects(
    engine.start('cut'),
    (err: Error & { status?: number }) =>
      err.status === 500 &&
      /^failed to start container cut: the files copied into it before start \(docker cp\) did not all arrive in its pod \S+ \(tar exit 1\): berth: the file copy stream was cut before its end \(start it again/.test(
        err.message,
      ),
  );
  assert.deepEqual(
    cluster.feeds[0]!.entries.map((e) => e.name),
    ['0', '0/conf.txt'],
  );
  assert.equal(cluster.pods.size, 0, 'no pod left running');
  assert.equal(c.status, 'created');
  assert.equal(c.podName, undefined);
  assert.equal(c.copiedArchives.length, 2, 'kept for the next start');
  cluster.feedCutAfter = undefined;
  await engine.start('cut');
  assert.equal(c.status, 'running');
  assert.equal(cluster.feeds[1]!.entries.at(-1)?.name, '.berth-complete');
});

test('a receiver that reports failure fails the start with its words; an AutoRemove container goes', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  await fedContainer(engine, 'full', [await tarOf([{ name: 'conf.txt', content: 'x=1\n' }])], { HostConfig: { AutoRemove: true } });
  // as the receiver's script answers a tar that failed: tar's words, then its own
  cluster.feedAnswer = () => ({
    exitCode: 1,
    stderr: "tar: can't create '0/conf.txt': No space left on device\nberth: the file copy stream was cut before its end",
  });
  await assert.rejects(
    engine.start('full'),
    (err: Error & { status?: number }) =>
      err.status === 500 && /did not all arrive in its pod \S+ \(tar exit 1\): tar: can't create '0\/conf.txt': No space left on device\n/.test(err.message),
  );
  assert.equal(cluster.pods.size, 0);
  await until('auto-remove', () => engine.containers.size === 0);
});

test('a container without files copied before start, or whose command berth knows, starts without a feed', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const plain = await create(engine, 'plain', { Cmd: null });
  await engine.start('plain');
  assert.equal(plain.status, 'running');
  assert.equal(cluster.pod(plain.podName!).spec!.initContainers, undefined);
  const known = await create(engine, 'known', { Cmd: ['sleep', '60'] });
  await engine.putArchive('known', '/etc/app', Promise.resolve(heldTar(await tarOf([{ name: 'conf.txt', content: 'x=1\n' }]))));
  await engine.start('known');
  assert.equal(known.status, 'running');
  assert.equal(cluster.pod(known.podName!).spec!.initContainers, undefined);
  assert.ok(
    cluster.execs.some((e) => e.pod === known.podName && e.container === 'main' && e.argv.includes('berth-put')),
    'unpacked into the waiting main container',
  );
  assert.equal(cluster.feeds.length, 0);
});

test('a stat or tar out whose stream is lost runs again; one cut after its first bytes goes on where it stopped, unless the file changed', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const c = await create(engine, 'rd', { Cmd: ['sleep', '60'] });
  await engine.start('rd');
  const stat = 'berth-stat 5 81a4 1700000000\nberth-link \n';
  let losses = 2;
  cluster.execAnswer = () => (losses-- > 0 ? { exitCode: 0, lost: true } : { exitCode: 0, stdout: stat });
  assert.equal((await engine.files.stat(c, '/f')).size, 5, 'the third try answers');
  losses = 1;
  cluster.execAnswer = () => (losses-- > 0 ? { exitCode: 0, lost: true } : { exitCode: 0, stderr: stat, stdout: 'tar' });
  const chunks: Buffer[] = [];
  const sink = (): Writable => new Writable({ write: (b: Buffer, _e, cb) => (chunks.push(b), cb()) });
  await engine.files.read(c, '/f', sink);
  assert.equal(Buffer.concat(chunks).toString(), 'tar', 'the second try answers');
  // A loss after the first bytes went out: the next run skips them (checking they are the same) and goes on.
  let cut = true;
  cluster.execAnswer = () => (cut ? ((cut = false), { exitCode: 0, stderr: stat, stdout: 'ta', lost: true }) : { exitCode: 0, stderr: stat, stdout: 'tar' });
  chunks.length = 0;
  let opens = 0;
  await engine.files.read(c, '/f', () => (opens++, sink()));
  assert.equal(Buffer.concat(chunks).toString(), 'tar', 'each byte once');
  assert.equal(opens, 1, 'the answer is opened once');
  // A file that changed between the runs: the read fails, and nothing of the second version goes out.
  cut = true;
  cluster.execAnswer = () => (cut ? ((cut = false), { exitCode: 0, stderr: stat, stdout: 'ta', lost: true }) : { exitCode: 0, stderr: stat, stdout: 'xyz' });
  chunks.length = 0;
  await assert.rejects(engine.files.read(c, '/f', sink), /\/f in container rd changed while it was read/);
  assert.equal(Buffer.concat(chunks).toString(), 'ta');
});

test('events are kept for GET /events?since= to replay, oldest first', async () => {
  const { EventBus } = await import('../../../src/dockerapi/event-bus.js');
  const bus = new EventBus();
  const second = 1_000_000_000n;
  const now = BigInt(Date.now()) * 1_000_000n;
  bus.emit('image', 'pull', { id: 'busybox:latest', name: 'busybox' });
  bus.emit('image', 'pull', { id: 'busybox:latest', name: 'busybox' });
  assert.deepEqual(
    bus.history(now - second).map((e) => e.Action),
    ['pull', 'pull'],
  );
  assert.deepEqual(bus.history(now + 10n * second), []);
  assert.deepEqual(bus.history(now - second, now - second), []);
  assert.deepEqual(bus.history(0n, now + second).length, 2, 'up to until alone');
  // to the nanosecond, both ends included
  const msOf = (e: DockerEvent): number => Math.round(e.timeNano / 1e6);
  const at = BigInt(msOf(bus.history(0n)[0])) * 1_000_000n;
  assert.ok(bus.history(at, at).length >= 1);
  assert.equal(bus.history(at + 1n).length, bus.history(0n).filter((e) => msOf(e) > Number(at / 1_000_000n)).length);
});

test('a copy into a running container starts while its archive arrives, and unpacks only after the go line', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const c = await create(engine, 'cp', { Cmd: ['sleep', '60'] });
  await engine.start('cp');
  let arrive!: (tar: HeldTar) => void;
  const put = engine.putArchive('cp', '/dst', new Promise<HeldTar>((resolve) => (arrive = resolve)));
  await until('the exec started before the archive was whole', () => cluster.execs.some((e) => e.argv.includes('berth-put')));
  const call = cluster.execs.find((e) => e.argv.includes('berth-put'))!;
  assert.equal(call.argv.at(-1), '/dst');
  const tar = await tarOf([{ name: 'a.txt', content: 'A' }]);
  arrive(heldTar(tar));
  await put;
  const stdin = await call.stdin!;
  assert.equal(stdin.subarray(0, 3).toString(), 'go\n');
  assert.ok(stdin.subarray(3, 3 + tar.length).equals(tar), 'the archive follows the go line whole');
  assert.equal((stdin.length - 3) % 10240, 0, 'padded to a whole tar record');
  assert.equal(c.copiedArchives.length, 1, 'kept for a restart');
});

test('a refused archive ends the waiting copy with a stop line: nothing unpacked, nothing kept', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const c = await create(engine, 'cpbad', { Cmd: ['sleep', '60'] });
  await engine.start('cpbad');
  const refused = new ArchiveError('archive entry "../x" points outside the destination');
  await assert.rejects(engine.putArchive('cpbad', '/dst', Promise.reject(refused)), (err) => err === refused);
  const call = cluster.execs.find((e) => e.argv.includes('berth-put'))!;
  assert.equal((await call.stdin!).toString(), 'stop\n');
  assert.deepEqual(c.copiedArchives, []);
});

test('a container with files copied in, taken over by another berth, is not restarted without them', async () => {
  const cluster = new FakeCluster();
  const first = engineOn(cluster);
  const c = await create(first, 'cfg', { Cmd: ['sleep', '60'] });
  await first.start('cfg');
  await first.putArchive('cfg', '/etc/app', Promise.resolve(heldTar(await tarOf([{ name: 'app.conf', content: 'x=1\n' }]))));
  const saved = JSON.parse(cluster.pod(c.podName!).metadata!.annotations!['berth.dev/docker-container']!) as { archives?: number };
  assert.equal(saved.archives, 1, 'the pod says a copy went in');
  const second = engineOn(cluster);
  assert.equal(await second.recover(), 1);
  const taken = second.container('cfg');
  cluster.exit(c.podName!, 0);
  await until('exit seen by the new berth', () => taken.status === 'exited');
  const pods = cluster.pods.size;
  await assert.rejects(second.start('cfg'), (err: Error & { status?: number }) => err.status === 409 && /1 archive\(s\) copied into it/.test(err.message));
  assert.equal(cluster.pods.size, pods, 'no pod made');
  assert.equal(taken.status, 'exited');
});

test('-v /path: an anonymous volume per path no bind, mount or tmpfs covers; its claim is made at create, removed with rm -v', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  const c = await create(engine, 'anon', {
    Cmd: ['sleep', '60'],
    Volumes: { '/a': {}, '/b/': {}, '/t': {} },
    HostConfig: { Binds: ['named:/b'], Tmpfs: { '/t': '' } },
  });
  assert.deepEqual(
    c.anonymousVolumes?.map((a) => a.target),
    ['/a'],
  );
  assert.match(c.anonymousVolumes![0].name, /^[0-9a-f]{64}$/);
  await assert.rejects(async () => create(engine, 'rel', { Volumes: { data: {} } }), /absolute path/);
  const anon = engine.volumes.get(c.anonymousVolumes![0].name)!;
  assert.ok(anon && engine.volumes.has('named'), 'both volumes exist right after create, as with dockerd');
  await engine.start('anon');
  assert.ok(cluster.claims.has(anon.claim), 'its claim exists');
  assert.deepEqual(anon.labels, { 'com.docker.volume.anonymous': '' });
  await engine.remove('anon', true, true);
  assert.ok(!cluster.claims.has(anon.claim), 'rm -v deleted it');
  assert.ok(engine.volumes.has('named'), 'a named volume stays');
});

test('a create whose volumes cannot all be made fails, removes the ones it made and keeps no container', async () => {
  const cluster = new FakeCluster();
  const engine = engineOn(cluster);
  await create(engine, 'first', { HostConfig: { Binds: ['kept:/k'] } });
  const createClaim = cluster.createClaim.bind(cluster);
  cluster.createClaim = async (pvc) => {
    if (pvc.metadata?.annotations?.['berth.dev/volume'] === 'refused') throw new Error('persistentvolumeclaims is forbidden');
    return createClaim(pvc);
  };
  await assert.rejects(
    async () => create(engine, 'second', { HostConfig: { Binds: ['kept:/k', 'fresh:/f', 'refused:/r'] } }),
    /failed to create container second: could not make its volumes: persistentvolumeclaims is forbidden/,
  );
  assert.deepEqual(
    [...engine.volumes.values()].map((v) => v.name),
    ['kept'],
    'fresh was removed again, kept stays',
  );
  assert.equal(cluster.claims.size, 1);
  assert.deepEqual(
    [...engine.containers.values()].map((c) => c.name),
    ['first'],
  );
});
