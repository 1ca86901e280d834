// What the serve tests share: a `berth serve` (or podman's Docker-compatible service, the reference)
// started and stopped by the test, and the installed docker CLI pointed at it with DOCKER_HOST.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { releasePodmanLock, takePodmanLock } from './podman-lock.js';
import { berthCli, contextFor, kubeconfigPath, kubectlOk, repoRoot, runCommand, type Result } from '../harness/cluster.js';

export type EngineKind = 'berth' | 'podman';

export interface DockerEngine {
  kind: EngineKind;
  socket: string;
  dockerHost: string;
  /** The docker CLI against this engine. */
  docker(args: string[], opts?: { input?: string | Buffer; timeoutMs?: number }): Promise<Result>;
  /** The docker CLI, which must exit 0 (the assertion shows its output otherwise); its stdout. */
  dockerOk(args: string[], opts?: { input?: string | Buffer; timeoutMs?: number }): Promise<string>;
  /** One HTTP request to the engine's socket. */
  request(
    method: string,
    path: string,
    body?: string | Buffer,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>;
  stop(): Promise<void>;
  /** SIGKILL: berth gets no chance to clean up (a crash). */
  crash(): Promise<void>;
  /** The first match of `pattern` in the engine's stdout+stderr, once it has been written (e.g. berth's "listening on" line). */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

function waitForPing(socket: string, child: ChildProcess, output: () => string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      if (child.exitCode !== null) return reject(new Error(`the engine exited (${child.exitCode}): ${output()}`));
      const req = http.request({ socketPath: socket, path: '/_ping', method: 'GET' }, (res) => {
        res.resume();
        if (res.statusCode === 200) resolve();
        else retry();
      });
      req.on('error', retry);
      req.end();
    };
    const retry = (): void => {
      if (Date.now() > until) reject(new Error(`the engine did not answer /_ping within ${timeoutMs} ms: ${output()}`));
      else setTimeout(attempt, 100);
    };
    attempt();
  });
}

function makeEngine(kind: EngineKind, socket: string, child: ChildProcess, dir: string, output: () => string): DockerEngine {
  const dockerHost = `unix://${socket}`;
  const docker = (args: string[], opts: { input?: string | Buffer; timeoutMs?: number } = {}): Promise<Result> =>
    runCommand('docker', args, {
      input: opts.input,
      timeoutMs: opts.timeoutMs ?? 90_000,
      env: { ...process.env, DOCKER_HOST: dockerHost, DOCKER_CONFIG: dir },
    });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    kind,
    socket,
    dockerHost,
    docker,
    async dockerOk(args, opts) {
      const r = await docker(args, opts);
      assert.equal(r.code, 0, `docker ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r.stdout;
    },
    request: (method, path, body, headers = {}) =>
      new Promise((resolve, reject) => {
        const req = http.request({ socketPath: socket, path, method, headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
        });
        req.on('error', reject);
        req.end(body);
      }),
    waitForOutput: (pattern, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const m = pattern.exec(output());
          if (!m) return false;
          clearTimeout(timer);
          child.stdout!.off('data', check);
          child.stderr!.off('data', check);
          resolve(m);
          return true;
        };
        const timer = setTimeout(() => {
          child.stdout!.off('data', check);
          child.stderr!.off('data', check);
          reject(new Error(`no ${pattern} in the engine's output within ${timeoutMs} ms: ${output()}`));
        }, timeoutMs);
        if (!check()) {
          // after startEngine's own 'data' listeners, so output() already holds the new chunk
          child.stdout!.on('data', check);
          child.stderr!.on('data', check);
        }
      }),
    async crash() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      // The grace timer is cleared, or it alone keeps the test process alive for 30 s after a clean exit.
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (grace = setTimeout(r, 30_000)))]);
      clearTimeout(grace);
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Spawns an engine on a unix socket in a fresh folder and resolves once it answers /_ping (stopped if it never does). */
async function startEngine(
  kind: 'berth' | 'podman',
  prefix: string,
  command: (socket: string) => [string, string[]],
  onOutput?: (all: string) => void,
): Promise<DockerEngine> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const socket = join(dir, `${kind === 'berth' ? 'docker' : 'podman'}.sock`);
  const [cmd, args] = command(socket);
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (d: Buffer): void => {
    output += d.toString();
    onOutput?.(output);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const engine = makeEngine(kind, socket, child, dir, () => output);
  try {
    await waitForPing(socket, child, () => output);
  } catch (err) {
    await engine.stop();
    throw err;
  }
  return engine;
}

