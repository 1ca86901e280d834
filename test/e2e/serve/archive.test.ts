// Archives of containers that never ran: `docker create img && docker cp c:/path …` reads the image's files
// (berth through a short-lived peek pod), and files copied into a created container can be read back
// before it starts. The docker CLI against podman's Docker-compatible service (the reference) and berth.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUSYBOX, freshNamespace, kubectlOk, runCommand } from '../harness/cluster.js';
import { type DockerEngine, startBerth, startPodman, stopAndCheckLeftovers } from './serve-env.js';

const prefix = `ba${process.pid}`;
/** What each engine answered, compared across engines at the end. */
const seen = new Map<string, Map<string, string>>();

for (const kind of ['podman', 'berth'] as const) {
  describe(`archives of created containers, docker CLI against ${kind}`, () => {
    let engine: DockerEngine;
    let namespace = '';
    const instance = `${prefix}-arc`;
    const names: string[] = [];
    const work = mkdtempSync(join(tmpdir(), 'berth-serve-archive-'));
    const answers = new Map<string, string>();
    seen.set(kind, answers);
    const name = (n: string): string => {
      const full = `${prefix}-${n}`;
      names.push(full);
      return full;
    };
    const ok = (args: string[]): Promise<string> => engine.dockerOk(args);
    /** `docker cp <src> -` (a tar on stdout), unpacked to stdout by tar. */
    const cpOut = async (src: string): Promise<string> => {
      const r = await runCommand('sh', ['-c', 'docker cp "$0" - | tar -x -O -f -', src], {
        env: { ...process.env, DOCKER_HOST: engine.dockerHost, DOCKER_CONFIG: work },
      });
      assert.equal(r.code, 0, `docker cp ${src} - exited ${r.code}: ${r.stderr}`);
      return r.stdout;
    };
    const peekPods = async (): Promise<string[]> =>
      (await kubectlOk(['-n', namespace, 'get', 'pods', '-l', `berth.dev/owner=${instance},berth.dev/peek-of`, '-o', 'name'])).split('\n').filter(Boolean);

    before(async () => {
      if (kind === 'berth') {
        namespace = await freshNamespace('serve-archive');
        engine = await startBerth(namespace, instance);
        await ok(['pull', BUSYBOX]);
      } else {
        engine = await startPodman();
      }
    });

    after(async () => {
      try {
        for (const n of names) await engine.docker(['rm', '-f', n]);
      } finally {
        await stopAndCheckLeftovers(engine, namespace, instance, work);
      }
    });

    test('docker create, then cp a file of the image out (to stdout and to a folder), then rm', async () => {
      const c = name('img');
      await ok(['create', '--name', c, BUSYBOX]);
      const passwd = await cpOut(`${c}:/etc/passwd`);
      assert.match(passwd, /^root:x:0:0:/);
      answers.set('passwd', passwd);
      await ok(['cp', `${c}:/etc/passwd`, join(work, 'passwd')]);
      assert.equal(readFileSync(join(work, 'passwd'), 'utf8'), passwd);
      const missing = await engine.docker(['cp', `${c}:/no/such/file`, join(work, 'x')]);
      assert.notEqual(missing.code, 0);
      // dockerd: "Could not find the file … in container …" (berth says the same); podman 4.3: "no such file or directory".
      assert.match(missing.stderr, kind === 'berth' ? /Could not find the file \/no\/such\/file in container/ : /Could not find the file|no such file/i);
      if (kind === 'berth') {
        assert.equal((await peekPods()).length, 1, 'one peek pod serves the reads');
        // the peek pod is named apart, but its hostname is the container's (the short id, as the container will have
        // it); not compared with podman, whose never-started container has no /etc/hostname of its own yet
        const id = (await ok(['inspect', '-f', '{{.Id}}', c])).trim();
        assert.equal((await cpOut(`${c}:/etc/hostname`)).trim(), id.slice(0, 12));
      }
      await ok(['rm', c]);
      if (kind === 'berth') assert.deepEqual(await peekPods(), [], 'the peek pod went with docker rm');
      const inspect = await engine.docker(['inspect', c]);
      assert.notEqual(inspect.code, 0);
    });

    test('cp into a created container, then back out before start: the copied files', async () => {
      const c = name('rt');
      await ok(['create', '--name', c, BUSYBOX, 'sh', '-c', 'cat /tmp/a.txt /tmp/b.txt']);
      writeFileSync(join(work, 'a.txt'), 'first\n');
      writeFileSync(join(work, 'b.txt'), 'second\n');
      await ok(['cp', join(work, 'a.txt'), `${c}:/tmp/a.txt`]);
      assert.equal(await cpOut(`${c}:/tmp/a.txt`), 'first\n');
      // A file copied in after a read is there for the next read too.
      await ok(['cp', join(work, 'b.txt'), `${c}:/tmp/b.txt`]);
      assert.equal(await cpOut(`${c}:/tmp/b.txt`), 'second\n');
      await ok(['start', '-a', c]).then((out) => assert.equal(out, 'first\nsecond\n'));
      if (kind === 'berth') assert.deepEqual(await peekPods(), [], 'start retires the peek pod');
    });

    if (kind === 'berth') {
      test('an exited container is refused with the reason', async () => {
        const c = name('ex');
        await ok(['run', '--name', c, BUSYBOX, 'true']);
        const r = await engine.docker(['cp', `${c}:/etc/passwd`, '-']);
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /has exited: berth cannot read its files/);
      });

      test('a peek pod that cannot run: 409 naming why, and cp into the container still works', async () => {
        // berth records pulls (the kubelet pulls), so a missing image fails only when a pod runs it.
        const image = 'localhost/berth/no-such-image:1';
        await ok(['pull', image]);
        const c = name('nopeek');
        await ok(['create', '--name', c, image]);
        const r = await engine.docker(['cp', `${c}:/etc/passwd`, '-']);
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /cannot read files of container .* before it starts: .*did not run \(\w+/);
        // `docker cp` into it asks HEAD first: answered 404 as before, so the copy is queued.
        await ok(['cp', join(work, 'a.txt'), `${c}:/tmp/a.txt`]);
        assert.deepEqual(await peekPods(), [], 'a failed peek pod is deleted');
      });
    }
  });
}

test('both engines gave the same image file', () => {
  assert.equal(seen.get('berth')?.get('passwd'), seen.get('podman')?.get('passwd'));
});
