// What a container is given and what an operator decides, through the installed docker CLI against berth serve
// and against podman's Docker API (the reference): capabilities (Docker's default set, --cap-drop, --cap-add),
// --add-host, -P with an exposed UDP port, --user by name, --network host, --ipc host; and berth serve's operator settings --capabilities,
// --helper-image and --allow-privileged.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUSYBOX, freshNamespace } from '../harness/cluster.js';
import { type DockerEngine, type EngineKind, startBerth, startPodman, stopAndCheckLeftovers } from './serve-env.js';

const prefix = `hs${process.pid}`;

/** Bit numbers of <linux/capability.h>. */
const CAP_BIT: Record<string, number> = {
  CHOWN: 0,
  DAC_OVERRIDE: 1,
  FOWNER: 3,
  FSETID: 4,
  KILL: 5,
  SETGID: 6,
  SETUID: 7,
  SETPCAP: 8,
  NET_BIND_SERVICE: 10,
  NET_ADMIN: 12,
  NET_RAW: 13,
  SYS_CHROOT: 18,
  MKNOD: 27,
  AUDIT_WRITE: 29,
  SETFCAP: 31,
};
const mask = (caps: string[]): bigint => caps.reduce((m, c) => m | (1n << BigInt(CAP_BIT[c])), 0n);

/** dockerd's default set (moby oci/caps/defaults.go): CapEff 00000000a80425fb. */
const DOCKER_DEFAULT = mask([
  'CHOWN',
  'DAC_OVERRIDE',
  'FSETID',
  'FOWNER',
  'MKNOD',
  'NET_RAW',
  'SETGID',
  'SETUID',
  'SETFCAP',
  'SETPCAP',
  'NET_BIND_SERVICE',
  'SYS_CHROOT',
  'KILL',
  'AUDIT_WRITE',
]);
/** podman 4.3's (containers.conf default_capabilities): Docker's without NET_RAW, MKNOD and AUDIT_WRITE. */
const PODMAN_DEFAULT = DOCKER_DEFAULT & ~mask(['NET_RAW', 'MKNOD', 'AUDIT_WRITE']);

/** The CapEff line of `docker run --rm … grep CapEff /proc/self/status`, as a number. */
async function capEff(engine: DockerEngine, flags: string[]): Promise<bigint> {
  const out = await engine.dockerOk(['run', '--rm', ...flags, BUSYBOX, 'grep', 'CapEff', '/proc/self/status']);
  const m = /^CapEff:\s+([0-9a-f]+)$/m.exec(out);
  assert.ok(m, `no CapEff line in ${JSON.stringify(out)}`);
  return BigInt(`0x${m[1]}`);
}

const hex = (n: bigint): string => n.toString(16).padStart(16, '0');

/**
 * The engine of the describe block this is called in: podman's API, or a berth serve of the block's own (started
 * with `extra` in a fresh namespace, and checked for leftovers, and `work` removed, when the block ends).
 */
function suiteEngine(kind: EngineKind, namespaceName: string, instance: string, extra: string[] = [], work?: string): () => DockerEngine {
  let engine: DockerEngine | undefined;
  let namespace = '';
  before(async () => {
    if (kind === 'podman') engine = await startPodman();
    else {
      namespace = await freshNamespace(namespaceName);
      engine = await startBerth(namespace, instance, { extra });
    }
  });
  after(async () => {
    if (kind === 'podman') await engine!.stop();
    else await stopAndCheckLeftovers(engine!, namespace, instance, work);
  });
  return () => {
    assert.ok(engine, `the ${kind} engine of this block did not start`);
    return engine;
  };
}

