// What real clients hit (issue 10), through the installed docker CLI against berth serve and against podman's
// Docker API (the reference): Docker Hub names, --network none, --dns, --restart, UDP bindings, docker build,
// and the errors of a berth serve pointed at a namespace that does not exist or that it may not use.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUSYBOX, freshNamespace, kubectlOk, loadIntoNode, runCommand } from '../harness/cluster.js';
import { type DockerEngine, dropNamespace, startBerth, startPodman, stopAndCheckLeftovers } from './serve-env.js';

const HUB_BUSYBOX = 'docker.io/library/busybox:latest';
const prefix = `cp${process.pid}`;

/**
 * The dev cluster's node (and podman) find images only where they were put (no internet): BUSYBOX is tagged
 * as Docker Hub's busybox for these tests, loaded into the node, and untagged after, unless that name was there before.
 */
async function tagHubBusybox(): Promise<() => Promise<void>> {
  if ((await runCommand('podman', ['image', 'exists', HUB_BUSYBOX])).code === 0) {
    await loadIntoNode(HUB_BUSYBOX);
    return async () => undefined;
  }
  const tagged = await runCommand('podman', ['tag', BUSYBOX, HUB_BUSYBOX]);
  assert.equal(tagged.code, 0, tagged.stderr);
  await loadIntoNode(HUB_BUSYBOX);
  return async () => void (await runCommand('podman', ['untag', BUSYBOX, HUB_BUSYBOX]));
}

for (const kind of ['podman', 'berth'] as const) {
  describe(`client parity, docker CLI against ${kind}`, () => {
    let engine: DockerEngine;
    let namespace = '';
    const instance = `${prefix}-${kind}`;
    let untag: () => Promise<void> = async () => undefined;
    before(async () => {
      untag = await tagHubBusybox();
      if (kind === 'podman') engine = await startPodman();
      else {
        namespace = await freshNamespace('serve-parity');
        engine = await startBerth(namespace, instance, { extra: ['--helper-image', BUSYBOX] });
      }
    });
    after(async () => {
      try {
        await untag();
      } finally {
        if (kind === 'podman') await engine.stop();
        else await stopAndCheckLeftovers(engine, namespace, instance);
      }
    });

    test('docker run --rm busybox: the Docker Hub name is pulled, found and run', async () => {
      const r = await engine.docker(['run', '--rm', 'busybox', 'sh', '-c', 'echo hub; exit 3'], { timeoutMs: 120_000 });
      assert.doesNotMatch(r.stderr, /No such image/);
      assert.equal(r.stdout, 'hub\n');
      // podman 4.3 answers `wait?condition=removed` without the status (a known deviation of the reference).
      if (kind === 'berth') assert.equal(r.code, 3, r.stderr);
      for (const name of ['busybox', 'busybox:latest', 'library/busybox', HUB_BUSYBOX]) {
        const inspected = await engine.request('GET', `/images/${encodeURIComponent(name)}/json`);
        assert.equal(inspected.status, 200, `GET /images/${name}/json: ${inspected.body}`);
      }
      if (kind === 'berth') {
        const tags = JSON.parse(await engine.dockerOk(['image', 'inspect', '-f', '{{json .RepoTags}}', 'busybox'])) as string[];
        assert.deepEqual(tags, ['busybox:latest'], 'shown in the familiar form, as dockerd shows it');
      }
    });

    test('docker run --network none: the container reaches nothing from its first instruction; a bridge container reaches the same server', async () => {
      const target = `${prefix}-target-${kind}`;
      await engine.dockerOk([
        'run',
        '-d',
        '--name',
        target,
        BUSYBOX,
        'sh',
        '-c',
        'mkdir -p /www && echo up > /www/index.html && exec httpd -f -p 8080 -h /www',
      ]);
      try {
        const ip = (await engine.dockerOk(['inspect', '-f', '{{.NetworkSettings.IPAddress}}', target])).trim();
        assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/, 'the server container has an address');
        const tries = `for i in 1 2 3 4 5 6 7 8 9 10; do timeout 3 wget -q -O - http://${ip}:8080/ && exit 0; sleep 1; done; exit 1`;
        const reached = await engine.docker(['run', '--rm', BUSYBOX, 'sh', '-c', tries]);
        assert.equal(reached.stdout, 'up\n', `a container on the default network reaches ${ip}: ${reached.stderr}`);
        // On a cluster the deny-all policy is enforced a moment after the pod has its address: berth's gate holds
        // the container until it is, so even its first connection fails (podman: no interface but lo).
        const cut = await engine.docker([
          'run',
          '--rm',
          '--network',
          'none',
          BUSYBOX,
          'sh',
          '-c',
          `timeout 3 wget -q -O - http://${ip}:8080/ && echo reached || echo cut off`,
        ]);
        assert.equal(cut.stdout, 'cut off\n', cut.stderr);
        assert.equal(cut.code, 0, cut.stderr);
      } finally {
        await engine.docker(['rm', '-f', target]);
      }
      if (kind === 'berth')
        assert.equal(await kubectlOk(['-n', namespace, 'get', 'networkpolicies', '-o', 'name']), '', 'the deny-all policy went with the container');
    });

    test('docker run --dns, --dns-search, --dns-option: written into resolv.conf (berth: through the pod dnsConfig)', async () => {
      const name = `${prefix}-dns-${kind}`;
      await engine.dockerOk([
        'run',
        '-d',
        '--name',
        name,
        '--dns',
        '10.9.8.7',
        '--dns-search',
        'corp.example',
        '--dns-option',
        'ndots:3',
        BUSYBOX,
        'sleep',
        '60',
      ]);
      try {
        const conf = await engine.dockerOk(['exec', name, 'cat', '/etc/resolv.conf']);
        assert.match(conf, /nameserver 10\.9\.8\.7/);
        assert.match(conf, /search corp\.example/);
        assert.match(conf, /options ndots:3/);
        if (kind === 'berth') {
          const pod = await kubectlOk([
            '-n',
            namespace,
            'get',
            'pods',
            '-l',
            `berth.dev/owner=${instance}`,
            '-o',
            'jsonpath={.items[0].spec.dnsPolicy} {.items[0].spec.dnsConfig}',
          ]);
          const [policy, config] = [pod.slice(0, pod.indexOf(' ')), JSON.parse(pod.slice(pod.indexOf(' ') + 1)) as unknown];
          assert.equal(policy, 'None');
          assert.deepEqual(config, { nameservers: ['10.9.8.7'], searches: ['corp.example'], options: [{ name: 'ndots', value: '3' }] });
        }
      } finally {
        await engine.docker(['rm', '-f', name]);
      }
    });

    test('docker create --restart always: accepted (berth says it does not restart)', async () => {
      const name = `${prefix}-restart-${kind}`;
      const r = await engine.docker(['create', '--name', name, '--restart', 'always', BUSYBOX, 'true']);
      try {
        assert.equal(r.code, 0, r.stderr);
        if (kind === 'berth') assert.match(r.stderr, /WARNING: HostConfig\.RestartPolicy=always is accepted, but berth does not restart containers/);
      } finally {
        await engine.docker(['rm', '-f', name]);
      }
    });

    test('docker create -p 5353:53/udp: podman publishes it; berth refuses it at create, naming why', async () => {
      const name = `${prefix}-udp-${kind}`;
      const r = await engine.docker(['create', '--name', name, '-p', '127.0.0.1:0:53/udp', BUSYBOX, 'true']);
      await engine.docker(['rm', '-f', name]);
      if (kind === 'podman') return assert.equal(r.code, 0, r.stderr);
      assert.equal(r.code, 1, 'docker create exits 1 on a refused create');
      assert.match(r.stderr, /cannot publish 53\/udp: berth publishes TCP ports only/);
    });

    test('docker build: podman builds; a berth serve without a builder answers with a build error naming it at once, never a hang', async () => {
      const tag = `localhost/${prefix}-built:1`;
      const started = Date.now();
      const r = await runCommand('docker', ['build', '-t', tag, '-'], {
        input: `FROM ${BUSYBOX}\nRUN true\n`,
        env: { ...process.env, DOCKER_HOST: engine.dockerHost, DOCKER_BUILDKIT: '0' },
        timeoutMs: 120_000,
      });
      if (kind === 'podman') {
        assert.equal(r.code, 0, r.stderr);
        await engine.docker(['rmi', tag]);
        return;
      }
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /berth serve builds images in a builder pod: start it with --builder-image IMAGE/);
      assert.ok(Date.now() - started < 30_000, 'answered, not waited out');
    });
  });
}

