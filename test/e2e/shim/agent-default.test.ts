// The shim agent is the default (issue 13, part 2): a `docker run` with no BERTH_SHIM_AGENT goes to an agent started
// on first use, private to its user (socket 0600 in a 0700 folder under XDG_RUNTIME_DIR), that exits when idle,
// outlives a client killed with SIGKILL, deletes its warm pods when it stops, and after a SIGKILL of its own leaves
// nothing once its pods' deadline has passed and `berth gc` ran. BERTH_SHIM_AGENT=0 opts out.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { berthCli, kubectlOk, runCommand, servesSplitLogs } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import { BERTH_LABEL, killAgentLeavesNothing, setUpShim, tempTree, transformAndValidate, type ShimEnv } from './shim-env.js';

const ECHO = 'localhost/berth/krm-echo:1';
const LIST = 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n';

let shim: ShimEnv;
const runtimeDirs: string[] = [];

/** A private XDG_RUNTIME_DIR: the default socket of a test's agent is found there, nowhere else. */
function runtimeDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'berth-xdg-'));
  runtimeDirs.push(dir);
  return dir;
}

/** The environment of the default path: no BERTH_SHIM_AGENT and no socket named. */
function defaultEnv(xdg: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = shim.env('berth', { XDG_RUNTIME_DIR: xdg });
  delete env.BERTH_SHIM_AGENT;
  delete env.BERTH_SHIM_AGENT_SOCKET;
  return { ...env, ...extra };
}

function agentSocket(xdg: string): string | undefined {
  const dir = join(xdg, `berth-${userInfo().uid}`);
  if (!existsSync(dir)) return undefined;
  const name = readdirSync(dir).find((f) => /^shim-agent-[0-9a-f]+\.sock$/.test(f));
  return name && join(dir, name);
}

const agentPid = (socket: string): number => Number(readFileSync(`${socket}.pid`, 'utf8'));
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const berth = (args: string[], env: NodeJS.ProcessEnv) => runCommand(process.execPath, [berthCli, ...args], { env });
const dockerRun = (env: NodeJS.ProcessEnv, image = ECHO) =>
  runCommand('docker', ['run', '--rm', '-i', '--network', 'none', image], { input: LIST, env, timeoutMs: 120_000 });

before(async () => {
  shim = await setUpShim('shim-default');
});
after(async () => {
  for (const dir of runtimeDirs) {
    const socket = agentSocket(dir);
    if (socket && existsSync(`${socket}.pid`)) await berth(['shim', 'agent', 'stop', '--socket', socket], shim.env('berth'));
    rmSync(dir, { recursive: true, force: true });
  }
  await shim?.close();
});
afterEach(async () => {
  await kubectlOk(['-n', shim.namespace, 'wait', '--for=delete', 'pods,configmaps,networkpolicies', '-l', BERTH_LABEL, '--timeout=60s']);
});

test('kustomize through the default path: byte-identical to podman, served by an agent started on first use, private to its user', async () => {
  const xdg = runtimeDir();
  const tree = tempTree(transformAndValidate('default-path'));
  try {
    const ref = await shim.run('podman', 'kubectl', ['kustomize', '--enable-alpha-plugins', tree.dir]);
    assert.equal(ref.code, 0, ref.stderr);
    const env = defaultEnv(xdg);
    const berthFirst = await runCommand('kubectl', ['kustomize', '--enable-alpha-plugins', tree.dir], { env, timeoutMs: 120_000 });
    assert.equal(berthFirst.code, 0, berthFirst.stderr);
    assert.equal(berthFirst.stdout, ref.stdout);
    const socket = agentSocket(xdg);
    assert.ok(socket, 'no agent socket under XDG_RUNTIME_DIR: the default path did not start the agent');
    assert.equal(statSync(socket).mode & 0o777, 0o600, 'the socket is not 0600');
    assert.equal(statSync(join(socket, '..')).mode & 0o777, 0o700, 'the socket folder is not 0700');
    // the second build goes to the same agent, its warm pods
    const pid = agentPid(socket);
    const second = await runCommand('kubectl', ['kustomize', '--enable-alpha-plugins', tree.dir], { env: { ...env, BERTH_TRACE: '1' }, timeoutMs: 120_000 });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, ref.stdout);
    assert.match(second.stderr, /warm pod \S+ taken/, 'the second build was not served warm');
    assert.equal(agentPid(socket), pid, 'another agent served the second build');
    const status = await berth(['shim', 'agent', 'status'], env);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, new RegExp(`pid:\\s+${pid}`));
    const stopped = await berth(['shim', 'agent', 'stop'], env);
    assert.equal(stopped.code, 0, stopped.stderr);
    // stop returns once the agent removed its pid file, its last act before it exits
    await eventually('the stopped agent exits', () => !alive(pid), { timeoutMs: 10_000 });
    assert.deepEqual(await shim.leftovers(), [], 'the stopped agent left its warm pods');
    assert.equal((await berth(['shim', 'agent', 'status'], env)).code, 1, 'status of a stopped agent is not 1');
  } finally {
    tree.remove();
  }
});

