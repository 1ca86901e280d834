// The installed docker CLI against `berth serve` on the dev cluster and, as the reference, against podman's
// Docker-compatible service: the same cases, the same expectations (Docker's behaviour).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BUSYBOX, freshNamespace, kubectlOk, readClusterState, runCommand, type Result } from '../harness/cluster.js';
import { bindServeRole, type DockerEngine, startBerth, startPodman, stopAndCheckLeftovers } from './serve-env.js';
import { eventually } from '../../util/eventually.js';

const prefix = `bs${process.pid}`;

/** The docker CLI left running (a follow): what it printed so far, and its end. */
function dockerRunning(engine: DockerEngine, args: string[]): { stdout: () => string; done: Promise<Result> } {
  const child = spawn('docker', args, {
    env: { ...process.env, DOCKER_HOST: engine.dockerHost, DOCKER_CONFIG: dirname(engine.socket) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const done = new Promise<Result>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { stdout: () => stdout, done };
}

/** The lines of a log as printed (a TTY's end with \r\n). */
const linesOf = (log: string): string[] => log.split(/\r?\n/).filter(Boolean);

/** A time in milliseconds as `docker logs` takes it with a fraction: seconds.nanoseconds (1 ns past the millisecond). */
const fractional = (ms: number): string => `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}000001`;

for (const kind of ['podman', 'berth'] as const) {
  describe(`docker CLI against ${kind}`, () => {
    let engine: DockerEngine;
    let namespace = '';
    const instance = `${prefix}-cli`;
    const names: string[] = [];
    const networks: string[] = [];
    const volumes: string[] = [];
    // tags the test adds: removed one by one (never an unscoped rmi: podman holds the machine's images)
    const images: string[] = [];
    const work = mkdtempSync(join(tmpdir(), 'berth-serve-cli-'));
    const name = (n: string): string => {
      const full = `${prefix}-${n}`;
      names.push(full);
      return full;
    };
    const ok = (args: string[], input?: string): Promise<string> => engine.dockerOk(args, { input });

    before(async () => {
      if (kind === 'berth') {
        namespace = await freshNamespace('serve-cli');
        // As user `shim`, whose only rights are the shipped Role: the Role is tested as users apply it.
        await bindServeRole(namespace, 'shim');
        // a client of API 1.24 is among the tests: served once the minimum is lowered, as DOCKER_MIN_API_VERSION lowers dockerd 29's
        // docker commit pushes to the dev cluster's registry, where the node pulls the committed image
        const registry = `http://${readClusterState().registry}/serve-e2e`;
        engine = await startBerth(namespace, instance, { user: 'shim', extra: ['--min-api-version', '1.24', '--image-registry', registry] });
        // berth knows an image once pulled (the kubelet pulls for real).
        await ok(['pull', BUSYBOX]);
      } else {
        engine = await startPodman();
      }
    });

    after(async () => {
      try {
        for (const n of names) await engine.docker(['rm', '-f', n]);
        for (const n of networks) await engine.docker(['network', 'rm', n]);
        for (const v of volumes) await engine.docker(['volume', 'rm', '-f', v]);
        for (const i of images) await engine.docker(['rmi', i]);
      } finally {
        await stopAndCheckLeftovers(engine, namespace, instance, work);
      }
    });

    test('run --rm gives the exit code and stdout and stderr apart', async () => {
      const r = await engine.docker(['run', '--rm', '--name', name('rm'), BUSYBOX, 'sh', '-c', 'echo out; echo err >&2; exit 7']);
      assert.equal(r.stdout, 'out\n');
      assert.match(r.stderr, /err\n/);
      // podman 4.3 answers `wait?condition=removed` without the status (a known deviation of the reference).
      if (kind === 'berth') assert.equal(r.code, 7);
    });

    test('run -d, logs -f until the end, wait with the real exit code', async () => {
      const id = (
        await ok(['run', '-d', '--name', name('bg'), BUSYBOX, 'sh', '-c', 'for i in 1 2 3; do echo line$i; sleep 0.2; done; echo oops >&2; exit 4'])
      ).trim();
      assert.match(id, /^[0-9a-f]{64}$/);
      const logs = await engine.docker(['logs', '-f', id]);
      assert.equal(logs.stdout, 'line1\nline2\nline3\n');
      assert.equal(logs.stderr, 'oops\n');
      assert.equal((await ok(['wait', id])).trim(), '4');
      // the last two lines of the log as written, each on its own stream
      const tail = await engine.docker(['logs', '--tail', '2', id]);
      assert.equal(tail.stdout, 'line3\n');
      assert.equal(tail.stderr, 'oops\n');
      const state = await ok(['inspect', '-f', '{{.State.Status}} {{.State.Running}} {{.State.ExitCode}}', id]);
      assert.equal(state.trim(), 'exited false 4');
    });

    test(
      'logs -t: every line stamped as dockerd writes it, RFC 3339 in UTC with 9 fractional digits',
      { skip: kind === 'podman' && 'podman 4.3 stamps whole seconds' },
      async () => {
        const c = name('stamped');
        // 30 lines: a kubelet timestamp drops trailing zeros, which one in ten has
        await ok(['run', '-d', '--name', c, BUSYBOX, 'sh', '-c', 'i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo out$i; echo err$i >&2; done']);
        assert.equal((await ok(['wait', c])).trim(), '0');
        for (const args of [
          ['logs', '-t', c],
          ['logs', '-t', '--tail', '5', c],
          ['logs', '-t', '--since', '1', c],
        ]) {
          const r = await engine.docker(args);
          assert.equal(r.code, 0, r.stderr);
          const lines = [...linesOf(r.stdout), ...linesOf(r.stderr)];
          assert.equal(lines.length, args.includes('--tail') ? 5 : 60, args.join(' '));
          for (const line of lines) assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z (out|err)\d+$/, `${args.join(' ')}: ${line}`);
        }
      },
    );

    test('logs --until and --since with a fraction cut the log between two lines, as the time is written', async () => {
      const c = name('cut');
      // A line every 20 ms until /tmp/go exists, then `late`: the time taken while it ticks lies between two lines.
      await ok(['run', '-d', '--name', c, BUSYBOX, 'sh', '-c', 'i=0; until [ -e /tmp/go ]; do i=$((i+1)); echo $i; usleep 20000; done; echo late']);
      await eventually('the container ticks', async () => linesOf(await ok(['logs', c])).length >= 5);
      // The ticks seen now were written before the time taken next, late is written after it. All within one second,
      // begun past its start: the last ticks seen are then in the time's second, which a cut at whole seconds lets through.
      let seen: string[] = [];
      let at = 0;
      await eventually('ticks seen and a time taken within one second', async () => {
        await eventually('the clock a fifth into a second', () => Date.now() % 1000 >= 200 && Date.now() % 1000 < 400, { intervalMs: 10 });
        const start = Date.now();
        seen = linesOf(await ok(['logs', c]));
        at = Date.now();
        return Math.floor(at / 1000) === Math.floor(start / 1000);
      });
      const time = fractional(at);
      await ok(['exec', c, 'touch', '/tmp/go']);
      assert.equal((await ok(['wait', c])).trim(), '0');
      const all = await ok(['logs', c]);
      const until = await ok(['logs', '--until', time, c]);
      const since = await ok(['logs', '--since', time, c]);
      assert.equal(until + since, all, `--until ${time} and --since ${time} split the log in two`);
      assert.deepEqual(linesOf(until).slice(0, seen.length), seen, 'every line seen before the time is up to it');
      assert.ok(!linesOf(until).includes('late'), 'late is after the time');
      assert.ok(!linesOf(since).includes(seen[seen.length - 1]), 'the lines before the time, in its second, are not since it');
      assert.equal(linesOf(since).at(-1), 'late');
      // as the CLI sends an RFC 3339 time: seconds.nanoseconds
      assert.equal(await ok(['logs', '--until', new Date(at).toISOString(), c]), until);
    });

    test('logs -f --until a moment ahead ends there with the lines up to it, as read again afterwards', async () => {
      // podman 4.3 keeps following past `until` (a known deviation of the reference); dockerd ends the follow at the
      // first line written after it, which this container writes 50 ms later.
      if (kind === 'podman') return;
      const c = name('follow-until');
      await ok(['run', '-d', '--name', c, BUSYBOX, 'sh', '-c', 'i=0; while true; do i=$((i+1)); echo $i; usleep 50000; done']);
      await eventually('the container ticks', async () => linesOf(await ok(['logs', c])).length >= 2);
      const until = fractional(Date.now() + 1500);
      const followed = await engine.dockerOk(['logs', '-f', '--until', until, c], { timeoutMs: 20_000 });
      const lines = linesOf(followed);
      assert.ok(lines.length > 2 && lines.every((l, i) => l === String(i + 1)), `the ticks from the first on: ${followed}`);
      assert.equal(await ok(['logs', '--until', until, c]), followed);
    });

    test('logs -f --tail 0 of a container that ends during the follow: the new lines, exit 0 (three times, one with a TTY)', async () => {
      for (const tty of [false, false, true]) {
        const c = name(`follow-end-${names.length}`);
        // Ticks until /tmp/go exists, then a last line and the end: the follow sees the container end.
        await ok([
          'run',
          '-d',
          ...(tty ? ['-t'] : []),
          '--name',
          c,
          BUSYBOX,
          'sh',
          '-c',
          'echo old; i=0; until [ -e /tmp/go ]; do i=$((i+1)); echo tick$i; usleep 50000; done; echo new1',
        ]);
        await eventually('the container ticks', async () => (await ok(['logs', c])).includes('tick1'));
        const follow = dockerRunning(engine, ['logs', '-f', '--tail', '0', c]);
        // The follow is under way once it printed a tick written after it began.
        await eventually('the follow prints', () => /tick\d+/.test(follow.stdout()), { timeoutMs: 20_000 });
        await ok(['exec', c, 'touch', '/tmp/go']);
        const r = await follow.done;
        assert.equal(r.code, 0, `docker logs -f --tail 0 exited ${r.code}: ${r.stderr}`);
        const lines = linesOf(r.stdout);
        assert.equal(lines.at(-1), 'new1', r.stdout);
        assert.ok(!lines.includes('old'), 'the line before the follow is outside --tail 0');
        const ticks = lines.slice(0, -1).map((l) => Number(l.replace('tick', '')));
        assert.ok(ticks.length > 0 && ticks.every((n, i) => i === 0 || n === ticks[i - 1] + 1), `consecutive ticks: ${r.stdout}`);
      }
    });

    test('logs of 4 MiB arrive whole to a reader slower than the engine', async () => {
      const id = (await ok(['run', '-d', '--name', name('big'), BUSYBOX, 'sh', '-c', "head -c 4194304 /dev/zero | tr '\\0' x; echo; echo done >&2"])).trim();
      assert.equal((await ok(['wait', id])).trim(), '0');
      // The reader starts a second late, so the engine meets a full pipe (backpressure) the whole way.
      const r = await runCommand('sh', ['-c', `docker logs ${id} 2>/dev/null | (sleep 1; wc -c)`], { env: { ...process.env, DOCKER_HOST: engine.dockerHost } });
      assert.equal(r.stdout.trim(), String(4194304 + 1));
    });

    test('run -i feeds stdin to the process', async () => {
      const r = await engine.docker(['run', '-i', '--rm', '--name', name('stdin'), BUSYBOX, 'sh', '-c', 'tr a-z A-Z; echo end'], { input: 'hello stdin\n' });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'HELLO STDIN\nend\n');
    });

    test('exec -i with stdin, stdout, stderr and the exit code; inspect, ps filters, stop, kill, rm -f', async () => {
      const svc = name('svc');
      await ok(['run', '-d', '--name', svc, '-l', `${prefix}=yes`, '-l', 'tier=web', BUSYBOX, 'sleep', '600']);
      const other = name('other');
      await ok(['run', '-d', '--name', other, '-l', `${prefix}=yes`, BUSYBOX, 'sleep', '600']);
      // podman gives a privileged exec every capability, as dockerd does; a Kubernetes exec cannot have more than its container
      if (kind === 'berth') {
        const privileged = await engine.docker(['exec', '--privileged', svc, 'grep', 'CapEff', '/proc/self/status']);
        assert.notEqual(privileged.code, 0, privileged.stdout);
        assert.match(privileged.stderr, /exec --privileged is not possible: a Kubernetes exec runs with the container's own capabilities/);
      }
      const r = await engine.docker(['exec', '-i', svc, 'sh', '-c', 'cat; echo to-err >&2; exit 5'], { input: 'via exec\n' });
      assert.equal(r.code, 5);
      assert.equal(r.stdout, 'via exec\n');
      assert.match(r.stderr, /to-err/);

      const both = await ok(['ps', '--filter', `label=${prefix}=yes`, '--filter', 'label=tier=web', '--format', '{{.Names}}']);
      assert.equal(both.trim(), svc, 'labels AND together');
      const any = await ok(['ps', '--filter', `label=${prefix}=yes`, '--format', '{{.Names}}']);
      assert.deepEqual(any.trim().split('\n').sort(), [other, svc].sort());
      const byName = await ok(['ps', '--filter', `name=${other}`, '--format', '{{.Names}}']);
      assert.equal(byName.trim(), other);

      const inspect = JSON.parse(await ok(['inspect', svc])) as Array<{
        Name: string;
        State: { Running: boolean; Status: string };
        Config: { Labels: Record<string, string> };
      }>;
      assert.equal(inspect[0].Name, `/${svc}`);
      assert.equal(inspect[0].State.Status, 'running');
      assert.equal(inspect[0].Config.Labels.tier, 'web');

      await ok(['stop', '-t', '1', svc]);
      assert.equal((await ok(['inspect', '-f', '{{.State.Status}}', svc])).trim(), 'exited');
      const stopped = await ok(['ps', '-a', '--filter', 'status=exited', '--filter', `label=${prefix}=yes`, '--format', '{{.Names}}']);
      assert.equal(stopped.trim(), svc);
      await ok(['kill', other]);
      assert.equal((await ok(['inspect', '-f', '{{.State.Status}} {{.State.ExitCode}}', other])).trim(), 'exited 137');
      const running = name('running');
      await ok(['run', '-d', '--name', running, BUSYBOX, 'sleep', '600']);
      const rm = await engine.docker(['rm', running]);
      assert.notEqual(rm.code, 0, 'rm of a running container without -f is refused');
      // dockerd 28's words, naming the container as the client did (podman 4.3 has its own)
      if (kind === 'berth')
        assert.equal(
          rm.stderr.trim(),
          `Error response from daemon: cannot remove container "${running}": container is running: stop the container before removing or force remove`,
        );
      await ok(['rm', '-f', running]);
      const gone = await engine.docker(['inspect', running]);
      assert.notEqual(gone.code, 0);
      assert.match(gone.stderr, /no such (container|object)/i);
    });

    test('ps -l is the newest container in any state; top passes ps its options; a short run has start before die in events', async () => {
      const up = name('up');
      await ok(['run', '-d', '--name', up, BUSYBOX, 'sleep', '600']);
      const made = name('made');
      await ok(['create', '--name', made, BUSYBOX, 'true']);
      assert.equal((await ok(['ps', '-l', '--format', '{{.Names}}'])).trim(), made, 'ps -l lists a created container');
      assert.equal((await ok(['ps', '--format', '{{.Names}}', '--filter', `name=${made}`])).trim(), '', 'plain ps lists running ones only');
      const top = await ok(['top', up, '-o', 'pid,args']);
      assert.match(top.split('\n')[0], /PID\s+COMMAND/);
      assert.match(top, /sleep 600/);
      // podman 4.3 runs the image's ps (busybox's, which ignores -ef and aux); dockerd's columns are procps' and
      // hold the container's processes only, not the ps that read them
      if (kind === 'berth') {
        const rows = (out: string): string[][] =>
          out
            .trim()
            .split('\n')
            .map((l) => l.trim().split(/\s{2,}/));
        const full = rows(await ok(['top', up]));
        assert.deepEqual(full[0], ['UID', 'PID', 'PPID', 'C', 'STIME', 'TTY', 'TIME', 'CMD']);
        assert.deepEqual(
          full.slice(1).map((r) => [r[0], r[1], r[2], r[7]]),
          [['root', '1', '0', 'sleep 600']],
        );
        const aux = rows(await ok(['top', up, 'aux']));
        assert.deepEqual(aux[0], ['USER', 'PID', '%CPU', '%MEM', 'VSZ', 'RSS', 'TTY', 'STAT', 'START', 'TIME', 'COMMAND']);
        assert.deepEqual(
          aux.slice(1).map((r) => [r[1], r[7], r[10]]),
          [['1', 'Ss', 'sleep 600']],
        );
        const noPid = await engine.docker(['top', up, '-o', 'args']);
        assert.notEqual(noPid.code, 0);
        assert.match(noPid.stderr, /Couldn't find PID field in ps output/);
      }

      const since = Math.floor(Date.now() / 1000) - 1;
      const short = name('short');
      await ok(['run', '--name', short, BUSYBOX, 'true']);
      // podman writes its events log on its own schedule: under load they come a moment after the run; and it
      // answers an `until` already past with no events, so each reading ends a second from its start
      const actions = await eventually(
        "the run's events",
        async () => {
          const until = Math.floor(Date.now() / 1000) + 1;
          const events = await ok(['events', '--since', String(since), '--until', String(until), '--filter', `container=${short}`, '--format', '{{.Action}}']);
          const seen = events
            .trim()
            .split('\n')
            .filter((a) => ['create', 'start', 'die'].includes(a));
          if (seen.length < 3) throw new Error(`only ${JSON.stringify(seen)}`);
          return seen;
        },
        { timeoutMs: 10_000 },
      );
      assert.deepEqual(actions, ['create', 'start', 'die']);
    });

    test('cp into a created container (files there when it starts), into and out of a running one', async () => {
      writeFileSync(join(work, 'one.txt'), 'first file\n');
      mkdirSync(join(work, 'tree/sub'), { recursive: true });
      writeFileSync(join(work, 'tree/sub/two.txt'), 'second file\n');
      const c = name('cp');
      await ok(['create', '--name', c, BUSYBOX, 'sh', '-c', 'cat /data/one.txt /tree/sub/two.txt; sleep 600']);
      await ok(['cp', join(work, 'one.txt'), `${c}:/data/one.txt`]);
      await ok(['cp', `${join(work, 'tree')}/.`, `${c}:/tree`]);
      await ok(['start', c]);
      // `start` answers once the process runs, as dockerd's does, not once it has written: wait for its output
      await eventually('the log of the started container', async () => assert.equal(await ok(['logs', c]), 'first file\nsecond file\n') ?? true);
      await ok(['cp', join(work, 'one.txt'), `${c}:/tmp/late.txt`]);
      assert.equal(await ok(['exec', c, 'cat', '/tmp/late.txt']), 'first file\n');
      await ok(['exec', c, 'sh', '-c', 'mkdir -p /out && echo result > /out/r.txt']);
      await ok(['cp', `${c}:/out/r.txt`, join(work, 'r.txt')]);
      assert.equal(readFileSync(join(work, 'r.txt'), 'utf8'), 'result\n');
      await ok(['cp', `${c}:/out`, join(work, 'outdir')]);
      assert.equal(readFileSync(join(work, 'outdir/r.txt'), 'utf8'), 'result\n');
    });

    test('inspect and ps list the mounts: volumes by -v and --mount, anonymous ones, tmpfs by --mount', async () => {
      const [v, ro] = [`${prefix}-mvol`, `${prefix}-mro`];
      volumes.push(v, ro);
      const c = name('mounts');
      await ok([
        'run',
        '-d',
        '--name',
        c,
        '-v',
        `${v}:/data`,
        '-v',
        '/anon',
        '--mount',
        `type=volume,src=${ro},dst=/ro,readonly`,
        '--mount',
        'type=tmpfs,dst=/scratch',
        '--tmpfs',
        '/t',
        BUSYBOX,
        'sleep',
        '600',
      ]);
      type Mount = { Type: string; Name?: string; Source: string; Destination: string; Driver?: string; Mode: string; RW: boolean; Propagation: string };
      const mounts = (JSON.parse(await ok(['inspect', '-f', '{{json .Mounts}}', c])) as Mount[]).sort((a, b) => a.Destination.localeCompare(b.Destination));
      // podman 4.3 leaves out --mount's tmpfs, which dockerd lists
      const listedMounts = kind === 'podman' ? mounts : mounts.filter((m) => m.Type !== 'tmpfs');
      assert.deepEqual(
        listedMounts.map((m) => [m.Type, m.Destination, m.RW, m.Driver ?? '']),
        [
          ['volume', '/anon', true, 'local'],
          ['volume', '/data', true, 'local'],
          ['volume', '/ro', false, 'local'],
        ],
      );
      assert.deepEqual(
        mounts.slice(0, 3).map((m) => m.Name),
        [mounts[0].Name, v, ro],
      );
      assert.match(mounts[0].Name!, /^[0-9a-f]{64}$/);
      const listed = await ok(['ps', '-a', '--filter', `name=${c}`, '--format', '{{.LocalVolumes}}']);
      assert.equal(listed.trim(), '3');
      if (kind === 'podman') return;
      assert.deepEqual(
        mounts.map((m) => [m.Type, m.Destination, m.Name]).at(-1),
        ['tmpfs', '/scratch', undefined],
        'each mount but --tmpfs, which dockerd lists in HostConfig.Tmpfs only',
      );
      // podman 4.3 says rprivate and no mode for every volume; dockerd gives a -v volume the mode z, a propagation to binds only
      assert.deepEqual(
        mounts.map((m) => [m.Mode, m.Propagation]),
        [
          ['', ''],
          ['z', ''],
          ['', ''],
          ['', ''],
        ],
      );
      for (const m of mounts.slice(0, 3))
        assert.equal(m.Source, (await ok(['volume', 'inspect', '-f', '{{.Mountpoint}}', m.Name!])).trim(), 'where the volume is');
    });

    test('volume create: two containers see the same files', async () => {
      const v = `${prefix}-vol`;
      volumes.push(v);
      await ok(['volume', 'create', v]);
      await ok(['run', '--rm', '--name', name('vw'), '-v', `${v}:/data`, BUSYBOX, 'sh', '-c', 'echo shared > /data/x']);
      assert.equal(await ok(['run', '--rm', '--name', name('vr'), '-v', `${v}:/data`, BUSYBOX, 'cat', '/data/x']), 'shared\n');
      const list = await ok(['volume', 'ls', '-q']);
      assert.ok(list.split('\n').includes(v));
    });

    test('create makes its volumes, named and anonymous, before any start; a refused create makes none', async () => {
      const volumesNow = async (): Promise<string[]> => (await ok(['volume', 'ls', '-q'])).split('\n').filter(Boolean);
      const before = await volumesNow();
      const v = `${prefix}-at-create`;
      const never = `${prefix}-never-made`;
      volumes.push(v, never);
      const c = name('vc');
      await ok(['create', '--name', c, '-v', `${v}:/d`, '-v', '/anon', BUSYBOX, 'true']);
      const made = (await volumesNow()).filter((x) => !before.includes(x));
      assert.equal(made.length, 2, `docker volume ls right after create lists the named and the anonymous volume: ${made.join(', ')}`);
      assert.ok(made.includes(v), made.join(', '));
      assert.equal(await ok(['volume', 'inspect', '-f', '{{.Driver}} {{json .Labels}}', v]), 'local {}\n');
      // bad input (dockerd and podman refuse the tmpfs option at create) and a name in use change nothing
      const bad = await engine.docker(['create', '-v', `${never}:/d`, '--tmpfs', '/t:bogusopt=1', BUSYBOX, 'true']);
      assert.equal(bad.code, 1, bad.stderr);
      const taken = await engine.docker(['create', '--name', c, '-v', `${never}:/d`, BUSYBOX, 'true']);
      assert.equal(taken.code, 1, taken.stderr);
      assert.ok(!(await volumesNow()).includes(never), 'a refused create made its volume');
      await ok(['rm', '-v', c]);
      assert.deepEqual(
        (await volumesNow()).filter((x) => !before.includes(x)),
        [v],
        'rm -v removes the anonymous volume, the named one stays',
      );
    });

    test('-v /path: an anonymous volume, kept across a restart, removed by rm -v and by --rm', async () => {
      const volumesNow = async (): Promise<string[]> => (await ok(['volume', 'ls', '-q'])).split('\n').filter(Boolean);
      const before = await volumesNow();
      const once = await engine.docker([
        'run',
        '--rm',
        '--name',
        name('anon1'),
        '-v',
        '/scratch',
        BUSYBOX,
        'sh',
        '-c',
        'test -d /scratch && touch /scratch/x && echo made',
      ]);
      assert.equal(once.stdout, 'made\n', once.stderr);
      assert.deepEqual(await volumesNow(), before, '--rm removed the anonymous volume');
      // a volume mount without a source, as docker compose sends `volumes: [/cache]`, is one too; readonly is kept
      const mounted = await engine.docker([
        'run',
        '--rm',
        '--name',
        name('anon3'),
        '--mount',
        'type=volume,dst=/cache',
        '--mount',
        'type=volume,dst=/ro,readonly',
        BUSYBOX,
        'sh',
        '-c',
        'touch /cache/x && echo made; touch /ro/x 2>/dev/null || echo read-only',
      ]);
      assert.equal(mounted.stdout, 'made\nread-only\n', mounted.stderr);
      assert.deepEqual(await volumesNow(), before, '--rm removed both');
      const keep = name('anon2');
      await ok(['run', '-d', '--name', keep, '-v', '/data', BUSYBOX, 'sleep', '600']);
      await ok(['exec', keep, 'sh', '-c', 'echo kept > /data/f']);
      await ok(['restart', '-t', '1', keep]);
      assert.equal(await ok(['exec', keep, 'cat', '/data/f']), 'kept\n', 'the anonymous volume outlives a restart');
      const made = (await volumesNow()).filter((v) => !before.includes(v));
      assert.equal(made.length, 1, `one anonymous volume: ${made.join(', ')}`);
      assert.match(made[0], /^[0-9a-f]{64}$/);
      await ok(['rm', '-f', '-v', keep]);
      assert.deepEqual(await volumesNow(), before, 'rm -v removed it');
    });

    test('published port reachable on this machine at the HostPort inspect reports', async () => {
      const c = name('port');
      await ok(['run', '-d', '--name', c, '-p', '127.0.0.1::8080', BUSYBOX, 'sh', '-c', 'echo served > /tmp/index.html; exec httpd -f -p 8080 -h /tmp']);
      const port = (await ok(['inspect', '-f', '{{(index (index .NetworkSettings.Ports "8080/tcp") 0).HostPort}}', c])).trim();
      assert.match(port, /^\d+$/);
      // httpd may not listen yet
      const body = await eventually(
        'httpd serves the page',
        async () => {
          const b = await fetch(`http://127.0.0.1:${port}/index.html`).then(
            (r) => r.text(),
            () => '',
          );
          return b === 'served\n' && b;
        },
        { timeoutMs: 5_000 },
      );
      assert.equal(body, 'served\n');
    });

    test('network create with the bridge options compose files give (driver_opts): two containers talk by alias', async () => {
      const net = `${prefix}-net`;
      networks.push(net);
      const options = {
        'com.docker.network.bridge.name': `brs${process.pid}`,
        'com.docker.network.driver.mtu': '1450',
        'com.docker.network.bridge.enable_icc': 'true',
        'com.docker.network.bridge.enable_ip_masquerade': 'true',
      };
      await ok(['network', 'create', ...Object.entries(options).flatMap(([k, v]) => ['-o', `${k}=${v}`]), net]);
      // podman keeps only the options it maps (mtu); dockerd shows them all, as given
      if (kind === 'berth') assert.deepEqual(JSON.parse(await ok(['network', 'inspect', '-f', '{{json .Options}}', net])), options);
      await ok([
        'run',
        '-d',
        '--name',
        name('web'),
        '--network',
        net,
        '--network-alias',
        'webalias',
        BUSYBOX,
        'sh',
        '-c',
        'echo by-alias > /tmp/index.html; exec httpd -f -p 8080 -h /tmp',
      ]);
      const r = await engine.docker([
        'run',
        '--rm',
        '--name',
        name('client'),
        '--network',
        net,
        BUSYBOX,
        'sh',
        '-c',
        'for i in 1 2 3 4 5 6 7 8 9 10; do wget -q -O - http://webalias:8080/index.html && exit 0; sleep 0.3; done; exit 1',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'by-alias\n');
    });

    test('network connect of a running container: it reaches the members by alias, and they reach it by its new alias', async () => {
      const net = `${prefix}-late`;
      networks.push(net);
      await ok(['network', 'create', net]);
      await ok([
        'run',
        '-d',
        '--name',
        name('srv'),
        '--network',
        net,
        '--network-alias',
        'lateweb',
        BUSYBOX,
        'sh',
        '-c',
        'echo late > /tmp/index.html; exec httpd -f -p 8080 -h /tmp',
      ]);
      await ok(['run', '-d', '--name', name('joiner'), BUSYBOX, 'sh', '-c', 'echo joined > /tmp/index.html; exec httpd -f -p 8080 -h /tmp']);
      await ok(['network', 'connect', '--alias', 'joineralias', net, name('joiner')]);
      const fetch = (from: string, url: string) =>
        engine.docker(['exec', name(from), 'sh', '-c', `for i in 1 2 3 4 5 6 7 8 9 10; do wget -q -O - ${url} && exit 0; sleep 0.3; done; exit 1`]);
      const out = await fetch('joiner', 'http://lateweb:8080/index.html');
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, 'late\n');
      const back = await fetch('srv', 'http://joineralias:8080/index.html');
      assert.equal(back.code, 0, back.stderr);
      assert.equal(back.stdout, 'joined\n');

      // after a disconnect neither side finds the other by a name it had on the network
      await ok(['network', 'disconnect', net, name('joiner')]);
      const unresolved = (from: string, host: string) =>
        eventually(
          `${host} no longer resolves in ${from}`,
          async () => {
            const r = await engine.docker(['exec', name(from), 'wget', '-q', '-O', '-', `http://${host}:8080/index.html`]);
            return r.code !== 0 && /bad address/.test(r.stderr);
          },
          { timeoutMs: 10_000 },
        );
      await unresolved('srv', 'joineralias');
      await unresolved('srv', name('joiner'));
      await unresolved('joiner', 'lateweb');
      await unresolved('joiner', name('srv'));
    });

    test(
      'what a pod cannot have on a network is refused, not dropped: --ip, --mac-address, --domainname, --internal, --subnet, -d, -o enable_icc=false',
      { skip: kind === 'podman' && 'podman gives all of them' },
      async () => {
        const net = `${prefix}-nset`;
        networks.push(net);
        await ok(['network', 'create', net]);
        const c = name('nset');
        const refused = async (args: string[], words: RegExp): Promise<void> => {
          const r = await engine.docker(args);
          assert.notEqual(r.code, 0, `${args.join(' ')}: ${r.stdout}`);
          assert.match(r.stderr, words);
        };
        await refused(
          ['run', '--rm', '--name', c, '--network', net, '--ip', '10.99.0.5', BUSYBOX, 'true'],
          /IPAMConfig=.*\(--ip, --ip6, --link-local-ip\) is not supported: a pod's IP is chosen by the cluster's network plugin/,
        );
        await refused(['run', '--rm', '--name', c, '--mac-address', '02:42:ac:11:00:02', BUSYBOX, 'true'], /\(--mac-address\) is not supported/);
        await refused(['run', '--rm', '--name', c, '--domainname', 'example.com', BUSYBOX, 'true'], /Domainname=example.com \(--domainname\) is not supported/);
        assert.equal((await ok(['ps', '-a', '--filter', `name=${c}`, '--format', '{{.Names}}'])).trim(), '', 'no container was made');
        await ok(['run', '-d', '--name', c, BUSYBOX, 'sleep', '600']);
        await refused(['network', 'connect', '--ip', '10.99.0.6', net, c], /invalid endpoint settings for network .*--ip/);
        assert.equal((await ok(['inspect', '-f', `{{if index .NetworkSettings.Networks "${net}"}}on{{end}}`, c])).trim(), '', 'not connected');
        const others = `${prefix}-nbad`;
        await refused(
          ['network', 'create', '--internal', others],
          /an internal network \(--internal\) cannot be given: its members would still reach everything/,
        );
        await refused(['network', 'create', '--subnet', '10.99.0.0/24', others], /address configuration .* \(--subnet/);
        await refused(['network', 'create', '-d', 'macvlan', others], /driver "macvlan" \(-d\) cannot be given/);
        await refused(
          ['network', 'create', '-o', 'com.docker.network.bridge.enable_icc=false', others],
          /driver option com.docker.network.bridge.enable_icc=false \(-o\) cannot be given: .*containers always reach each other/,
        );
        await refused(
          ['network', 'create', '-o', 'com.docker.network.bridge.enable_icc=maybe', others],
          /failed to parse com.docker.network.bridge.enable_icc value: maybe/,
        );
        assert.equal((await ok(['network', 'ls', '--filter', `name=${others}`, '-q'])).trim(), '', 'no network was made');
      },
    );

    test(
      'run --platform puts the pod on a node of that platform; a platform that is none is refused',
      { skip: kind === 'podman' && 'podman 4.3 runs a local image whatever --platform says' },
      async () => {
        const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch as string] ?? process.arch;
        const c = name('platform');
        assert.equal((await ok(['run', '--name', c, '--platform', `linux/${arch}`, BUSYBOX, 'echo', 'ran'])).trim(), 'ran');
        const selector = await kubectlOk([
          '-n',
          namespace,
          'get',
          'pods',
          '-l',
          `berth.dev/container=${(await ok(['inspect', '-f', '{{.Id}}', c])).trim().slice(0, 12)}`,
          '-o',
          'jsonpath={.items[0].spec.nodeSelector}',
        ]);
        assert.deepEqual(JSON.parse(selector), { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': arch });
        const bad = await engine.docker(['run', '--rm', '--platform', 'darwin/arm64', BUSYBOX, 'true']);
        assert.notEqual(bad.code, 0);
        assert.match(bad.stderr, /"darwin\/arm64": unknown operating system "darwin": invalid argument/);
      },
    );

    // Prunes on podman would reach this machine's other containers and networks (the dev cluster's among them):
    // every prune here is held to the test's own label. podman 4.3 refuses in words of its own
    // (`bogus is an invalid filter`), berth in dockerd's.
    const namesOf = (out: string): string[] => out.split('\n').filter(Boolean).sort();
    const refusedFilter = (key: string): RegExp => (kind === 'berth' ? new RegExp(`invalid filter '${key}'`) : /invalid filter/);

    test('container prune: label! keeps what it names, until keeps what is newer; an unknown filter is refused and prunes nothing', async () => {
      const scope = `${prefix}-cprune`;
      const keep = name('pkeep');
      const drop = name('pdrop');
      const up = name('pup');
      await ok(['create', '--name', keep, '-l', scope, '-l', 'keep=yes', BUSYBOX, 'true']);
      await ok(['create', '--name', drop, '-l', scope, BUSYBOX, 'true']);
      await ok(['run', '-d', '--name', up, '-l', scope, BUSYBOX, 'sleep', '600']);
      const mine = async (): Promise<string[]> => namesOf(await ok(['ps', '-a', '--filter', `label=${scope}`, '--format', '{{.Names}}']));

      const refused = await engine.docker(['container', 'prune', '-f', '--filter', `label=${scope}`, '--filter', 'bogus=1']);
      assert.notEqual(refused.code, 0, refused.stdout);
      assert.match(refused.stderr, refusedFilter('bogus'));
      assert.deepEqual(await mine(), [drop, keep, up].sort(), 'a refused prune removes nothing');

      await ok(['container', 'prune', '-f', '--filter', `label=${scope}`, '--filter', 'until=1h']);
      assert.deepEqual(await mine(), [drop, keep, up].sort(), 'until=1h: all were made within the hour');

      await ok(['container', 'prune', '-f', '--filter', `label=${scope}`, '--filter', 'label!=keep=yes']);
      assert.deepEqual(await mine(), [keep, up].sort(), 'the stopped container without keep=yes went; the running one stays');
    });

    test('ps --filter volume= lists only the containers that mount it (by name or mount point); status=bogus is refused', async () => {
      const scope = `${prefix}-psvol`;
      const vol = `${prefix}-psvol`;
      volumes.push(vol);
      await ok(['volume', 'create', vol]);
      const user = name('voluser');
      await ok(['create', '--name', user, '-l', scope, '-v', `${vol}:/data`, BUSYBOX, 'true']);
      const other = name('novol');
      await ok(['create', '--name', other, '-l', scope, BUSYBOX, 'true']);
      assert.equal((await ok(['ps', '-a', '--filter', `volume=${vol}`, '--format', '{{.Names}}'])).trim(), user);
      // podman 4.3 does not find a container by its mount point (a known deviation of the reference)
      if (kind === 'berth')
        assert.equal((await ok(['ps', '-a', '--filter', 'volume=/data', '--filter', `label=${scope}`, '--format', '{{.Names}}'])).trim(), user);
      assert.equal((await ok(['ps', '-a', '--filter', `volume=${vol}-none`, '--format', '{{.Names}}'])).trim(), '', 'no container, not all of them');
      const bad = await engine.docker(['ps', '--filter', 'status=bogus']);
      assert.notEqual(bad.code, 0);
      if (kind === 'berth') assert.match(bad.stderr, /invalid filter 'status=bogus': invalid value for state \(bogus\): must be one of created, running/);
    });

    test(
      'ps --filter publish= (a host port) and expose= (a container port) of a running container',
      { skip: kind === 'podman' && 'podman 4.3 has no publish and expose filters' },
      async () => {
        const scope = `${prefix}-psport`;
        const c = name('psport');
        await ok(['run', '-d', '--name', c, '-l', scope, '-p', '127.0.0.1::8080', '--expose', '9090', BUSYBOX, 'sleep', '600']);
        const port = (await ok(['inspect', '-f', '{{(index (index .NetworkSettings.Ports "8080/tcp") 0).HostPort}}', c])).trim();
        const listed = async (filter: string): Promise<string> =>
          (await ok(['ps', '--filter', filter, '--filter', `label=${scope}`, '--format', '{{.Names}}'])).trim();
        assert.equal(await listed(`publish=${port}`), c);
        assert.equal(await listed(`publish=${port}/tcp`), c);
        assert.equal(await listed('expose=8080'), c);
        assert.equal(await listed('expose=9090/tcp'), c, 'exposed without a binding');
        assert.equal(await listed('expose=9091'), '');
        assert.equal(await listed('publish=8080'), '', 'publish is the host port');
      },
    );

    test(
      'volume prune keeps named volumes and removes a dangling anonymous one; --all takes named ones; unknown filters refused',
      { skip: kind === 'podman' && "a prune on this machine's podman would remove other users' volumes" },
      async () => {
        const volumesNow = async (): Promise<string[]> => namesOf(await ok(['volume', 'ls', '-q']));
        const scope = `${prefix}-vprune`;
        const named = `${prefix}-vkeep`;
        volumes.push(named);
        await ok(['volume', 'create', '--label', scope, named]);
        const before = await volumesNow();
        const anon = name('vanon');
        await ok(['run', '--name', anon, '-v', '/scratch', BUSYBOX, 'true']);
        const made = (await volumesNow()).filter((v) => !before.includes(v));
        assert.equal(made.length, 1, `one anonymous volume: ${made.join(', ')}`);
        await ok(['volume', 'prune', '-f']);
        assert.ok((await volumesNow()).includes(made[0]), 'a volume of an existing (exited) container stays');
        await ok(['rm', anon]); // without -v: the anonymous volume stays, used by no container
        assert.ok(namesOf(await ok(['volume', 'ls', '-q', '--filter', 'dangling=true'])).includes(made[0]));
        assert.ok(!namesOf(await ok(['volume', 'ls', '-q', '--filter', 'dangling=false'])).includes(made[0]));

        const refused = await engine.docker(['volume', 'prune', '-f', '--filter', 'bogus=1']);
        assert.notEqual(refused.code, 0);
        assert.match(refused.stderr, refusedFilter('bogus'));
        assert.ok((await volumesNow()).includes(made[0]), 'a refused prune removes nothing');

        await ok(['volume', 'prune', '-f']);
        const after = await volumesNow();
        assert.ok(!after.includes(made[0]), 'the anonymous volume is pruned');
        assert.ok(after.includes(named), 'a named volume is kept (API 1.42 and later)');
        await ok(['volume', 'prune', '-f', '--all', '--filter', `label=${scope}`]);
        assert.ok(!(await volumesNow()).includes(named), '--all prunes named volumes too');
      },
    );

    test(
      'volume create with a driver or driver options is refused saying why',
      { skip: kind === 'podman' && 'podman has local options (type=tmpfs) berth cannot give' },
      async () => {
        const driver = await engine.docker(['volume', 'create', '-d', 'nfs', `${prefix}-nfs`]);
        assert.notEqual(driver.code, 0);
        assert.match(driver.stderr, /volume driver "nfs" is not supported: berth's volumes are PersistentVolumeClaims of the cluster's default StorageClass/);
        const options = await engine.docker(['volume', 'create', '-o', 'type=tmpfs', `${prefix}-opt`]);
        assert.notEqual(options.code, 0);
        assert.match(options.stderr, /volume driver options are not supported \(type=tmpfs\)/);
        const list = namesOf(await ok(['volume', 'ls', '-q']));
        assert.ok(!list.includes(`${prefix}-nfs`) && !list.includes(`${prefix}-opt`), 'neither was made');
      },
    );

    test('network ls type and dangling; network prune: label! keeps what it names, an unknown filter is refused', async () => {
      const scope = `${prefix}-nprune`;
      const keepNet = `${prefix}-nkeep`;
      const dropNet = `${prefix}-ndrop`;
      networks.push(keepNet, dropNet);
      await ok(['network', 'create', '--label', scope, '--label', 'keep=yes', keepNet]);
      await ok(['network', 'create', '--label', scope, dropNet]);
      if (kind === 'berth') {
        // podman 4.3 has no type filter
        const custom = namesOf(await ok(['network', 'ls', '--filter', 'type=custom', '--format', '{{.Name}}']));
        assert.ok(custom.includes(keepNet) && !custom.includes('none'), custom.join(' '));
        assert.ok(namesOf(await ok(['network', 'ls', '--filter', 'type=builtin', '--format', '{{.Name}}'])).includes('none'));
        // podman 4.3's dangling filter reads every container of the machine, and fails when one goes meanwhile
        // (the dev cluster's sandboxes come and go): berth only
        assert.deepEqual(
          namesOf(await ok(['network', 'ls', '--filter', 'dangling=true', '--filter', `label=${scope}`, '--format', '{{.Name}}'])),
          [dropNet, keepNet].sort(),
        );
      }
      const mine = async (): Promise<string[]> => namesOf(await ok(['network', 'ls', '--filter', `label=${scope}`, '--format', '{{.Name}}']));

      const refused = await engine.docker(['network', 'prune', '-f', '--filter', `label=${scope}`, '--filter', 'bogus=1']);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, refusedFilter('bogus'));
      assert.deepEqual(await mine(), [dropNet, keepNet].sort(), 'a refused prune removes nothing');
      await ok(['network', 'prune', '-f', '--filter', `label=${scope}`, '--filter', 'label!=keep=yes']);
      assert.deepEqual(await mine(), [keepNet]);
    });

    const idsOf = (out: string): string[] => [...new Set(out.split('\n').filter(Boolean))];
    const imageIds = async (...filters: string[]): Promise<string[]> => idsOf(await ok(['images', '-q', ...filters.flatMap((f) => ['--filter', f])]));

    test('images --filter: reference patterns, dangling, label, before, since, until; unknown keys and unreadable values refused', async () => {
      const repo = `localhost/${prefix}-img`;
      const [a, b] = [`${repo}/a:1`, `${repo}/b:2`];
      images.push(a, b);
      await ok(['tag', BUSYBOX, a]);
      await ok(['tag', BUSYBOX, b]);
      const id = (await ok(['image', 'inspect', '-f', '{{.Id}}', BUSYBOX]))
        .trim()
        .replace(/^sha256:/, '')
        .slice(0, 12);
      assert.deepEqual(await imageIds(`reference=${repo}/*`), [id]);
      assert.deepEqual(await imageIds(`reference=${repo}-none/*`), [], 'no image, not all of them');
      assert.ok(!(await imageIds('dangling=true')).includes(id), 'a tagged image is not dangling');
      assert.ok((await imageIds('dangling=false')).includes(id));
      assert.deepEqual(await imageIds(`reference=${repo}/*`, `label=${prefix}-none`), []);
      assert.deepEqual(await imageIds(`reference=${repo}/*`, `since=${a}`), [], 'not made after itself');
      assert.deepEqual(await imageIds(`reference=${repo}/*`, `before=${a}`), []);
      assert.deepEqual(await imageIds(`reference=${repo}/*`, `until=${Math.floor(Date.now() / 1000) + 3600}`), [id]);
      // podman 4.3 refuses in words of its own
      const refusals: Array<[string, RegExp]> = [
        ['bogus=1', /invalid filter 'bogus'/],
        ['dangling=maybe', /invalid filter 'dangling=\[maybe\]'/],
        ['until=bogus', /invalid value for 'until' filter: failed to parse value as time or duration: "bogus"/],
        [`before=${prefix}-nosuch:1`, new RegExp(`No such image: ${prefix}-nosuch:1`)],
      ];
      for (const [filter, words] of refusals) {
        const r = await engine.docker(['images', '--filter', filter]);
        assert.notEqual(r.code, 0, `${filter}: ${r.stdout}`);
        if (kind === 'berth') assert.match(r.stderr, words);
      }
      // a client of API 1.24 sends the pattern as `filter`
      const legacy = await engine.request('GET', `/v1.24/images/json?filter=${encodeURIComponent(`${repo}/a:*`)}`);
      assert.equal(legacy.status, 200, legacy.body);
      const listed = JSON.parse(legacy.body) as Array<{ Id: string; RepoTags: string[] }>;
      assert.deepEqual(idsOf(listed.map((i) => i.Id.replace(/^sha256:/, '').slice(0, 12)).join('\n')), [id]);
      if (kind === 'podman') return;
      assert.deepEqual(
        listed.flatMap((i) => i.RepoTags),
        [a],
      );
      // podman 4.3 lists every name of an image one of whose names matches (dockerd lists the names that match),
      // and lists nothing for a malformed pattern (dockerd refuses it)
      const tags = async (pattern: string): Promise<string[]> =>
        namesOf(await ok(['images', '--filter', `reference=${pattern}`, '--format', '{{.Repository}}:{{.Tag}}']));
      assert.deepEqual(await tags(`${repo}/*`), [a, b]);
      assert.deepEqual(await tags(`${repo}/a:*`), [a]);
      assert.deepEqual(await tags(`${repo}/?:2`), [b]);
      const malformed = await engine.docker(['images', '--filter', `reference=${repo}/[a`]);
      assert.notEqual(malformed.code, 0);
      assert.match(malformed.stderr, /invalid filter 'reference=.*\/\[a': syntax error in pattern/);
    });

    test(
      'commit of a changed container, with --change: a container of the committed image has its file and the change',
      { skip: kind === 'podman' && "podman 4.3's compat API answers the docker CLI's commit with 'Decode(): EOF'" },
      async () => {
        const c = name('tocommit');
        const image = `localhost/${prefix}-committed:1`;
        images.push(image);
        await ok(['run', '-d', '--name', c, BUSYBOX, 'sh', '-c', 'echo committed > /made; exec sleep 600']);
        for (let i = 0; (await engine.docker(['exec', c, 'cat', '/made'])).code !== 0; i++) assert.ok(i < 100, 'the file was never made');
        const id = (await ok(['commit', '--change', 'ENV FROM_COMMIT=yes', c, image])).trim();
        assert.match(id, /^sha256:[0-9a-f]{64}$/);
        assert.equal((await ok(['image', 'inspect', '-f', '{{.Id}}', image])).trim(), id);
        const run = await engine.docker(['run', '--rm', image, 'sh', '-c', 'cat /made; echo "$FROM_COMMIT"']);
        assert.deepEqual([run.code, run.stdout], [0, 'committed\nyes\n'], run.stderr);
        const bad = await engine.docker(['commit', '--change', 'RUN make', c, `${image}-bad`]);
        assert.notEqual(bad.code, 0);
        if (kind === 'berth') assert.match(bad.stderr, /RUN is not a valid change command/);
      },
    );

    test(
      'images --filter dangling=true is an image with no tag (pulled by digest): rmi $(docker images -qf dangling=true) removes it and nothing else',
      { skip: kind === 'podman' && 'podman 4.3 can make no nameless image here: no registry to pull a digest from, and commit through its compat API fails' },
      async () => {
        const pinned = `localhost/${prefix}-pin/app@sha256:${'e'.repeat(64)}`;
        await ok(['pull', pinned]);
        const dangling = await imageIds('dangling=true');
        assert.equal(dangling.length, 1, dangling.join(' '));
        assert.equal((await ok(['images', '--filter', 'dangling=true', '--format', '{{.Repository}} {{.Tag}}'])).trim(), `localhost/${prefix}-pin/app <none>`);
        assert.deepEqual(await imageIds('dangling=true', `since=${BUSYBOX}`), dangling, 'pulled after busybox');
        assert.deepEqual(await imageIds('dangling=true', `before=${BUSYBOX}`), []);
        const everything = await imageIds();
        await ok(['rmi', ...dangling]);
        assert.deepEqual(await imageIds('dangling=true'), []);
        assert.deepEqual(
          await imageIds(),
          everything.filter((i) => !dangling.includes(i)),
          'only the dangling image went',
        );
      },
    );

    test("events --filter: label and container; image, volume, event, scope, a name's beginning, and unknown keys as dockerd has them", async () => {
      const scope = `${prefix}-evf`;
      const vol = `${prefix}-evvol`;
      volumes.push(vol);
      const since = Math.floor(Date.now() / 1000) - 1;
      await ok(['volume', 'create', vol]);
      const c = name('evf');
      await ok(['run', '--name', c, '-l', `${scope}=yes`, BUSYBOX, 'true']);
      // podman answers an `until` already past with no events: each reading ends a second from its start
      const seen = async (...filters: string[]): Promise<string[]> => {
        const out = await ok([
          'events',
          '--since',
          String(since),
          '--until',
          String(Math.floor(Date.now() / 1000) + 1),
          ...filters.flatMap((f) => ['--filter', f]),
          '--format',
          '{{.Type}} {{.Action}} {{.Actor.Attributes.name}}',
        ]);
        return out.split('\n').filter((line) => / (create|start|die) /.test(`${line} `));
      };
      const run = ['container create', 'container start', 'container die'].map((e) => `${e} ${c}`);
      // podman writes its events log on its own schedule: under load they come a moment after the run
      assert.deepEqual(
        await eventually(
          "the run's events by its label",
          async () => {
            const got = await seen(`label=${scope}=yes`);
            if (got.length < 3) throw new Error(`only ${JSON.stringify(got)}`);
            return got;
          },
          { timeoutMs: 10_000 },
        ),
        run,
      );
      assert.deepEqual(await seen(`container=${c}`), run);
      assert.deepEqual(await seen(`label=${scope}=no`), []);
      if (kind === 'podman') return;
      // podman 4.3 matches no container event by its image, no volume event by the volume, not `die`, not a
      // name's beginning, and answers an unknown key with no events where dockerd shows every event
      assert.deepEqual(await seen(`container=${c.slice(0, -1)}`, `label=${scope}`), run, 'the beginning of a name');
      assert.deepEqual(await seen(`image=${BUSYBOX.replace(/:[^/]*$/, '')}`, `label=${scope}`), run, 'the image without its tag');
      assert.deepEqual(await seen(`volume=${vol}`), [`volume create ${vol}`]);
      assert.deepEqual(await seen('type=volume', `volume=${vol}`), [`volume create ${vol}`]);
      assert.deepEqual(await seen('event=die', `container=${c}`), [`container die ${c}`]);
      assert.deepEqual(await seen('scope=swarm', `container=${c}`), []);
      const bogus = await engine.docker(['events', '--since', String(since), '--until', String(since + 1), '--filter', 'bogus=1']);
      assert.notEqual(bogus.code, 0);
      assert.match(bogus.stderr, /invalid filter 'bogus'/);
      // since and until as dockerd reads them (podman 4.3 answers neither an until alone nor since after until)
      const upToNow = await ok(['events', '--until', String(Math.floor(Date.now() / 1000) + 1), '--filter', `container=${c}`, '--format', '{{.Action}}']);
      assert.deepEqual(
        upToNow.split('\n').filter((a) => ['create', 'start', 'die'].includes(a)),
        ['create', 'start', 'die'],
        'an until alone replays the kept events up to it',
      );
      const reversed = await engine.docker(['events', '--since', String(since + 10), '--until', String(since)]);
      assert.notEqual(reversed.code, 0);
      assert.match(reversed.stderr, new RegExp(`\`since\` time \\(${since + 10}\\) cannot be after \`until\` time \\(${since}\\)`));
      const unreadable = await engine.request('GET', '/events?since=1.5x');
      assert.equal(unreadable.status, 400);
      assert.equal(JSON.parse(unreadable.body).message, 'invalid timestamp "1.5x": invalid nanoseconds: invalid character \'x\' at position 1');
    });
  });
}