for (const kind of ['podman', 'berth'] as const) {
  describe(`container settings, docker CLI against ${kind}`, () => {
    const engine = suiteEngine(kind, 'serve-host', `${prefix}-${kind}`, ['--helper-image', BUSYBOX]);

    test("capabilities: Docker's default set (sshd's SYS_CHROOT among them); --cap-drop removes one", async () => {
      // podman's default leaves out NET_RAW, MKNOD and AUDIT_WRITE (its containers.conf): a deviation of the reference.
      const expected = kind === 'berth' ? DOCKER_DEFAULT : PODMAN_DEFAULT;
      assert.equal(hex(await capEff(engine(), [])), hex(expected));
      assert.equal(hex(await capEff(engine(), ['--cap-drop', 'CHOWN'])), hex(expected & ~mask(['CHOWN'])));
      assert.equal(hex(await capEff(engine(), ['--cap-drop', 'ALL', '--cap-add', 'NET_BIND_SERVICE'])), hex(mask(['NET_BIND_SERVICE'])));
    });

    test('--cap-add NET_ADMIN: podman grants it; berth refuses it at create, naming it and --allow-privileged', async () => {
      const r = await engine().docker(['run', '--rm', '--cap-add', 'NET_ADMIN', BUSYBOX, 'grep', 'CapEff', '/proc/self/status']);
      if (kind === 'podman') {
        assert.equal(r.code, 0, r.stderr);
        return assert.equal(BigInt(`0x${/CapEff:\s+([0-9a-f]+)/.exec(r.stdout)![1]}`) & mask(['NET_ADMIN']), mask(['NET_ADMIN']));
      }
      assert.equal(r.code, 125, r.stderr);
      assert.match(
        r.stderr,
        /CapAdd=NET_ADMIN: berth serve gives containers only CHOWN, .*; NET_ADMIN is beyond it and only a berth serve started with --allow-privileged grants it/,
      );
      assert.equal(await engine().dockerOk(['ps', '-a', '-q']), '', 'a refused create leaves no container');
    });

    test('--add-host: the name and address are in /etc/hosts', async () => {
      const hosts = await engine().dockerOk(['run', '--rm', '--add-host', 'db.example:10.1.2.3', BUSYBOX, 'cat', '/etc/hosts']);
      assert.match(hosts, /^10\.1\.2\.3\s+db\.example$/m, hosts);
    });

    test("--user by name: the image's passwd and group give the numbers; a name the image lacks fails the start with dockerd's words", async () => {
      const name = `${prefix}-user-${kind}`;
      await engine().dockerOk(['run', '-d', '--name', name, '--user', 'nonroot', BUSYBOX, 'sleep', '60']);
      try {
        // (supplementary groups differ between exec paths, podman's own too: uid and gid only)
        assert.equal(await engine().dockerOk(['exec', name, 'sh', '-c', 'id -u; id -g; id -un']), '65532\n65532\nnonroot\n');
        assert.equal(await engine().dockerOk(['exec', '--user', 'nonroot', name, 'whoami']), 'nonroot\n', "an exec as the container's own user");
        assert.equal((await engine().dockerOk(['inspect', '-f', '{{.Config.User}}', name])).trim(), 'nonroot');
      } finally {
        await engine().docker(['rm', '-f', name]);
      }
      assert.equal(await engine().dockerOk(['run', '--rm', '--user', 'nonroot:nogroup', BUSYBOX, 'id', '-g']), '65534\n');
      const missing = await engine().docker(['run', '--rm', '--name', `${name}-missing`, '--user', 'postgres', BUSYBOX, 'true']);
      assert.notEqual(missing.code, 0);
      if (kind === 'podman') {
        // podman 4.3 answers the attach with a 409 instead of the start's error, and keeps the container
        await engine().docker(['rm', '-f', `${name}-missing`]);
        return;
      }
      assert.equal(missing.code, 125, "a failed start, as dockerd's");
      assert.match(missing.stderr, /unable to find user postgres: no matching entries in passwd file/);
      assert.equal(await engine().dockerOk(['ps', '-a', '-q']), '', 'the auto-remove container whose start failed is removed');
    });

    test('--shm-size sizes /dev/shm (inspect shows it, 0 is the default), --tmpfs size= sizes the tmpfs', async () => {
      /** the 1K-blocks of `df -k PATH` in a container run with `flags` */
      const kilobytes = async (flags: string[], path: string): Promise<number> => {
        const out = await engine().dockerOk(['run', '--rm', ...flags, BUSYBOX, 'df', '-k', path]);
        const m = new RegExp(`^\\S+\\s+(\\d+)\\s+\\d+\\s+\\d+\\s+\\d+%\\s+${path}$`, 'm').exec(out);
        assert.ok(m, `no df line for ${path} in ${JSON.stringify(out)}`);
        return Number(m[1]);
      };
      // selenium's and chrome's testcontainers modules ask for 2 GiB: a browser crashes on a 64 MiB /dev/shm
      assert.equal(await kilobytes(['--shm-size', '256m'], '/dev/shm'), 256 * 1024);
      assert.equal(await kilobytes(['--tmpfs', '/scratch:size=10m'], '/scratch'), 10 * 1024);
      assert.equal(await kilobytes(['--mount', 'type=tmpfs,dst=/mounted,tmpfs-size=1048576'], '/mounted'), 1024, "--mount's tmpfs-size");
      // the runtime's default: podman's 64000k, dockerd's and a kubelet's 64 MiB
      const defaultKb = kind === 'podman' ? 64_000 : 65_536;
      assert.equal(await kilobytes(['--shm-size', '0'], '/dev/shm'), defaultKb, '--shm-size 0 is the default size');
      const name = `${prefix}-shm-${kind}`;
      await engine().dockerOk(['create', '--name', name, '--shm-size', '2g', BUSYBOX, 'true']);
      await engine().dockerOk(['create', '--name', `${name}-default`, BUSYBOX, 'true']);
      try {
        const shown = await engine().dockerOk(['inspect', '-f', '{{.HostConfig.ShmSize}} {{len .Mounts}}', name, `${name}-default`]);
        assert.equal(
          shown,
          `${2 * 1024 ** 3} 0\n${defaultKb * 1024} 0\n`,
          'the size as given (or the default), and /dev/shm is no mount point of docker inspect',
        );
      } finally {
        await engine().docker(['rm', '-f', name, `${name}-default`]);
      }
    });

    test('docker create -P of a container exposing 53/udp: podman publishes it; berth refuses it at create, naming the port', async () => {
      const name = `${prefix}-udp-${kind}`;
      const r = await engine().docker(['create', '--name', name, '-P', '--expose', '53/udp', '--expose', '8080', BUSYBOX, 'true']);
      try {
        if (kind === 'podman') {
          assert.equal(r.code, 0, r.stderr);
          return;
        }
        assert.equal(r.code, 1, 'docker create exits 1 on a refused create');
        assert.match(
          r.stderr,
          /cannot publish 53\/udp \(exposed by the image or --expose; -P publishes every exposed port\): berth publishes TCP ports only .*-p instead of -P/,
        );
        assert.equal(await engine().dockerOk(['ps', '-a', '-q', '--filter', `name=${name}`]), '', 'nothing created');
      } finally {
        await engine().docker(['rm', '-f', name]);
      }
    });
  });
}