test('status and stop reach the agent whatever BERTH_CONTEXT and BERTH_NAMESPACE say, and name the agents at other sockets', async () => {
  // started from a shell without XDG_RUNTIME_DIR (a CI job, cron): the agent listens under the temp dir
  const startedIn = runtimeDir();
  const startEnv = defaultEnv(runtimeDir(), { TMPDIR: startedIn });
  delete startEnv.XDG_RUNTIME_DIR;
  const first = await dockerRun(startEnv);
  assert.equal(first.code, 0, first.stderr);
  const socket = agentSocket(startedIn);
  assert.ok(socket, 'no agent was started under TMPDIR');
  const pid = agentPid(socket);
  // one agent serves every context and namespace: other ones, or none, reach the same agent
  const unset = { ...startEnv };
  delete unset.BERTH_CONTEXT;
  delete unset.BERTH_NAMESPACE;
  for (const env of [{ ...startEnv, BERTH_CONTEXT: 'another-context', BERTH_NAMESPACE: 'another-namespace' }, unset]) {
    const status = await berth(['shim', 'agent', 'status'], env);
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.match(status.stdout, new RegExp(`pid:\\s+${pid}\n`));
    assert.match(status.stdout, /^serves: +every context and namespace/m);
  }
  // a shell with XDG_RUNTIME_DIR looks at another socket: none there, and the running one is named with its --socket
  const xdgEnv = { ...startEnv, XDG_RUNTIME_DIR: runtimeDir() };
  const status = await berth(['shim', 'agent', 'status'], xdgEnv);
  assert.equal(status.code, 1, status.stdout + status.stderr);
  assert.match(status.stdout, new RegExp(`^no shim agent is running at ${xdgEnv.XDG_RUNTIME_DIR}/berth-${userInfo().uid}/shim-agent-[0-9a-f]+\\.sock$`, 'm'));
  assert.ok(status.stdout.includes(`\n  ${socket} (pid ${pid}): berth shim agent status --socket ${socket}\n`), status.stdout);
  const stop = await berth(['shim', 'agent', 'stop'], xdgEnv);
  assert.equal(stop.code, 0, stop.stderr);
  assert.ok(stop.stdout.includes(`\n  ${socket} (pid ${pid}): berth shim agent stop --socket ${socket}\n`), stop.stdout);
  assert.ok(alive(pid), 'stop without --socket stopped an agent it did not name as its own');
  const stopped = await berth(['shim', 'agent', 'stop', '--socket', socket], xdgEnv);
  assert.equal(stopped.code, 0, stopped.stderr);
  await eventually('the stopped agent exits', () => !alive(pid), { timeoutMs: 10_000 });
  const none = await berth(['shim', 'agent', 'status'], xdgEnv);
  assert.equal(none.code, 1);
  assert.ok(!none.stdout.includes(socket), `a stopped agent is still named: ${none.stdout}`);
});

test('BERTH_SHIM_AGENT=0 opts out: the docker process runs the call itself and starts no agent', async () => {
  const xdg = runtimeDir();
  const r = await dockerRun(defaultEnv(xdg, { BERTH_SHIM_AGENT: '0' }));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, LIST);
  assert.equal(agentSocket(xdg), undefined, 'an agent was started');
});

test('a socket in a folder others may read: no agent, the call runs in its process and says why once', async () => {
  const shared = runtimeDir();
  chmodSync(shared, 0o755);
  const r = await dockerRun(defaultEnv(runtimeDir(), { BERTH_SHIM_AGENT_SOCKET: join(shared, 'agent.sock') }));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, LIST);
  assert.match(r.stderr, /the shim agent was not started: .* must be private to you \(mode 0700\).*BERTH_SHIM_AGENT_SOCKET/);
  assert.equal(r.stderr.split('\n').filter((l) => l.includes('shim agent')).length, 1);
  assert.equal(existsSync(join(shared, 'agent.sock')), false, 'an agent listens in a shared folder');
});

test('a client killed with SIGKILL: its pod is deleted, and the same agent serves the next call', async () => {
  const xdg = runtimeDir();
  // no warm pods: the one pod is the killed call's
  const env = defaultEnv(xdg, { BERTH_SHIM_POOL: '0' });
  assert.equal((await dockerRun(env)).code, 0);
  const socket = agentSocket(xdg) as string;
  const pid = agentPid(socket);
  const child = spawn('docker', ['run', '--rm', '-i', 'localhost/berth/krm-sleep:1'], { env, stdio: ['pipe', 'ignore', 'pipe'] });
  child.stdin.end(LIST);
  await new Promise<void>((resolve, reject) => {
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.includes('sleep: sleeping')) resolve();
    });
    child.on('exit', () => reject(new Error(`the client ended before the function ran: ${stderr}`)));
  });
  child.kill('SIGKILL');
  await kubectlOk(['wait', '--for=delete', 'pods', '-l', BERTH_LABEL, '-n', shim.namespace, '--timeout=30s']);
  assert.ok(alive(pid), 'the agent went down with its client');
  const next = await dockerRun(env);
  assert.equal(next.code, 0, next.stderr);
  assert.equal(next.stdout, LIST);
  assert.equal(agentPid(socket), pid);
});