describe('berth serve errors name its own flag and Role', () => {
  test('a namespace that does not exist: docker run --rm exits 125 naming --namespace, and leaves no container', async () => {
    const missing = `${prefix}-missing`;
    const engine = await startBerth(missing, `${prefix}-nons`);
    try {
      const r = await engine.docker(['run', '--rm', BUSYBOX, 'true'], { timeoutMs: 60_000 });
      assert.equal(r.code, 125, r.stderr);
      assert.match(r.stderr, new RegExp(`namespace ${missing} does not exist \\(create it, or pick another with --namespace \\(-n\\)\\)`));
      assert.doesNotMatch(r.stderr, /BERTH_NAMESPACE|shim-role/);
      assert.equal(await engine.dockerOk(['ps', '-a', '-q']), '', 'the auto-remove container whose start failed is removed before the CLI ends');
    } finally {
      await engine.stop();
    }
  });

  test('an identity without the Role: berth says to grant deploy/rbac/serve-role.yaml', async () => {
    const namespace = await freshNamespace('serve-norole');
    let output = '';
    try {
      await startBerth(namespace, `${prefix}-norole`, { user: 'shim', onOutput: (all) => (output = all) }).then(
        (e) => e.stop(),
        () => undefined,
      );
      assert.match(output, /forbidden: cannot list .* \(grant it in the Role: deploy\/rbac\/serve-role\.yaml\)/);
      assert.doesNotMatch(output, /shim-role/);
    } finally {
      await dropNamespace(namespace);
    }
  });
});
