// The docker CLI 29 (built from its Go module, scripts/clients/docker.sh) against podman's service and berth serve: it
// negotiates the API version with each, then runs the core of docker-cli.test.ts's scenario (which the installed CLI 28
// runs in full): run --rm, run -d with logs, exec and cp both ways, image inspect, a network alias.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUSYBOX } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import { ENGINES, useEngine } from './client-suite.js';
import { type Cli29Engine, withCli29 } from './docker29.js';

for (const kind of ENGINES) {
  describe(`docker CLI 29 against ${kind}`, () => {
    // useEngine removes what carries the suite's label, whatever a failed test left
    const { engine, suite } = useEngine(kind, 'cli29');
    const label = ['--label', `suite=${suite}`];
    let cli: Cli29Engine;
    before(() => (cli = withCli29(engine())));

    test('version: the client is 29 and speaks the API version the engine offers', async () => {
      const v = JSON.parse(await cli.dockerOk(['version', '--format', '{{json .}}'])) as {
        Client: { Version: string; ApiVersion: string; DefaultAPIVersion: string };
        Server: { ApiVersion: string; MinAPIVersion: string };
      };
      console.log(`docker CLI ${v.Client.Version} against ${kind}: API ${v.Client.ApiVersion} (client's own ${v.Client.DefaultAPIVersion})`);
      assert.match(v.Client.Version, /^29\./);
      // negotiated: the lower of the client's own version and the engine's
      assert.equal(v.Client.ApiVersion, v.Server.ApiVersion);
      // dockerd 29.0's range
      if (kind === 'berth') assert.deepEqual([v.Server.MinAPIVersion, v.Server.ApiVersion], ['1.44', '1.52']);
      assert.ok(Number(v.Client.DefaultAPIVersion.split('.')[1]) >= 44, v.Client.DefaultAPIVersion);
    });

    test('run --rm gives the exit code and stdout and stderr apart', async () => {
      const r = await cli.docker(['run', '--rm', ...label, BUSYBOX, 'sh', '-c', 'echo out; echo err >&2; exit 7']);
      assert.equal(r.stdout, 'out\n');
      assert.match(r.stderr, /err\n/);
      // podman 4.3 answers `wait?condition=removed` without the status (as docker-cli.test.ts says)
      if (kind === 'berth') assert.equal(r.code, 7);
    });

    test('run -d, logs, exec, cp in and out, rm -f', async () => {
      const work = mkdtempSync(join(tmpdir(), 'berth-cli29-'));
      try {
        const c = `${suite}-bg`;
        await cli.dockerOk(['run', '-d', '--name', c, ...label, BUSYBOX, 'sh', '-c', 'echo started; echo warn >&2; exec sleep 600']);
        await eventually('both lines logged', async () => {
          const logs = await cli.docker(['logs', c]);
          return logs.stdout === 'started\n' && logs.stderr === 'warn\n';
        });
        const ex = await cli.docker(['exec', '-i', c, 'sh', '-c', 'cat; echo to-err >&2; exit 5'], { input: 'via exec\n' });
        assert.deepEqual([ex.code, ex.stdout, ex.stderr], [5, 'via exec\n', 'to-err\n']);
        writeFileSync(join(work, 'in.txt'), 'copied in\n');
        await cli.dockerOk(['cp', join(work, 'in.txt'), `${c}:/tmp/in.txt`]);
        assert.equal(await cli.dockerOk(['exec', c, 'cat', '/tmp/in.txt']), 'copied in\n');
        await cli.dockerOk(['exec', c, 'sh', '-c', 'echo made inside > /tmp/out.txt']);
        await cli.dockerOk(['cp', `${c}:/tmp/out.txt`, join(work, 'out.txt')]);
        assert.equal(readFileSync(join(work, 'out.txt'), 'utf8'), 'made inside\n');
        await cli.dockerOk(['rm', '-f', c]);
        assert.equal((await cli.dockerOk(['ps', '-aq', '--filter', `name=^${c}$`])).trim(), '');
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });

    test('image inspect of the image the runs used', async () => {
      const [image] = JSON.parse(await cli.dockerOk(['image', 'inspect', BUSYBOX])) as Array<{ RepoTags: string[]; Id: string }>;
      assert.ok(image.RepoTags.includes(BUSYBOX), JSON.stringify(image.RepoTags));
      assert.match(image.Id, /^sha256:[0-9a-f]{64}$/);
    });

    test(
      '--mount volume-subpath (API 1.45) mounts a folder of a named volume',
      { skip: kind === 'podman' && "podman 4.3 speaks API 1.41, older than volume subpaths: it mounts the volume's root" },
      async () => {
        const volume = `${suite}-subvol`;
        await cli.dockerOk(['volume', 'create', ...label, volume]);
        try {
          await cli.dockerOk(['run', '--rm', ...label, '-v', `${volume}:/data`, BUSYBOX, 'sh', '-c', 'mkdir -p /data/sub && echo in-sub > /data/sub/f']);
          const mount = `type=volume,src=${volume},dst=/x,volume-subpath=sub`;
          const r = await cli.docker(['run', '--rm', ...label, '--mount', mount, BUSYBOX, 'cat', '/x/f']);
          assert.deepEqual([r.code, r.stdout], [0, 'in-sub\n'], r.stderr);
          const escape = await cli.docker(['run', '--rm', ...label, '--mount', `type=volume,src=${volume},dst=/x,volume-subpath=../up`, BUSYBOX, 'true']);
          assert.notEqual(escape.code, 0);
          if (kind === 'berth') assert.match(escape.stderr, /subpath \.\.\/up must be a relative path inside the volume/);
        } finally {
          await cli.docker(['volume', 'rm', volume]);
        }
      },
    );

    test('network create and connect with an alias: a member reaches the container by it', async () => {
      const net = `${suite}-net`;
      const srv = `${suite}-srv`;
      await cli.dockerOk(['network', 'create', ...label, net]);
      try {
        await cli.dockerOk(['run', '-d', '--name', srv, ...label, BUSYBOX, 'sh', '-c', 'echo by-alias > /tmp/index.html; exec httpd -f -p 8080 -h /tmp']);
        await cli.dockerOk(['network', 'connect', '--alias', 'api29', net, srv]);
        if (kind === 'berth') {
          // API 1.52's shapes: Aliases as given (the short id went in 1.45), DNSNames, the network's IPAM Status
          const id = (await cli.dockerOk(['inspect', '-f', '{{.Id}}', srv])).trim();
          const endpoint = JSON.parse(await cli.dockerOk(['inspect', '-f', `{{json (index .NetworkSettings.Networks "${net}")}}`, srv])) as Record<
            string,
            unknown
          >;
          assert.deepEqual([endpoint.Aliases, endpoint.DNSNames], [['api29'], [srv, 'api29', id.slice(0, 12)]]);
          // gone from 1.52: the CLI 29 says so as it does against dockerd 29
          const topLevel = await cli.docker(['inspect', '-f', '{{json .NetworkSettings.IPAddress}}', srv]);
          assert.match(topLevel.stderr, /map has no entry for key "IPAddress"/);
          const inspected = await engine().request('GET', `/v1.52/networks/${net}`);
          assert.deepEqual((JSON.parse(inspected.body) as { Status: unknown }).Status, { IPAM: { Subnets: {} } });
          assert.equal((await cli.dockerOk(['network', 'inspect', '-f', '{{json .Status}}', net])).trim(), '{"IPAM":{}}', 'as the CLI 29 prints it');
        }
        const r = await cli.docker([
          'run',
          '--rm',
          ...label,
          '--network',
          net,
          BUSYBOX,
          'sh',
          '-c',
          'for i in 1 2 3 4 5 6 7 8 9 10; do wget -q -O - http://api29:8080/index.html && exit 0; sleep 0.3; done; exit 1',
        ]);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, 'by-alias\n');
      } finally {
        await cli.docker(['rm', '-f', srv]);
        await cli.docker(['network', 'rm', net]);
      }
    });
  });
}