test('a call that ends without reading its stdin (1 MiB, an image that does not exist) exits at once, and the agent still stops', async () => {
  const xdg = runtimeDir();
  const env = defaultEnv(xdg);
  const big = Buffer.alloc(1 << 20, 'x');
  const missing = await runCommand('docker', ['run', '--rm', '-i', '--network', 'none', 'localhost/berth/no-such-function:1'], {
    input: big,
    env,
    timeoutMs: 60_000,
  });
  assert.equal(missing.code, 125, missing.stderr);
  assert.match(missing.stderr, /localhost\/berth\/no-such-function:1/);
  // a function that exits without reading (sh -c 'echo ok'): its output, exit 0, the rest of stdin dropped; where
  // the log is merged (a stock cluster) and it wrote before berth attached, no success is claimed and its log is shown
  const unread = await runCommand('docker', ['run', '--rm', '-i', '--network', 'none', 'localhost/berth/busybox:1', 'sh', '-c', 'echo ok'], {
    input: big,
    env,
    timeoutMs: 60_000,
  });
  if (servesSplitLogs() || unread.code === 0) assert.deepEqual([unread.code, unread.stdout], [0, 'ok\n'], unread.stderr);
  else {
    // over attach, the stream may also break under stdin as the process exits; the container then ended on input it
    // may have had only part of, which berth cannot tell from a stream cut under a running function: a failure, said
    assert.equal(unread.code, 125, unread.stderr);
    assert.match(
      unread.stderr,
      /wrote before berth could attach, and this cluster serves its log with stdout and stderr merged .*; its log:\nok\n|the attach stream to pod \S+ broke while it carried stdin: the container may have read only part of its input/,
    );
  }
  const socket = agentSocket(xdg) as string;
  const stopped = await berth(['shim', 'agent', 'stop', '--socket', socket], env);
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.equal(existsSync(`${socket}.pid`), false, 'the agent is still running');
});

test('a command that cannot start fails as docker run does (127 missing, 126 not executable), the warm path too, never exit 0', async () => {
  const env = defaultEnv(runtimeDir());
  for (const [command, code] of [
    ['/no/such/bin', 127],
    ['/no/such/bin', 127],
    ['/etc/passwd', 126],
  ] as const) {
    const r = await runCommand('docker', ['run', '--rm', '-i', '--network', 'none', 'localhost/berth/busybox:1', command], {
      input: LIST,
      env,
      timeoutMs: 120_000,
    });
    assert.equal(r.code, code, `${command}: ${r.stderr}`);
    assert.equal(r.stdout, '');
  }
});

test('an idle agent exits and deletes its warm pods', async () => {
  const xdg = runtimeDir();
  const env = defaultEnv(xdg, { BERTH_SHIM_AGENT_IDLE: '5' });
  assert.equal((await dockerRun(env)).code, 0);
  const socket = agentSocket(xdg) as string;
  const pid = agentPid(socket);
  await eventually('the idle agent exits', () => !alive(pid), { timeoutMs: 60_000, intervalMs: 250 });
  assert.ok(!existsSync(socket), 'the socket is left');
  assert.ok(!existsSync(`${socket}.pid`), 'the pid file is left');
  assert.ok(!existsSync(`${socket}.log`), 'its log is left, though the agent said nothing (one per build of berth piled up)');
  await kubectlOk(['-n', shim.namespace, 'wait', '--for=delete', 'pods,configmaps,networkpolicies', '-l', BERTH_LABEL, '--timeout=30s']);
  assert.deepEqual(await shim.leftovers(), []);
});

test("an agent killed with SIGKILL leaves nothing once its pods' deadline has passed and berth gc ran", async () => {
  const xdg = runtimeDir();
  // warm pods that expire soon: the run's ttl plus the pool's idle time (the ttl also bounds the call itself)
  const env = defaultEnv(xdg, { BERTH_TTL: '15s', BERTH_SHIM_POOL_IDLE: '20', BERTH_SHIM_POOL_SIZE: '1' });
  assert.equal((await dockerRun(env)).code, 0);
  const socket = agentSocket(xdg) as string;
  const warm = await eventually('a warm pod', async () => (await berth(['shim', 'pool', 'ls'], env)).stdout.split('\n').slice(1).filter(Boolean)[0], {
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  await killAgentLeavesNothing(shim, socket, warm.split(/\s+/)[0], 120_000);
});
