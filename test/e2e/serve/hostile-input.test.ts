// Hostile input against a real berth serve: truncated and malicious tars, gzip bombs, wrong-typed JSON on every
// POST route with a body, bad %-escapes, parallel starts, pathological filters, bodies that stop arriving, and
// listeners that are not what they claim. After each: berth still answers (/_ping and `docker ps`), every client
// error was a 4xx with Docker's {"message"} body, its RSS stayed bounded (peak printed), and no pod is left.
// (bad-input.test.ts covers the plain cases: malformed JSON, oversize JSON, unknown ids, ../ entries.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { BUSYBOX, berthCli, freshNamespace, kubeconfigPath, kubectlOk } from '../harness/cluster.js';
import { type DockerEngine, berthLeftovers, startBerth, stopAndCheckLeftovers } from './serve-env.js';
import { tarOf } from '../../util/tar.js';

const BODY_TIMEOUT_SECONDS = 3;
/** berth's limit on archives, before and after inflation (DEFAULT_MAX_ARCHIVE_BYTES). */
const ARCHIVE_LIMIT = 256 * 1024 * 1024;

/** A tar header that declares `size` bytes of content (under 8 GiB: the octal size field's limit), checksum recomputed. */
async function headerDeclaring(name: string, size: number): Promise<Buffer> {
  const header = Buffer.from((await tarOf([{ name, content: 'x' }])).subarray(0, 512));
  header.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 12, 'ascii');
  header.fill(' ', 148, 156);
  let sum = 0;
  for (const b of header) sum += b;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return header;
}

/**
 * `copies` gzip members, each `memberMiB` MiB of `block` repeated, concatenated (gzip allows that and
 * gunzip reads them all): a few MB on the wire, many GB once inflated.
 */
function gzipBomb(memberMiB: number, copies: number, prefix: Buffer = Buffer.alloc(0)): Buffer {
  const member = gzipSync(Buffer.alloc(memberMiB << 20), { level: 9 });
  const parts = prefix.length ? [gzipSync(prefix)] : [];
  for (let i = 0; i < copies; i++) parts.push(member);
  return Buffer.concat(parts);
}

const message = (body: string): string => {
  const parsed = JSON.parse(body) as { message?: unknown };
  assert.equal(typeof parsed.message, 'string', `Docker's error body: ${body}`);
  return parsed.message as string;
};

/** The pid of the berth serve listening on `socket` (its command line names the socket). */
function pidServing(socket: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmdline.includes('serve') && cmdline.includes(`unix://${socket}`)) return Number(entry);
    } catch {
      /* gone meanwhile */
    }
  }
  throw new Error(`no berth serve process for ${socket}`);
}

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, 'VmRSS in /proc/PID/status');
  return Number(m[1]) * 1024;
}

/** Raw bytes to the socket; resolves with everything the server sent once it closes (or after `waitMs`). */
function rawExchange(socket: string, send: (s: net.Socket) => void, waitMs: number): Promise<{ text: string; closedByServer: boolean; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const s = net.connect(socket);
    let text = '';
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ text, closedByServer: false, ms: Date.now() - started });
    }, waitMs);
    s.on('data', (d: Buffer) => (text += d.toString('latin1')));
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closedByServer: true, ms: Date.now() - started });
    });
    s.on('error', reject);
    s.on('connect', () => send(s));
  });
}

