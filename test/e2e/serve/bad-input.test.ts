// Bad input gets a clear 4xx with Docker's {"message"} body, creates nothing, and berth serve keeps serving;
// two berth serve instances in one namespace keep their network aliases apart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUSYBOX, freshNamespace, kubectlOk } from '../harness/cluster.js';
import { type DockerEngine, dropNamespace, startBerth, stopAndCheckLeftovers } from './serve-env.js';
import { tarOf } from '../../util/tar.js';

const message = (body: string): string => (JSON.parse(body) as { message: string }).message;

describe('berth serve: bad input', () => {
  let engine: DockerEngine;
  let namespace = '';
  const instance = `bad${process.pid}`;
  let running = '';

  before(async () => {
    namespace = await freshNamespace('serve-bad');
    engine = await startBerth(namespace, instance);
    assert.equal((await engine.request('POST', `/images/create?fromImage=${encodeURIComponent(BUSYBOX)}`)).status, 200);
    const created = await engine.request('POST', '/containers/create?name=target', JSON.stringify({ Image: BUSYBOX, Cmd: ['sleep', '600'] }));
    assert.equal(created.status, 201, created.body);
    running = (JSON.parse(created.body) as { Id: string }).Id;
    assert.equal((await engine.request('POST', `/containers/${running}/start`)).status, 204);
  });

  after(() => stopAndCheckLeftovers(engine, namespace, instance));

  const count = async (): Promise<number> => (JSON.parse((await engine.request('GET', '/containers/json?all=1')).body) as unknown[]).length;

  test('malformed JSON, oversize bodies and invalid names are 4xx and create nothing', async () => {
    const before = await count();
    const bad = await engine.request('POST', '/containers/create', '{"Image": "x",');
    assert.equal(bad.status, 400);
    assert.match(message(bad.body), /invalid JSON/);
    const big = await engine.request('POST', '/containers/create', JSON.stringify({ Image: BUSYBOX, Env: [`A=${'x'.repeat(3 * 1024 * 1024)}`] }));
    assert.equal(big.status, 413);
    const name = await engine.request('POST', '/containers/create?name=bad%2Fname', JSON.stringify({ Image: BUSYBOX }));
    assert.equal(name.status, 400);
    assert.match(message(name.body), /Invalid container name/);
    const clash = await engine.request('POST', '/containers/create?name=target', JSON.stringify({ Image: BUSYBOX }));
    assert.equal(clash.status, 409);
    assert.match(message(clash.body), /The container name "\/target" is already in use/);
    const noImage = await engine.request('POST', '/containers/create', JSON.stringify({ Image: 'never/pulled:1' }));
    assert.equal(noImage.status, 404);
    assert.equal(message(noImage.body), 'No such image: never/pulled:1');
    const hostBind = await engine.request('POST', '/containers/create', JSON.stringify({ Image: BUSYBOX, HostConfig: { Binds: ['/etc:/host-etc'] } }));
    assert.equal(hostBind.status, 400);
    assert.match(message(hostBind.body), /host path \/etc is not supported/);
    const filters = await engine.request('GET', '/containers/json?filters=%7Bnope');
    assert.equal(filters.status, 400);
    assert.equal(await count(), before);
  });

  test("unknown ids are 404 with Docker's texts", async () => {
    const c = await engine.request('GET', '/containers/doesnotexist/json');
    assert.equal(c.status, 404);
    assert.equal(message(c.body), 'No such container: doesnotexist');
    const e = await engine.request('GET', '/exec/nope/json');
    assert.equal(e.status, 404);
    assert.equal(message(e.body), 'No such exec instance: nope');
    const i = await engine.request('GET', '/images/never/pulled:2/json');
    assert.equal(i.status, 404);
    assert.equal(message(i.body), 'No such image: never/pulled:2');
    assert.equal((await engine.request('DELETE', '/containers/doesnotexist')).status, 404);
  });

  test('tar archives with ../ entries or escaping links are refused before anything is written', async () => {
    const dotdot = await tarOf([
      { name: 'ok.txt', content: 'fine' },
      { name: '../../escaped.txt', content: 'bad' },
    ]);
    const r1 = await engine.request('PUT', `/containers/${running}/archive?path=/tmp`, dotdot, { 'Content-Type': 'application/x-tar' });
    assert.equal(r1.status, 400);
    assert.match(message(r1.body), /outside the destination/);
    const link = await tarOf([{ name: 'l', type: 'symlink', linkname: '../../../etc' }]);
    const r2 = await engine.request('PUT', `/containers/${running}/archive?path=/tmp`, link, { 'Content-Type': 'application/x-tar' });
    assert.equal(r2.status, 400);
    const through = await tarOf([
      { name: 'l', type: 'symlink', linkname: '/etc' },
      { name: 'l/passwd', content: 'pwned' },
    ]);
    const r3 = await engine.request('PUT', `/containers/${running}/archive?path=/tmp`, through, { 'Content-Type': 'application/x-tar' });
    assert.equal(r3.status, 400);
    assert.match(message(r3.body), /through the link/);
    const garbage = await engine.request('PUT', `/containers/${running}/archive?path=/tmp`, Buffer.from('not a tar at all'.repeat(64)), {
      'Content-Type': 'application/x-tar',
    });
    assert.equal(garbage.status, 400);
    // nothing half-written: the good entry of the first archive is not there either
    const check = await engine.request('HEAD', `/containers/${running}/archive?path=/tmp/ok.txt`);
    assert.equal(check.status, 404);
    // the copy's process starts while the archive arrives: refused, it does not even make the destination
    const r4 = await engine.request('PUT', `/containers/${running}/archive?path=/tmp/made-by-copy`, dotdot, { 'Content-Type': 'application/x-tar' });
    assert.equal(r4.status, 400);
    assert.equal((await engine.request('HEAD', `/containers/${running}/archive?path=/tmp/made-by-copy`)).status, 404);
    const good = await engine.request('PUT', `/containers/${running}/archive?path=/tmp`, await tarOf([{ name: 'ok.txt', content: 'fine' }]), {
      'Content-Type': 'application/x-tar',
    });
    assert.equal(good.status, 200);
    assert.equal(good.body, '', 'PUT archive answers with an empty body');
    const stat = await engine.request('HEAD', `/containers/${running}/archive?path=/tmp/ok.txt`);
    assert.equal(stat.status, 200);
    const header = JSON.parse(Buffer.from(String(stat.headers['x-docker-container-path-stat']), 'base64').toString('utf8')) as { name: string; size: number };
    assert.deepEqual([header.name, header.size], ['ok.txt', 4]);
  });

  test('what a pod cannot do is refused through the docker CLI saying why; system prune has no build cache to prune', async () => {
    for (const [args, why] of [
      [['system', 'df'], /not implemented by berth serve: containers are Kubernetes pods, and the disk they use is the nodes'/],
      [['image', 'history', BUSYBOX], /not implemented by berth serve: berth keeps no image layers/],
      [['stats', '--no-stream', 'target'], /not implemented by berth serve: containers are Kubernetes pods \(kubectl top pod/],
      [['login', '-u', 'someone', '--password-stdin', 'registry.invalid'], /imagePullSecret/],
    ] as const) {
      const r = await engine.docker([...args], { input: 'secret\n' });
      assert.notEqual(r.code, 0, `docker ${args.join(' ')} exited 0`);
      assert.match(r.stderr, why, `docker ${args.join(' ')}`);
    }
    const prune = await engine.docker(['system', 'prune', '-f']);
    assert.equal(prune.code, 0, prune.stderr);
    assert.equal((await engine.request('GET', `/containers/${running}/json`)).status, 200, 'a running container stays');
  });

  test('mounts dockerd refuses at create are refused at create: run --rm of them ends at once and leaves nothing', async () => {
    const before = await count();
    for (const [args, why] of [
      [['-v', 'bad name:/d'], /"bad name" includes invalid characters for a local volume name/],
      [['-v', 'v1:/x:zz'], /invalid mode: zz/],
      [['-v', 'v1:/x', '-v', 'v2:/x'], /Duplicate mount point: \/x/],
      [['--tmpfs', '/t:bogusopt=1'], /invalid tmpfs option/],
    ] as const) {
      const r = await engine.docker(['run', '--rm', ...args, BUSYBOX, 'true'], { timeoutMs: 60_000 });
      assert.equal(r.code, 125, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, why);
    }
    assert.equal(await count(), before);
    assert.equal(await kubectlOk(['get', 'pvc', '-n', namespace, '-o', 'name']), '', 'no claim was made');
  });

  test("a command that cannot start is docker run's 127 or 126 with the runtime's words, never exit 0", async () => {
    const missing = await engine.docker(['run', '--rm', BUSYBOX, '/no/such/bin'], { timeoutMs: 60_000 });
    assert.equal(missing.code, 127, missing.stderr);
    assert.match(missing.stderr, /no such file or directory/);
    const notExecutable = await engine.docker(['run', '--rm', BUSYBOX, '/etc/passwd'], { timeoutMs: 60_000 });
    assert.equal(notExecutable.code, 126, notExecutable.stderr);
  });

  test('what a create asks for is applied: tmpfs ro, an unset -e VAR, --stop-signal and --stop-timeout', async () => {
    const ro = await engine.docker(['run', '--rm', '--tmpfs', '/t:ro', BUSYBOX, 'touch', '/t/x'], { timeoutMs: 60_000 });
    assert.notEqual(ro.code, 0, 'a write into a read-only tmpfs succeeded');
    assert.match(ro.stderr, /Read-only file system/);
    const env = await engine.docker(['run', '--rm', '-e', 'BERTH_UNSET_IN_CLIENT', BUSYBOX, 'sh', '-c', 'echo ${BERTH_UNSET_IN_CLIENT-unset}'], {
      timeoutMs: 60_000,
    });
    assert.equal(env.stdout, 'unset\n', env.stderr);
    const id = (
      await engine.dockerOk([
        'run',
        '-d',
        '--stop-signal',
        'USR1',
        '--stop-timeout',
        '3',
        BUSYBOX,
        'sh',
        '-c',
        'trap "echo got usr1; exit 7" USR1; echo ready; while :; do sleep 0.1; done',
      ])
    ).trim();
    assert.equal((await engine.dockerOk(['inspect', '-f', '{{.Config.StopSignal}} {{.Config.StopTimeout}}', id])).trim(), 'USR1 3');
    for (let i = 0; !(await engine.dockerOk(['logs', id])).includes('ready'); i++) assert.ok(i < 300, 'the container never got ready');
    await engine.dockerOk(['stop', id]);
    assert.equal((await engine.dockerOk(['inspect', '-f', '{{.State.ExitCode}}', id])).trim(), '7');
    assert.match(await engine.dockerOk(['logs', id]), /got usr1/);
    await engine.dockerOk(['rm', id]);
  });

  test('the server keeps serving after all of that', async () => {
    const ping = await engine.request('GET', '/_ping');
    assert.equal(ping.status, 200);
    assert.equal(ping.body, 'OK');
    assert.equal(ping.headers['api-version'], '1.52');
    // dockerd 29's range: 1.44 to 1.52 (DOCKER_MIN_API_VERSION, here --min-api-version, lowers the minimum)
    const old = await engine.request('GET', '/v1.41/containers/json');
    assert.equal(old.status, 400);
    assert.match(old.body, /client version 1\.41 is too old\. Minimum supported API version is 1\.44, please upgrade your client to a newer version/);
    assert.equal((await engine.request('GET', '/v1.44/containers/json')).status, 200);
  });
});

describe('two berth serve instances in one namespace', () => {
  test('the network-alias test in both at once: each reaches its own alias, Services named per instance', async () => {
    const namespace = await freshNamespace('serve-two');
    const engines: DockerEngine[] = [];
    try {
      const instances = [`one${process.pid}`, `two${process.pid}`];
      for (const instance of instances) engines.push(await startBerth(namespace, instance));
      await Promise.all(
        engines.map(async (e, i) => {
          const run = async (args: string[]): Promise<string> => {
            const r = await e.docker(args);
            assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
            return r.stdout;
          };
          await run(['pull', BUSYBOX]);
          await run(['network', 'create', 'shared-net']);
          // each instance's "db" answers with its own instance name
          await run([
            'run',
            '-d',
            '--name',
            'db',
            '--network',
            'shared-net',
            '--network-alias',
            'db',
            BUSYBOX,
            'sh',
            '-c',
            `echo ${instances[i]} > /tmp/index.html; exec httpd -f -p 8080 -h /tmp`,
          ]);
          const reply = await run([
            'run',
            '--rm',
            '--network',
            'shared-net',
            BUSYBOX,
            'sh',
            '-c',
            'for i in 1 2 3 4 5 6 7 8 9 10; do wget -q -O - http://db:8080/index.html && exit 0; sleep 0.3; done; exit 1',
          ]);
          assert.equal(reply, `${instances[i]}\n`);
        }),
      );
      const services = (
        await kubectlOk([
          '-n',
          namespace,
          'get',
          'services',
          '-o',
          'jsonpath={range .items[*]}{.metadata.name} {.metadata.labels.berth\\.dev/owner} {.metadata.annotations.berth\\.dev/alias}{"\\n"}{end}',
        ])
      )
        .trim()
        .split('\n')
        .map((l) => l.split(' '));
      assert.equal(services.length, 2);
      assert.notEqual(services[0][0], services[1][0]);
      assert.deepEqual(services.map((s) => s[1]).sort(), [`one${process.pid}`, `two${process.pid}`].sort());
      assert.deepEqual(
        services.map((s) => s[2]),
        ['db', 'db'],
      );
    } finally {
      for (const e of engines) await e.stop();
      const left = await kubectlOk(['-n', namespace, 'get', 'pods,services', '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'name']);
      await dropNamespace(namespace);
      assert.equal(left.trim(), '', 'SIGTERM cleans up everything of both instances');
    }
  });
});