describe('berth serve --capabilities narrows the default set and the limit of CapAdd', () => {
  const engine = suiteEngine('berth', 'serve-caps', `${prefix}-caps`, ['--capabilities', 'CHOWN,NET_BIND_SERVICE']);

  test('--capabilities CHOWN,NET_BIND_SERVICE: the default shrinks to them, and a CapAdd of another is refused naming the flag', async () => {
    assert.equal(hex(await capEff(engine(), [])), hex(mask(['CHOWN', 'NET_BIND_SERVICE'])));
    assert.equal(hex(await capEff(engine(), ['--cap-add', 'CHOWN'])), hex(mask(['CHOWN', 'NET_BIND_SERVICE'])), 'an add within the set keeps it');
    const r = await engine().docker(['run', '--rm', '--cap-add', 'SYS_CHROOT', BUSYBOX, 'true']);
    assert.equal(r.code, 125, r.stderr);
    assert.match(
      r.stderr,
      /CapAdd=SYS_CHROOT: berth serve gives containers only CHOWN, NET_BIND_SERVICE: its operator narrowed Docker's default set with --capabilities/,
    );
  });
});

describe('berth serve --helper-image that cannot be pulled', () => {
  const work = mkdtempSync(join(tmpdir(), 'berth-host-settings-'));
  const engine = suiteEngine('berth', 'serve-helper', `${prefix}-helper`, ['--helper-image', 'localhost/berth/does-not-exist:1'], work);

  test('docker start after docker cp names the image and --helper-image', async () => {
    const name = `${prefix}-feed`;
    const file = join(work, 'greeting.txt');
    writeFileSync(file, 'hello\n');
    // No command and an image whose config berth cannot read: the files come through the helper's init container.
    await engine().dockerOk(['create', '--name', name, BUSYBOX]);
    try {
      await engine().dockerOk(['cp', file, `${name}:/tmp/greeting.txt`]);
      const r = await engine().docker(['start', name], { timeoutMs: 180_000 });
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /init container berth-files \(the helper image localhost\/berth\/does-not-exist:1, which delivers the files copied before start\): \w+/,
      );
      assert.match(r.stderr, /start berth serve with --helper-image, or \$BERTH_HELPER_IMAGE, naming an image with sh and tar that the cluster can pull/);
    } finally {
      await engine().docker(['rm', '-f', name]);
    }
  });
});

