/**
 * Runs one KRM function with a ResourceList on stdin: container providers as pods through berth's
 * runtime (same settings as the docker shim: berth's config file and BERTH_* variables), exec
 * providers as local processes. The function's stderr is passed on as it comes.
 */
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import type { KubeCluster } from '../kube/cluster.js';
import { runWorkload } from '../runtime/run.js';
import { applySettings, connectWithSettings, loadRunSettings, runClusterOf } from '../runtime/settings.js';
import type { Workload, WorkloadMount } from '../runtime/workload.js';

export type FunctionProvider =
  | { kind: 'container'; image: string; network?: boolean; mounts?: WorkloadMount[]; env?: Array<{ name: string; value: string }> }
  | { kind: 'exec'; path: string; label?: string; args?: string[]; env?: Array<{ name: string; value: string }>; verify?: () => void };

export interface FunctionOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface RunnerOptions {
  env?: NodeJS.ProcessEnv;
  stderr?: Writable;
  /** Tests inject a cluster. */
  cluster?: KubeCluster;
  signal?: AbortSignal;
}

export function describeProvider(p: FunctionProvider): string {
  return p.kind === 'container' ? p.image : (p.label ?? p.path);
}

export async function runFunction(provider: FunctionProvider, input: string, opts: RunnerOptions = {}): Promise<FunctionOutput> {
  return provider.kind === 'container' ? runContainer(provider, input, opts) : runExec(provider, input, opts);
}

function collector(forward?: Writable): { stream: Writable; text(): string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk);
      if (forward) forward.write(chunk, () => cb());
      else cb();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

async function runContainer(p: Extract<FunctionProvider, { kind: 'container' }>, input: string, opts: RunnerOptions): Promise<FunctionOutput> {
  const env = opts.env ?? process.env;
  const settings = loadRunSettings(env);
  const cluster = opts.cluster ?? (await connectWithSettings(settings, env));
  // kpt runs functions as nobody, without network unless allowed, and with no new privileges.
  const base: Workload = {
    image: p.image,
    stdin: true,
    user: { uid: 65534, gid: 65534 },
    network: p.network ? 'bridge' : 'none',
    noNewPrivileges: true,
    pullPolicy: 'IfNotPresent',
    mounts: p.mounts,
    env: p.env,
  };
  const workload = await applySettings(base, settings, cluster);
  const out = collector();
  const err = collector(opts.stderr);
  const { exitCode } = await runWorkload(
    workload,
    { stdin: Readable.from([Buffer.from(input)]), stdout: out.stream, stderr: err.stream, signal: opts.signal },
    runClusterOf(settings, cluster),
  );
  return { exitCode, stdout: out.text(), stderr: err.text() };
}

function runExec(p: Extract<FunctionProvider, { kind: 'exec' }>, input: string, opts: RunnerOptions): Promise<FunctionOutput> {
  // Checked here, right before the process starts: nothing unverified ever runs.
  p.verify?.();
  return new Promise((resolve, reject) => {
    const extra = Object.fromEntries((p.env ?? []).map((e) => [e.name, e.value]));
    const child = spawn(p.path, p.args ?? [], { env: { ...(opts.env ?? process.env), ...extra }, stdio: ['pipe', 'pipe', 'pipe'], signal: opts.signal });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => {
      err.push(c);
      opts.stderr?.write(c);
    });
    child.on('error', (e) => reject(new Error(`cannot run ${p.path}: ${e.message}`)));
    child.on('close', (code, sig) =>
      resolve({ exitCode: code ?? (sig ? 128 : 1), stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    );
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
