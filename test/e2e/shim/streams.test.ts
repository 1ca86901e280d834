// `docker run -i` through berth's shim against podman: a 10 MiB ResourceList round-trips intact, stdout
// and stderr stay apart, exit codes 0, 1 and 42 pass through; no output is lost, with or without -i.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { underFaults } from '../reliability/fault-kit.js';
import { servesSplitLogs } from '../harness/cluster.js';
import { bothRuntimes, setUpShim, type ShimEnv } from './shim-env.js';

const KUSTOMIZE_ARGV = [
  'run',
  '--rm',
  '-i',
  '-a',
  'STDIN',
  '-a',
  'STDOUT',
  '-a',
  'STDERR',
  '--network',
  'none',
  '--user',
  'nobody',
  '--security-opt=no-new-privileges',
];
const ECHO = 'localhost/berth/krm-echo:1';

let shim: ShimEnv;
before(async () => {
  shim = await setUpShim('shim-streams');
});
after(async () => {
  await shim?.close();
});
afterEach(async () => assert.deepEqual(await shim.leftovers(), [], 'berth left objects behind'));

/** A ResourceList of ConfigMaps, just over `bytes` long. */
function bigResourceList(bytes: number): string {
  const parts = ['apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n'];
  let size = parts[0].length;
  for (let i = 0; size < bytes; i++) {
    const item = `- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-${i}\n  data:\n    payload: "${createHash('sha256').update(String(i)).digest('hex').repeat(16)}"\n`;
    parts.push(item);
    size += item.length;
  }
  return parts.join('');
}

test("a 10 MiB ResourceList round-trips byte for byte; stderr carries only the function's report", async () => {
  const input = bigResourceList(10 * 1024 * 1024);
  const sha = createHash('sha256').update(input).digest('hex');
  const [ref, berth] = await bothRuntimes(shim, 'docker', [...KUSTOMIZE_ARGV, ECHO], { input });
  assert.equal(ref.code, 0, ref.stderr);
  assert.equal(berth.code, 0, berth.stderr);
  assert.equal(berth.stdout.length, input.length);
  assert.ok(berth.stdout === input, 'stdout differs from the input');
  assert.equal(berth.stderr, `echo: bytes=${Buffer.byteLength(input)} sha256=${sha}\n`);
  assert.equal(berth.stderr, ref.stderr);
});

test("a 10 MiB ResourceList comes back whole when the kubelet rotates the function's log as it writes", async () => {
  const input = bigResourceList(10 * 1024 * 1024);
  // rotated at every write past 64 KiB: the log read again at the end holds only the output's last part
  const berth = await underFaults({ containerLogMaxBytes: 64 * 1024, containerLogCheckMs: 0 }, () =>
    shim.run('berth', 'docker', [...KUSTOMIZE_ARGV, ECHO], { input }),
  );
  assert.equal(berth.code, 0, berth.stderr);
  assert.equal(berth.stdout.length, input.length);
  assert.ok(berth.stdout === input, 'stdout differs from the input');
});

for (const code of [0, 1, 42]) {
  test(`exit code ${code} passes through, with stdout and stderr apart`, async () => {
    const input = 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n';
    const [ref, berth] = await bothRuntimes(shim, 'docker', [...KUSTOMIZE_ARGV, '-e', `EXIT_CODE=${code}`, ECHO], { input });
    assert.equal(ref.code, code);
    assert.equal(berth.code, code);
    assert.equal(berth.stdout, input);
    assert.equal(berth.stdout, ref.stdout);
    assert.equal(berth.stderr, ref.stderr);
    assert.match(berth.stderr, /^echo: bytes=/);
  });
}

test('stdinMode file (for servers without v5 stdin close): stdin arrives whole and ends, the exit code passes through', async () => {
  const input = bigResourceList(2 * 1024 * 1024);
  const argv = [...KUSTOMIZE_ARGV, '-e', 'EXIT_CODE=42', '--entrypoint', '/usr/local/bin/node', ECHO, '/fn/main.js'];
  const [ref, berth] = await bothRuntimes(shim, 'docker', argv, { input, extraEnv: { BERTH_STDIN_MODE: 'file' } });
  assert.equal(ref.code, 42, ref.stderr);
  assert.equal(berth.code, 42, berth.stderr);
  assert.ok(berth.stdout === input, 'stdout differs from the input');
  assert.equal(berth.stderr, ref.stderr);
});

// Where the cluster serves the streams apart, berth reads them from the log: exactly podman's output. A stock cluster
// serves the log merged and attach sees only what comes after it: a run is then exact, or shows the merged log on
// stderr under a line saying why (with the command's own exit code, or a failure where that code was 0), never
// a short or misplaced output presented as the real one.
const MERGED =
  /^berth: pod \S+ wrote before berth could attach, and this cluster serves its log with stdout and stderr merged \(enable PodLogsQuerySplitStreams for exact streams\); its log:\n/;
const LOST =
  /^docker: the output of pod \S+ was not fully received: berth received \d+ bytes, the container wrote \d+, and the missing ones cannot be placed in stdout or stderr/m;

test(`docker run without -i: a command that writes at once never loses its output (10 runs, ${servesSplitLogs() ? 'as podman' : 'exact, or its merged log said as such'})`, async () => {
  const argv = ['run', '--rm', 'localhost/berth/busybox:1', 'sh', '-c', 'echo hello; echo oops >&2; exit 4'];
  const ref = await shim.run('podman', 'docker', argv);
  assert.equal(ref.stdout, 'hello\n');
  let merged = 0;
  for (let i = 0; i < 10; i++) {
    const berth = await shim.run('berth', 'docker', argv);
    const got = [berth.code, berth.stdout, berth.stderr];
    if (servesSplitLogs() || !MERGED.test(berth.stderr)) assert.deepEqual(got, [ref.code, ref.stdout, ref.stderr], `run ${i + 1}`);
    else {
      merged++;
      assert.deepEqual([berth.code, berth.stdout, berth.stderr.replace(MERGED, '').split('\n').sort()], [4, '', ['', 'hello', 'oops']], `run ${i + 1}`);
    }
  }
  process.stdout.write(`# docker run without -i: ${10 - merged} of 10 runs exact, ${merged} shown merged\n`);
});

test(`docker run -i whose process writes before it reads: nothing lost, before or after stdin (10 runs, ${servesSplitLogs() ? 'as podman' : 'exact, or a failure that says why'})`, async () => {
  const argv = ['run', '--rm', '-i', 'localhost/berth/busybox:1', 'sh', '-c', 'echo before; cat; echo after >&2; echo after'];
  const input = 'line one\nline two\n';
  const ref = await shim.run('podman', 'docker', argv, { input });
  assert.deepEqual([ref.code, ref.stdout, ref.stderr], [0, `before\n${input}after\n`, 'after\n'], 'the reference');
  let failed = 0;
  for (let i = 0; i < 10; i++) {
    const berth = await shim.run('berth', 'docker', argv, { input });
    const got = [berth.code, berth.stdout, berth.stderr];
    if (servesSplitLogs() || berth.code === 0) assert.deepEqual(got, [ref.code, ref.stdout, ref.stderr], `run ${i + 1}`);
    else {
      failed++;
      // attach missed "before": no success is claimed, and the error says what was missed
      assert.equal(berth.code, 125, `run ${i + 1}: ${berth.stderr}`);
      assert.match(berth.stderr, LOST, `run ${i + 1}`);
    }
  }
  process.stdout.write(`# docker run -i writing before it reads: ${10 - failed} of 10 runs exact, ${failed} failed saying why\n`);
});