/** A namespace of this machine (the dev cluster's node, and podman's host): `net:[4026531840]`. */
const hostNamespace = (kind: 'net' | 'ipc'): string => readlinkSync(`/proc/self/ns/${kind}`);

for (const kind of ['podman', 'berth'] as const) {
  describe(`--network host, --ipc host, docker CLI against ${kind}${kind === 'berth' ? ' --allow-privileged' : ''}`, () => {
    const engine = suiteEngine(kind, 'serve-hostnet', `${prefix}-hostnet-${kind}`, ['--allow-privileged']);

    test("the container is in the node's network namespace, and inspect says host", async () => {
      const name = `${prefix}-hostnet-${kind}`;
      await engine().dockerOk(['run', '-d', '--name', name, '--network', 'host', BUSYBOX, 'sleep', '60']);
      try {
        assert.equal((await engine().dockerOk(['exec', name, 'readlink', '/proc/self/ns/net'])).trim(), hostNamespace('net'));
        assert.equal((await engine().dockerOk(['inspect', '-f', '{{.HostConfig.NetworkMode}}', name])).trim(), 'host');
      } finally {
        await engine().docker(['rm', '-f', name]);
      }
    });

    test("--ipc host: the container is in the node's IPC namespace", async () => {
      const ipc = await engine().dockerOk(['run', '--rm', '--ipc', 'host', BUSYBOX, 'readlink', '/proc/self/ns/ipc']);
      assert.equal(ipc.trim(), hostNamespace('ipc'));
      const own = await engine().dockerOk(['run', '--rm', BUSYBOX, 'readlink', '/proc/self/ns/ipc']);
      assert.notEqual(own.trim(), hostNamespace('ipc'), 'without it, an IPC namespace of its own');
    });
  });
}

describe('--network host and --ipc host on a berth serve without --allow-privileged', () => {
  const engine = suiteEngine('berth', 'serve-nohostnet', `${prefix}-nohostnet`);

  test('is refused at create, naming --allow-privileged', async () => {
    const r = await engine().docker(['run', '--rm', '--network', 'host', BUSYBOX, 'true']);
    assert.equal(r.code, 125, r.stderr);
    assert.match(
      r.stderr,
      /NetworkMode=host: berth runs containers as pods on the pod network; the node's network \(hostNetwork\) is given only by a berth serve started with --allow-privileged/,
    );
    const ipc = await engine().docker(['run', '--rm', '--ipc', 'host', BUSYBOX, 'true']);
    assert.equal(ipc.code, 125, ipc.stderr);
    assert.match(
      ipc.stderr,
      /IpcMode=host: a pod has its own IPC namespace; the node's \(hostIPC\) is given only by a berth serve started with --allow-privileged/,
    );
  });
});