/** Starts `berth serve`; with `user`, as that dev-cluster user (bind deploy/rbac/serve-role.yaml first). */
/** `onOutput` sees berth's whole output so far each time it grows, also before berth answers /_ping. */
export function startBerth(
  namespace: string,
  instance: string,
  opts: { user?: string; extra?: string[]; onOutput?: (all: string) => void } = {},
): Promise<DockerEngine> {
  const context = opts.user ? ['--context', contextFor(opts.user)] : [];
  return startEngine(
    'berth',
    'berth-serve-',
    (socket) => [
      process.execPath,
      [
        berthCli,
        'serve',
        '--kubeconfig',
        kubeconfigPath(),
        ...context,
        '-n',
        namespace,
        '--instance',
        instance,
        '-H',
        `unix://${socket}`,
        ...(opts.extra ?? []),
      ],
    ],
    opts.onOutput,
  );
}

/** podman's Docker API, the reference; held by one test file at a time (podman-lock.ts) until its stop. */
export async function startPodman(): Promise<DockerEngine> {
  await takePodmanLock();
  try {
    const engine = await startEngine('podman', 'podman-serve-', (socket) => ['podman', ['system', 'service', '--time=0', `unix://${socket}`]]);
    const stop = engine.stop.bind(engine);
    engine.stop = () => stop().finally(releasePodmanLock);
    return engine;
  } catch (err) {
    releasePodmanLock();
    throw err;
  }
}

/** berth's objects of `instance` left in the namespace (as kind/name). */
export async function berthLeftovers(namespace: string, instance: string): Promise<string[]> {
  const out = await kubectlOk([
    '-n',
    namespace,
    'get',
    'pods,services,persistentvolumeclaims,networkpolicies',
    '-l',
    `berth.dev/owner=${instance}`,
    '-o',
    'name',
  ]);
  return out.split('\n').filter(Boolean);
}

/** Applies deploy/rbac/serve-role.yaml with kubectl and binds it to `user`, as a user would. */
export async function bindServeRole(namespace: string, user: string): Promise<void> {
  await kubectlOk(['-n', namespace, 'apply', '-f', '-'], { input: readFileSync(join(repoRoot, 'deploy/rbac/serve-role.yaml'), 'utf8') });
  await kubectlOk(['-n', namespace, 'create', 'rolebinding', 'berth-serve', '--role', 'berth-serve', '--user', user]);
}

/**
 * Stops the engine and removes the test's folder (if any); for berth, checks nothing of the instance is
 * left, then drops the namespace.
 */
export async function stopAndCheckLeftovers(engine: DockerEngine, namespace: string, instance: string, work?: string): Promise<void> {
  try {
    await engine.stop();
  } finally {
    if (work) rmSync(work, { recursive: true, force: true });
    if (engine.kind === 'berth') {
      const left = await berthLeftovers(namespace, instance);
      await dropNamespace(namespace);
      assert.deepEqual(left, [], 'berth serve left objects behind after SIGTERM');
    }
  }
}

/** Berth has already deleted its objects (each test checks): the namespace goes without waiting for it. */
export async function dropNamespace(namespace: string): Promise<void> {
  await kubectlOk(['delete', 'namespace', namespace, '--wait=false']);
}