const statusOf = (raw: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
const bodyOf = (raw: string): string => raw.slice(raw.indexOf('\r\n\r\n') + 4);

describe('berth serve: hostile input', () => {
  let engine: DockerEngine;
  let namespace = '';
  const instance = `hostile${process.pid}`;
  let pid = 0;
  let baselineRss = 0;
  let peakRss = 0;
  let target = '';
  const clientErrors: Array<{ what: string; status: number }> = [];
  let work = '';

  const sampleRss = (): number => {
    const rss = rssBytes(pid);
    peakRss = Math.max(peakRss, rss);
    return rss;
  };

  /** Samples RSS every 50 ms while `run` runs (the peak of a bomb is during the request, not after it). */
  async function watchingRss<T>(run: () => Promise<T>): Promise<T> {
    const timer = setInterval(sampleRss, 50);
    try {
      return await run();
    } finally {
      clearInterval(timer);
      sampleRss();
    }
  }

  /** A client error: 4xx and Docker's body. */
  async function expect4xx(
    what: string,
    method: string,
    path: string,
    body?: string | Buffer,
    headers?: Record<string, string>,
  ): Promise<{ status: number; message: string }> {
    const r = await engine.request(method, path, body, headers);
    clientErrors.push({ what, status: r.status });
    assert.ok(r.status >= 400 && r.status < 500, `${what}: ${method} ${path} answered ${r.status}: ${r.body}`);
    return { status: r.status, message: message(r.body) };
  }

  /** The server keeps serving: /_ping, the docker CLI, and a bounded RSS. */
  async function stillServing(): Promise<void> {
    const ping = await engine.request('GET', '/_ping');
    assert.equal(ping.status, 200);
    assert.equal(ping.body, 'OK');
    await engine.dockerOk(['ps', '-a']);
    const rss = sampleRss();
    assert.ok(
      rss < baselineRss + 768 * 1024 * 1024,
      `berth serve's RSS is ${Math.round(rss / 1048576)} MiB (baseline ${Math.round(baselineRss / 1048576)} MiB)`,
    );
  }

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'berth-hostile-'));
    namespace = await freshNamespace('serve-hostile');
    engine = await startBerth(namespace, instance, { extra: ['--body-timeout', String(BODY_TIMEOUT_SECONDS)] });
    pid = pidServing(engine.socket);
    await engine.dockerOk(['pull', BUSYBOX]);
    target = (await engine.dockerOk(['run', '-d', '--name', 'target', BUSYBOX, 'sleep', '600'])).trim();
    baselineRss = sampleRss();
  });

  after(async () => {
    process.stdout.write(
      `# berth serve RSS: baseline ${Math.round(baselineRss / 1048576)} MiB, peak ${Math.round(peakRss / 1048576)} MiB; ` +
        `${clientErrors.length} client errors, statuses ${[...new Set(clientErrors.map((e) => e.status))].sort().join(',')}\n`,
    );
    await engine.dockerOk(['rm', '-f', 'target']).catch(() => undefined);
    const pods = await kubectlOk(['-n', namespace, 'get', 'pods', '-l', `berth.dev/owner=${instance}`, '-o', 'name']);
    assert.equal(pods.trim(), '', 'no pod left in the namespace after removal, before berth stops');
    await stopAndCheckLeftovers(engine, namespace, instance, work);
  });

  test('truncated tars (docker cp and raw PUT) are 400 and berth keeps serving', async () => {
    const whole = await tarOf([
      { name: 'part-1.txt', content: 'first' },
      { name: 'big.bin', content: Buffer.alloc(200_000, 7) },
    ]);
    const truncated = whole.subarray(0, 40_000);
    const cp = await engine.docker(['cp', '-', 'target:/tmp'], { input: truncated });
    assert.notEqual(cp.code, 0, 'docker cp of a truncated tar fails');
    assert.match(cp.stderr, /not a valid tar archive|Unexpected end of data/);
    await stillServing();
    const put = await expect4xx('truncated tar', 'PUT', `/containers/${target}/archive?path=/tmp`, truncated, { 'Content-Type': 'application/x-tar' });
    assert.equal(put.status, 400);
    const gz = await expect4xx('truncated gzip', 'PUT', `/containers/${target}/archive?path=/tmp`, gzipSync(whole).subarray(0, 300), {
      'Content-Type': 'application/x-tar',
    });
    assert.equal(gz.status, 400);
    assert.match(gz.message, /not valid gzip/);
    // nothing half-extracted: the whole first entry of the truncated archive is not there
    assert.equal((await engine.request('HEAD', `/containers/${target}/archive?path=/tmp/part-1.txt`)).status, 404);
    await stillServing();
  });

  test('malicious tars: traversal, escaping links and huge declared sizes are refused whole; absolute names stay inside', async () => {
    const put = (tar: Buffer, path = '/tmp'): Promise<{ status: number; message: string }> =>
      expect4xx('malicious tar', 'PUT', `/containers/${target}/archive?path=${encodeURIComponent(path)}`, tar, { 'Content-Type': 'application/x-tar' });
    assert.match(
      (
        await put(
          await tarOf([
            { name: 'fine.txt', content: 'ok' },
            { name: 'a/../../../etc/evil', content: 'x' },
          ]),
        )
      ).message,
      /outside the destination/,
    );
    assert.match((await put(await tarOf([{ name: 'up', type: 'symlink', linkname: '../../../../etc' }]))).message, /points outside the destination/);
    assert.match(
      (
        await put(
          await tarOf([
            { name: 'root', type: 'symlink', linkname: '/' },
            { name: 'root/etc/evil', content: 'x' },
          ]),
        )
      ).message,
      /through the link/,
    );
    const huge = Buffer.concat([await headerDeclaring('huge.bin', 7 * 1024 ** 3), Buffer.alloc(4096)]);
    const h = await put(huge);
    assert.equal(h.status, 400, h.message);
    assert.equal((await engine.request('HEAD', `/containers/${target}/archive?path=/tmp/fine.txt`)).status, 404, 'nothing of a refused archive landed');
    // Docker's rule: absolute entry names are taken relative to the destination
    await engine.dockerOk(['exec', 'target', 'mkdir', '-p', '/tmp/dest']);
    const abs = await engine.request('PUT', `/containers/${target}/archive?path=/tmp/dest`, await tarOf([{ name: '/abs-evil.txt', content: 'inside' }]), {
      'Content-Type': 'application/x-tar',
    });
    assert.equal(abs.status, 200, abs.body);
    assert.equal(await engine.dockerOk(['exec', 'target', 'cat', '/tmp/dest/abs-evil.txt']), 'inside');
    assert.equal((await engine.docker(['exec', 'target', 'test', '-e', '/abs-evil.txt'])).code, 1, 'not written at the root');
    await stillServing();
  });

  test('gzip bombs: refused once the inflated bytes pass the limit, and the RSS does not follow', async () => {
    // zeros: 4 MiB on the wire, 4 GiB inflated
    const zeros = gzipBomb(64, 64);
    assert.ok(zeros.length < 8 << 20, `the bomb is ${zeros.length} bytes`);
    const cp = await watchingRss(() => engine.docker(['cp', '-', 'target:/tmp'], { input: zeros }));
    assert.notEqual(cp.code, 0);
    assert.match(cp.stderr, /once inflated is larger than/);
    await stillServing();
    // one tar entry that declares 7 GiB and inflates from zeros: the re-packed bytes are what berth holds
    const entry = gzipBomb(64, 64, await headerDeclaring('bomb.bin', 7 * 1024 ** 3));
    const r = await watchingRss(() => expect4xx('gzip bomb', 'PUT', `/containers/${target}/archive?path=/tmp`, entry, { 'Content-Type': 'application/x-tar' }));
    assert.equal(r.status, 413);
    assert.match(r.message, new RegExp(`once inflated is larger than ${ARCHIVE_LIMIT} bytes`));
    await stillServing();
    assert.equal((await engine.request('HEAD', `/containers/${target}/archive?path=/tmp/bomb.bin`)).status, 404);
  });

  test('wrong-typed JSON on every POST route with a body is a 400 naming the field', async () => {
    const exec = await engine.request('POST', `/containers/${target}/exec`, JSON.stringify({ Cmd: ['true'] }));
    assert.equal(exec.status, 201, exec.body);
    const execId = (JSON.parse(exec.body) as { Id: string }).Id;
    await engine.dockerOk(['network', 'create', 'hostile-net']);
    const cases: Array<[string, string, unknown, RegExp]> = [
      ['/containers/create', 'create', { Image: 5 }, /Image must be a string/],
      ['/containers/create', 'create', { Image: BUSYBOX, Env: 'A=1' }, /Env must be an array/],
      ['/containers/create', 'create', { Image: BUSYBOX, Cmd: { sh: 1 } }, /Cmd/],
      ['/containers/create', 'create', { Image: BUSYBOX, HostConfig: { Memory: '1g' } }, /HostConfig\.Memory must be an integer/],
      [
        '/containers/create',
        'create',
        { Image: BUSYBOX, HostConfig: { PortBindings: { '80/tcp': [{ HostPort: 8080 }] } } },
        /HostConfig\.PortBindings\.80\/tcp\[0\]\.HostPort must be a string/,
      ],
      ['/containers/create', 'create', { Image: BUSYBOX, Labels: { a: true } }, /Labels\.a must be a string/],
      ['/containers/create', 'create', { Image: BUSYBOX, NetworkingConfig: { EndpointsConfig: { 'hostile-net': { Aliases: 'db' } } } }, /Aliases/],
      ['/containers/create', 'create', [BUSYBOX], /must be an object/],
      [`/containers/${target}/exec`, 'exec', { Cmd: 42 }, /Cmd/],
      [`/containers/${target}/exec`, 'exec', { Cmd: ['true'], Env: [1] }, /Env\[0\] must be a string/],
      [`/exec/${execId}/start`, 'exec start', { Detach: 'yes' }, /Detach must be a boolean/],
      ['/networks/create', 'network create', { Name: 7 }, /Name must be a string/],
      ['/networks/hostile-net/connect', 'network connect', { Container: ['target'] }, /Container must be a string/],
      ['/networks/hostile-net/disconnect', 'network disconnect', { Container: 'target', Force: 'no' }, /Force must be a boolean/],
      ['/volumes/create', 'volume create', { Name: 'v', Labels: 'x=y' }, /Labels must be an object/],
    ];
    for (const [path, what, body, pattern] of cases) {
      const r = await expect4xx(`wrong type: ${what}`, 'POST', path, JSON.stringify(body));
      assert.equal(r.status, 400, `${what} ${JSON.stringify(body)}: ${r.message}`);
      assert.match(r.message, pattern);
    }
    // values that would only fail at start are refused at create, through the CLI as a user meets them
    for (const [args, pattern] of [
      [['--memory', '1k'], /Minimum memory limit allowed is 6MB/],
      [['-e', '=nameless'], /invalid environment variable/],
      [['-w', 'relative/dir'], /needs to be an absolute path/],
      [['--hostname', 'not_a_label'], /invalid hostname/],
    ] as Array<[string[], RegExp]>) {
      const r = await engine.docker(['create', ...args, BUSYBOX, 'true']);
      assert.notEqual(r.code, 0, `docker create ${args.join(' ')} must fail`);
      assert.match(r.stderr, pattern);
    }
    for (const [what, body, pattern] of [
      ['memory', { Image: BUSYBOX, HostConfig: { Memory: -5 } }, /Memory/],
      ['cpus', { Image: BUSYBOX, HostConfig: { NanoCpus: 5 } }, /NanoCpus/],
      ['port', { Image: BUSYBOX, ExposedPorts: { '99999/tcp': {} } }, /invalid port specification/],
      ['host port', { Image: BUSYBOX, HostConfig: { PortBindings: { '80/tcp': [{ HostPort: 'eighty' }] } } }, /invalid hostPort/],
    ] as Array<[string, unknown, RegExp]>) {
      const r = await expect4xx(`bad value: ${what}`, 'POST', '/containers/create', JSON.stringify(body));
      assert.equal(r.status, 400);
      assert.match(r.message, pattern);
    }
    const listed = JSON.parse((await engine.request('GET', '/containers/json?all=1')).body) as unknown[];
    assert.equal(listed.length, 1, 'nothing was created by the refused requests');
    await engine.dockerOk(['network', 'rm', 'hostile-net']);
    await stillServing();
  });

  test('bad %-escapes, bad URLs and wrong-typed parameters are 400', async () => {
    for (const path of ['/containers/%zz/json', '/containers/%E0%A4%A/json', '/v1.44/containers/%/start', '/images/%C0%AF/json', '/volumes/%ff']) {
      const method = path.endsWith('/start') ? 'POST' : path.startsWith('/volumes') ? 'DELETE' : 'GET';
      assert.equal((await expect4xx('bad escape', method, path)).status, 400, path);
    }
    const bad: Array<[string, string, RegExp]> = [
      ['POST', `/containers/${target}/stop?t=soon`, /invalid value for t/],
      ['POST', `/containers/${target}/restart?t=1.5`, /invalid value for t/],
      ['POST', `/containers/${target}/kill?signal=NOPE`, /Invalid signal: NOPE/],
      ['POST', `/containers/${target}/stop?signal=SIGNOPE`, /Invalid signal/],
      ['GET', '/containers/json?limit=ten', /invalid value for limit/],
      ['GET', `/containers/${target}/logs?stdout=1&tail=ten`, /invalid value for tail/],
      [
        'GET',
        `/containers/${target}/logs?stdout=1&since=yesterday`,
        /invalid value for "since": invalid timestamp "yesterday": invalid seconds "yesterday": invalid syntax/,
      ],
      [
        'GET',
        `/containers/${target}/logs?stdout=1&until=1.5x`,
        /invalid value for "until": invalid timestamp "1.5x": invalid nanoseconds: invalid character 'x' at position 1/,
      ],
      ['POST', `/containers/${target}/resize?h=tall&w=80`, /invalid value for h/],
      ['GET', '/events?until=tomorrow', /^invalid timestamp "tomorrow": invalid seconds "tomorrow": invalid syntax$/],
      ['GET', '/events?since=1e3', /^invalid timestamp "1e3": invalid seconds "1e3": invalid syntax$/],
      ['GET', '/events?since=10&until=3', /^`since` time \(10\) cannot be after `until` time \(3\)$/],
      ['GET', '/containers/json?filters=%7B%22name%22%3A%5B5%5D%7D', /invalid filter name/],
      ['GET', '/containers/json?filters=%5B1%5D', /invalid filters/],
      ['GET', '/containers/json?filters=%7Bnope', /invalid filters/],
    ];
    for (const [method, path, pattern] of bad) {
      const r = await expect4xx('bad parameter', method, path);
      assert.equal(r.status, 400, path);
      assert.match(r.message, pattern);
    }
    const kill = await engine.docker(['kill', '--signal', 'NOPE', 'target']);
    assert.notEqual(kill.code, 0);
    assert.match(kill.stderr, /Invalid signal: NOPE/);
    assert.equal((await engine.dockerOk(['inspect', '-f', '{{.State.Running}}', 'target'])).trim(), 'true', 'a refused kill kills nothing');
    // an absolute-form request URL that cannot be parsed
    const raw = await rawExchange(engine.socket, (s) => s.write('GET http://[bad/_ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), 5000);
    assert.ok(statusOf(raw.text) >= 400 && statusOf(raw.text) < 500, raw.text);
    await stillServing();
  });

  test('pathological name filters: linear time, or a 400', async () => {
    const longName = `${'a'.repeat(60)}`;
    await engine.dockerOk(['create', '--name', longName, BUSYBOX, 'true']);
    const started = Date.now();
    const ps = await engine.docker(['ps', '-a', '--filter', 'name=^/(a+)+$', '--format', '{{.Names}}']);
    const ms = Date.now() - started;
    assert.equal(ps.code, 0, ps.stderr);
    assert.equal(ps.stdout.trim(), longName);
    const miss = await engine.docker(['ps', '-a', '--filter', 'name=^/(a+)+b$', '--format', '{{.Names}}']);
    assert.equal(miss.stdout.trim(), '');
    assert.ok(Date.now() - started < 10_000, `two catastrophic patterns over a 60-character name took ${Date.now() - started} ms (first ${ms} ms)`);
    for (const pattern of ['(a)\\1', 'a(?=b)', '(unclosed', 'x'.repeat(2000)]) {
      const r = await engine.docker(['ps', '-a', '--filter', `name=${pattern}`]);
      assert.notEqual(r.code, 0, pattern);
      assert.match(r.stderr, /invalid filter/);
    }
    await engine.dockerOk(['rm', longName]);
    await stillServing();
  });

  test('bodies that stop arriving are answered 408 and the server keeps serving meanwhile', async () => {
    const createStall = rawExchange(
      engine.socket,
      (s) =>
        s.write(
          `POST /v1.44/containers/create HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{"Image": "${BUSYBOX}", "Cmd": ["sle`,
        ),
      BODY_TIMEOUT_SECONDS * 1000 + 15_000,
    );
    const firstHalf = (await tarOf([{ name: 'stalled.txt', content: 'x'.repeat(3000) }])).subarray(0, 2048);
    const archiveStall = rawExchange(
      engine.socket,
      (s) =>
        s.write(
          Buffer.concat([
            Buffer.from(
              `PUT /v1.44/containers/${target}/archive?path=/tmp HTTP/1.1\r\nHost: docker\r\nContent-Type: application/x-tar\r\nContent-Length: 20480\r\n\r\n`,
            ),
            firstHalf,
          ]),
        ),
      BODY_TIMEOUT_SECONDS * 1000 + 15_000,
    );
    // a route that never reads its body: answered, and the connection does not wait for the rest
    const ignoredStall = rawExchange(
      engine.socket,
      (s) => s.write('POST /v1.44/containers/nope/start HTTP/1.1\r\nHost: docker\r\nContent-Length: 1000\r\n\r\n{"a":'),
      BODY_TIMEOUT_SECONDS * 1000 + 15_000,
    );
    await stillServing(); // while three clients stall
    for (const [what, pending, status] of [
      ['create', createStall, 408],
      ['archive', archiveStall, 408],
      ['unread body', ignoredStall, 404],
    ] as Array<[string, typeof createStall, number]>) {
      const r = await pending;
      clientErrors.push({ what: `stalled ${what}`, status: statusOf(r.text) });
      assert.equal(statusOf(r.text), status, `${what}: ${r.text}`);
      message(bodyOf(r.text));
      assert.ok(r.closedByServer, `${what}: the server closed the connection (after ${r.ms} ms)`);
    }
    assert.equal((await engine.request('HEAD', `/containers/${target}/archive?path=/tmp/stalled.txt`)).status, 404);
    await stillServing();
  });

  test('10 parallel starts of one container: berth keeps serving', async () => {
    const id = (await engine.dockerOk(['create', '--name', 'racer', BUSYBOX, 'sleep', '600'])).trim();
    const answers = await Promise.all(Array.from({ length: 10 }, () => engine.request('POST', `/containers/${id}/start`)));
    for (const a of answers) assert.ok(a.status < 500 || a.body.includes('message'), `start answered ${a.status}: ${a.body}`);
    assert.ok(
      answers.some((a) => a.status === 204),
      answers.map((a) => a.status).join(','),
    );
    await stillServing();
    await engine.dockerOk(['rm', '-f', 'racer']);
    await stillServing();
  });

  test('listeners: a live socket, a file and a short token are refused; nothing is deleted', async () => {
    const serve = (args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; stderr: string }> =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [berthCli, 'serve', '--kubeconfig', kubeconfigPath(), '-n', namespace, '--instance', `${instance}x`, ...args], {
          stdio: ['ignore', 'ignore', 'pipe'],
          env,
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, stderr });
        });
      });
    const second = await serve(['-H', `unix://${engine.socket}`]);
    assert.notEqual(second.code, 0);
    assert.match(second.stderr, /another server is listening on this socket/);
    await stillServing(); // the first one's socket is still there and answers
    const file = join(work, 'precious.txt');
    writeFileSync(file, 'keep me');
    const onFile = await serve(['-H', `unix://${file}`]);
    assert.notEqual(onFile.code, 0);
    assert.match(onFile.stderr, /not a socket; berth never deletes it/);
    assert.equal(readFileSync(file, 'utf8'), 'keep me');
    const short = await serve(['-H', 'tcp://127.0.0.1:0', '--token', 'x']);
    assert.notEqual(short.code, 0);
    assert.match(short.stderr, /at least 16 are needed/);
    const shortEnv = await serve(['-H', 'tcp://127.0.0.1:0'], { ...process.env, BERTH_SERVE_TOKEN: 'short' });
    assert.match(shortEnv.stderr, /\$BERTH_SERVE_TOKEN: the token has 5 characters/);
    assert.deepEqual(await berthLeftovers(namespace, `${instance}x`), []);
  });
});
