// dockerode against berth serve and podman's service: pull, create, copy before start, start, attach-free
// logs (demuxed), exec with the exit code, restart, stop, wait, remove.
import { after, before, describe, test } from 'node:test';
import { createHash, randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import Docker from 'dockerode';
import { demux } from '../../../src/dockerapi/http/framing.js';
import { BUSYBOX, freshNamespace } from '../harness/cluster.js';
import { type DockerEngine, startBerth, startPodman, stopAndCheckLeftovers } from './serve-env.js';
import { tarOf } from '../../util/tar.js';
import { eventually } from '../../util/eventually.js';

async function demuxed(docker: Docker, stream: NodeJS.ReadableStream): Promise<{ stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d: Buffer) => (stdout += d.toString()));
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  docker.modem.demuxStream(stream, out, err);
  await new Promise<void>((resolve) => stream.on('end', () => resolve()));
  return { stdout, stderr };
}

const text = (frames: Array<{ stream: number; payload: Buffer }>, id: number): string =>
  Buffer.concat(frames.filter((f) => f.stream === id).map((f) => f.payload)).toString('utf8');

for (const kind of ['podman', 'berth'] as const) {
  describe(`dockerode against ${kind}`, () => {
    let engine: DockerEngine;
    let namespace = '';
    const instance = `dr${process.pid}`;
    let docker: Docker;
    const ids: string[] = [];

    before(async () => {
      if (kind === 'berth') {
        namespace = await freshNamespace('serve-dockerode');
        engine = await startBerth(namespace, instance);
      } else engine = await startPodman();
      docker = new Docker({ socketPath: engine.socket });
    });

    after(async () => {
      for (const id of ids)
        await docker
          .getContainer(id)
          .remove({ force: true })
          .catch(() => undefined);
      await stopAndCheckLeftovers(engine, namespace, instance);
    });

    test('pull, create, copy before start, start, logs, exec, restart, stop, wait, remove', async () => {
      const pull = await docker.pull(BUSYBOX);
      await new Promise<void>((resolve, reject) => docker.modem.followProgress(pull, (err: Error | null) => (err ? reject(err) : resolve())));
      const image = await docker.getImage(BUSYBOX).inspect();
      assert.ok(image.Id);
      const c = await docker.createContainer({
        Image: BUSYBOX,
        Cmd: ['sh', '-c', 'cat /conf/app.txt; echo warn >&2; exec sleep 600'],
        Labels: { suite: 'dockerode' },
      });
      ids.push(c.id);
      await c.putArchive(await tarOf([{ name: 'conf/app.txt', content: 'configured\n' }]), { path: '/' });
      await c.start();
      const listed = await docker.listContainers({ filters: { label: ['suite=dockerode'] } });
      assert.deepEqual(
        listed.map((x) => x.Id),
        [c.id],
      );
      assert.equal(listed[0].State, 'running');
      assert.equal(typeof listed[0].Labels, 'object');

      // Output may not be logged yet, and stdout and stderr are two pipes: a log read between the node's reads
      // of the two can hold one stream's line and not yet the other's.
      const logs = await eventually(
        "the container's stdout and stderr in its log",
        async () => {
          const frames = demux((await c.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer);
          const both = { stdout: text(frames, 1), stderr: text(frames, 2) };
          return both.stdout !== '' && both.stderr !== '' && both;
        },
        { timeoutMs: 5_000 },
      );
      assert.deepEqual(logs, { stdout: 'configured\n', stderr: 'warn\n' });

      const exec = await c.exec({ Cmd: ['sh', '-c', 'echo in-exec; exit 9'], AttachStdout: true, AttachStderr: true });
      const stream = await exec.start({ hijack: true, stdin: false });
      const out = await demuxed(docker, stream);
      assert.equal(out.stdout, 'in-exec\n');
      assert.equal((await exec.inspect()).ExitCode, 9);

      // A copy into the running container, large enough for berth serve to keep it on disk for the restart.
      const big = randomBytes(2 * 1024 * 1024 + 123);
      await c.putArchive(await tarOf([{ name: 'big.bin', content: big }]), { path: '/tmp' });

      await c.restart({ t: 0 });
      assert.equal((await c.inspect()).State.Running, true);
      const afterRestart = await c.exec({ Cmd: ['cat', '/conf/app.txt'], AttachStdout: true });
      assert.equal((await demuxed(docker, await afterRestart.start({ hijack: true, stdin: false }))).stdout, 'configured\n');
      const bigAfter = await c.exec({ Cmd: ['sha256sum', '/tmp/big.bin'], AttachStdout: true });
      const sum = (await demuxed(docker, await bigAfter.start({ hijack: true, stdin: false }))).stdout.split(' ')[0];
      assert.equal(sum, createHash('sha256').update(big).digest('hex'), 'the large copy is there, whole, after the restart');

      await c.stop({ t: 1 });
      const state = (await c.inspect()).State;
      assert.equal(state.Running, false);
      assert.equal(state.Status, 'exited');
      const waited = (await c.wait()) as { StatusCode: number };
      assert.equal(typeof waited.StatusCode, 'number');
      await c.remove();
      await assert.rejects(c.inspect(), (err: { statusCode?: number }) => err.statusCode === 404);
    });

    // dockerd's log copier hands a long line on in 16 KiB messages, and `docker logs` frames each one; podman
    // frames by its own reads, so only berth is held to dockerd's frames here.
    test(
      "a long line's log comes whole, in frames of 16 KiB as dockerd frames it",
      { skip: kind !== 'berth' && 'podman frames a log by its own reads, not as dockerd' },
      async () => {
        const lineBytes = 3 * 16384 + 1000;
        const c = await docker.createContainer({ Image: BUSYBOX, Cmd: ['sh', '-c', `head -c ${lineBytes} /dev/zero | tr '\\0' x; echo; echo short >&2`] });
        ids.push(c.id);
        await c.start();
        await c.wait();
        const frames = demux((await c.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer);
        assert.equal(text(frames, 1), 'x'.repeat(lineBytes) + '\n');
        assert.equal(text(frames, 2), 'short\n');
        assert.deepEqual(
          frames.filter((f) => f.stream === 1).map((f) => f.payload.length),
          [16384, 16384, 16384, 1001],
        );
        await c.remove({ force: true });
      },
    );
  });
}
