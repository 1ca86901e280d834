// What every end-to-end test needs: the dev cluster the runner started, its kubeconfig, and the real clients.
import { spawn, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';

export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
export const berthCli = join(repoRoot, 'dist/src/cli/main.js');
export const BUSYBOX = 'localhost/berth/busybox:1';
export const NODE_IMAGE = 'localhost/berth/node:24';

export function stateDir(): string {
  const dir = process.env.BERTH_E2E_STATE_DIR;
  if (!dir) throw new Error('BERTH_E2E_STATE_DIR is not set: run end-to-end tests through `npm run test:e2e`, which starts the dev cluster');
  return dir;
}

/**
 * the cluster serves a container's stdout and stderr apart in pods/log (PodLogsQuerySplitStreams): only with the alpha
 * gate on, which the harness's upstream-split phase turns on (a stock cluster does not)
 */
export const servesSplitLogs = (): boolean => process.env.BERTH_E2E_CLUSTER === 'upstream-split';

export const kubeconfigPath = () => join(stateDir(), 'kubeconfig');

/** Puts images tagged in podman during a test into the cluster's node (containerd's store), as `kind load` does. */
export async function loadIntoNode(...images: string[]): Promise<void> {
  const r = await runCommand(process.execPath, [berthCli, 'dev-cluster', 'load', '--state-dir', stateDir(), ...images], { timeoutMs: 180_000 });
  if (r.code !== 0) throw new Error(`berth dev-cluster load ${images.join(' ')}: ${r.stderr}`);
}

export function kubeConfig(user = 'admin'): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath());
  const name = user === 'admin' ? 'berth-dev' : `berth-dev-${user}`;
  if (!kc.getContexts().some((c) => c.name === name)) throw new Error(`no context ${name} for user ${user} in ${kubeconfigPath()}`);
  kc.setCurrentContext(name);
  return kc;
}

export function contextFor(user: string): string {
  return kubeConfig(user).getCurrentContext();
}

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, feeding `input` to its stdin. */
export function runCommand(cmd: string, args: string[], opts: { input?: string | Buffer; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] } as SpawnOptions);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} did not end within ${opts.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(opts.input ?? '');
  });
}

/** kubectl against the dev cluster, as `user` */
/** `kubectl port-forward` to a pod's port on a free local port, once it listens; stop() ends it. */
export async function kubectlPortForward(namespace: string, pod: string, remotePort: number): Promise<{ port: number; stop(): void }> {
  const pf = spawn('kubectl', ['--kubeconfig', kubeconfigPath(), 'port-forward', '-n', namespace, `pod/${pod}`, `:${remotePort}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    pf.stdout!.setEncoding('utf8').on('data', (d: string) => {
      text += d;
      const m = /127\.0\.0\.1:(\d+) ->/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    pf.on('exit', (code) => reject(new Error(`kubectl port-forward exited ${code}`)));
  });
  return { port, stop: () => void pf.kill() };
}

export function kubectl(args: string[], opts: { input?: string | Buffer; user?: string; timeoutMs?: number } = {}): Promise<Result> {
  const user = opts.user ?? 'admin';
  const base = ['--kubeconfig', kubeconfigPath()];
  if (user !== 'admin') base.push('--context', contextFor(user));
  return runCommand('kubectl', [...base, ...args], opts);
}

export async function kubectlOk(args: string[], opts: { input?: string | Buffer; user?: string; timeoutMs?: number } = {}): Promise<string> {
  const r = await kubectl(args, opts);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stdout;
}

let counter = 0;
/** a fresh namespace for one test file; deleted by the caller's after() */
export async function freshNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${process.pid}-${++counter}`;
  await kubectlOk(['create', 'namespace', name]);
  return name;
}

export async function deleteNamespace(name: string): Promise<void> {
  await kubectl(['delete', 'namespace', name, '--wait=true', '--timeout=60s']);
}

export function readClusterState(): { clusterId: string; server: string; pid: number; registry: string } {
  return JSON.parse(readFileSync(join(stateDir(), 'state.json'), 'utf8'));
}

/** Resolves with the first pod state that `done` accepts, watching (not polling) the pod. */
export async function waitForPod(
  kc: k8s.KubeConfig,
  namespace: string,
  name: string,
  done: (pod: k8s.V1Pod) => boolean,
  timeoutMs = 30_000,
): Promise<k8s.V1Pod> {
  const watch = new k8s.Watch(kc);
  return new Promise((resolve, reject) => {
    let last: k8s.V1Pod | undefined;
    let req: { abort(): void } | undefined;
    const timer = setTimeout(() => {
      req?.abort();
      reject(new Error(`pod ${namespace}/${name} did not reach the expected state within ${timeoutMs} ms; last status: ${JSON.stringify(last?.status)}`));
    }, timeoutMs);
    watch
      .watch(
        `/api/v1/namespaces/${namespace}/pods`,
        { fieldSelector: `metadata.name=${name}` },
        (_type, pod: k8s.V1Pod) => {
          last = pod;
          if (done(pod)) {
            clearTimeout(timer);
            req?.abort();
            resolve(pod);
          }
        },
        (err) => {
          if (err && (err as Error).name !== 'AbortError') {
            clearTimeout(timer);
            reject(err);
          }
        },
      )
      .then((r) => (req = r), reject);
  });
}

export interface ApiReply {
  code: number;
  body: any;
}

/** A raw HTTPS call to the dev cluster (admin unless `token` says otherwise), so a test sees exactly what the server sent. */
export function apiRequest(method: string, path: string, opts: { token?: string | null; body?: unknown; contentType?: string } = {}): Promise<ApiReply> {
  const { server } = readClusterState();
  const token = opts.token === undefined ? kubeConfig().getCurrentUser()!.token! : opts.token;
  const body = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${server}${path}`,
      {
        method,
        ca: readFileSync(join(stateDir(), 'ca.crt')),
        headers: {
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'Content-Type': opts.contentType ?? 'application/json' } : {}),
          Accept: 'application/json',
        },
      },
      (res) => {
        let text = '';
        res
          .on('data', (d) => (text += d))
          .on('end', () => {
            try {
              resolve({ code: res.statusCode!, body: JSON.parse(text) });
            } catch {
              resolve({ code: res.statusCode!, body: text });
            }
          });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
