// Benchmark of `berth serve` on the dev cluster against podman's Docker-compatible API on the same machine,
// in one run, the two engines taking turns round by round (so load that comes and goes hits both); prints
// medians and the berth/podman ratios: create -> running, exec round trip, log throughput (one line of 8 MiB,
// and 200000 short lines), archive copy throughput (dockerode), N concurrent testcontainers-node starts
// (bench/tc-starts.ts, a child process per engine), and berth serve's resident memory while those N containers
// run. Every timed section starts on a quiet machine (bench/settle.ts); the throughputs (logs, archives) are
// a running server's: each engine makes one pass first, printed apart. Reports its goal rows
// (bench/goal-rows.ts, issue 13's goals) for `npm run bench`.
// Run: npm run build && node dist/bench/serve.js
//   BENCH_ROUNDS (5), BENCH_CONCURRENT (50): the sizes
//   BENCH_SERVE_ONLY=starts,logs,archive,concurrent: a subset of the measures
//   BENCH_SERVE_ENGINES=berth: measure only one engine (profiling)
//   BENCH_SERVE_PROFILE_DIR=<dir>: berth serve and the dev cluster write V8 CPU profiles there (--cpu-prof)
//   BENCH_SETTLE=0: time each section at once, without waiting for the machine to be quiet first
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { pack } from 'tar-stream';
import { devClusterUp } from './bench-cluster.js';
import { reportGoal } from './goal-rows.js';
import { settle } from './settle.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(root, 'dist/src/cli/main.js');
const IMAGE = 'localhost/berth/busybox:1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 50);
const ONLY = process.env.BENCH_SERVE_ONLY?.split(',').map((s) => s.trim());
const ENGINES = process.env.BENCH_SERVE_ENGINES?.split(',').map((s) => s.trim()) ?? ['podman', 'berth'];
const PROFILE_DIR = process.env.BENCH_SERVE_PROFILE_DIR ? resolve(process.env.BENCH_SERVE_PROFILE_DIR) : undefined;
const LOG_BYTES = 8 * 1024 * 1024;
const ARCHIVE_BYTES = 16 * 1024 * 1024;
const LOG_LINES = 200_000;
/** what `seq 1 200000` prints: 9 one-digit numbers, 90 of two digits, … 100000 of six, and 200000; each with its newline */
const LOG_LINES_BYTES = 9 * 2 + 90 * 3 + 900 * 4 + 9000 * 5 + 90000 * 6 + 100000 * 7 + 7;

const progress = (what: string): boolean => process.stderr.write(`bench: ${what}\n`);
/** Every timed section starts on a quiet machine (bench/settle.ts); BENCH_SETTLE=0 times them as they come. */
const SETTLE = process.env.BENCH_SETTLE !== '0';
const settling = { waits: 0, ms: 0, unsettled: 0 };
const quiet = async (): Promise<void> => {
  if (!SETTLE) return;
  const { waitedMs, idle, settled } = await settle();
  settling.waits++;
  settling.ms += waitedMs;
  if (!settled) {
    settling.unsettled++;
    progress(`the machine stayed busy (${(100 * idle).toFixed(0)}% idle): measuring anyway`);
  }
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const wanted = (part: string): boolean => !ONLY || ONLY.includes(part);
/** measures that failed: reported at the end, and the run fails */
const failures: string[] = [];

interface Engine {
  name: string;
  docker: Docker;
  socket: string;
  /** the engine's own process, whose memory is read while N containers run */
  pid: number;
  samples: Record<string, number[]>;
  /** the untimed first pass of the throughput measures (cold code, new connections), printed apart */
  firstPass: Record<string, number[]>;
  /** resident set (MB) of the engine process while the N concurrent containers ran, and its peak so far */
  rssMB?: number;
  hwmMB?: number;
}

function waitForPing(socket: string): Promise<void> {
  const until = Date.now() + 30_000;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const req = http.request({ socketPath: socket, path: '/_ping' }, (res) => {
        res.resume();
        if (res.statusCode === 200) resolve();
        else retry();
      });
      req.on('error', retry);
      req.end();
    };
    const retry = (): void => (Date.now() > until ? reject(new Error(`no engine on ${socket}`)) : void setTimeout(attempt, 100));
    attempt();
  });
}

async function drain(stream: NodeJS.ReadableStream): Promise<number> {
  let n = 0;
  for await (const c of stream as AsyncIterable<Buffer>) n += c.length;
  return n;
}

/** VmRSS and VmHWM of a process, in MB (10^6 bytes, as the goal states it). */
function memoryMB(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: (kb('VmRSS') * 1024) / 1e6, hwm: (kb('VmHWM') * 1024) / 1e6 };
}

function record(e: Engine, metric: string, value: number): void {
  (e.samples[metric] ??= []).push(value);
}

async function pull(docker: Docker): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    docker.pull(IMAGE, (err: Error | null, s: NodeJS.ReadableStream) =>
      err ? reject(err) : docker.modem.followProgress(s, (e: Error | null) => (e ? reject(e) : resolve())),
    ),
  );
}

async function startAndExec(e: Engine): Promise<void> {
  await quiet();
  const t0 = performance.now();
  const c = await e.docker.createContainer({ Image: IMAGE, Cmd: ['sleep', '600'] });
  await c.start();
  record(e, 'create -> running (ms)', performance.now() - t0);
  await quiet();
  const t1 = performance.now();
  const exec = await c.exec({ Cmd: ['true'], AttachStdout: true });
  await drain(await exec.start({ hijack: true, stdin: false }));
  await exec.inspect();
  record(e, 'exec round trip (ms)', performance.now() - t1);
  await c.remove({ force: true });
}

async function logs(e: Engine): Promise<void> {
  const logger = await e.docker.createContainer({ Image: IMAGE, Cmd: ['sh', '-c', `head -c ${LOG_BYTES} /dev/zero | tr '\\0' x`] });
  await logger.start();
  await logger.wait();
  // Not followed (the container has ended): podman 4.3's follow of an ended container's log has been seen
  // to end early, with part of the log, under load. A short read is read again, and fails the run at last.
  for (let attempt = 1; ; attempt++) {
    await quiet();
    const t = performance.now();
    const n = (await logger.logs({ stdout: true, stderr: true, follow: false })).length;
    if (n >= LOG_BYTES) {
      record(e, 'log throughput (MiB/s)', n / 1048576 / ((performance.now() - t) / 1000));
      break;
    }
    if (attempt === 3) throw new Error(`${e.name}: the log held ${n} bytes, fewer than the ${LOG_BYTES} written`);
    progress(`${e.name}: the log held ${n} of ${LOG_BYTES} bytes; reading it again`);
  }
  await logger.remove({ force: true });
}

/** A log of short lines, as programs write them: seq's 200000 numbers (1.3 MB, a frame per line as dockerd sends them). */
async function lineLogs(e: Engine): Promise<void> {
  const logger = await e.docker.createContainer({ Image: IMAGE, Cmd: ['seq', '1', String(LOG_LINES)] });
  await logger.start();
  await logger.wait();
  await quiet();
  const t = performance.now();
  const n = (await logger.logs({ stdout: true, stderr: true, follow: false })).length;
  // each line is a frame of its own: an 8-byte header and the line
  const content = n - 8 * LOG_LINES;
  if (content < LOG_LINES_BYTES) throw new Error(`${e.name}: the log held ${content} bytes of lines, fewer than the ${LOG_LINES_BYTES} written`);
  record(e, 'log throughput, short lines (MiB/s)', n / 1048576 / ((performance.now() - t) / 1000));
  await logger.remove({ force: true });
}

async function archive(e: Engine): Promise<void> {
  const box = await e.docker.createContainer({ Image: IMAGE, Cmd: ['sleep', '600'] });
  await box.start();
  const p = pack();
  p.entry({ name: 'blob.bin', size: ARCHIVE_BYTES }, Buffer.alloc(ARCHIVE_BYTES, 7));
  p.finalize();
  const tar = new PassThrough();
  p.pipe(tar);
  await quiet();
  const t0 = performance.now();
  await box.putArchive(tar, { path: '/tmp' });
  record(e, 'archive PUT (MiB/s)', ARCHIVE_BYTES / 1048576 / ((performance.now() - t0) / 1000));
  await quiet();
  const t1 = performance.now();
  const got = await drain(await box.getArchive({ path: '/tmp/blob.bin' }));
  if (got < ARCHIVE_BYTES) throw new Error(`${e.name}: archive GET gave ${got} bytes, fewer than the file's ${ARCHIVE_BYTES}`);
  record(e, 'archive GET (MiB/s)', got / 1048576 / ((performance.now() - t1) / 1000));
  await box.remove({ force: true });
}

/** N concurrent testcontainers GenericContainer starts in a child process; memory is read while all N run. */
async function concurrentStarts(e: Engine): Promise<void> {
  await quiet();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'dist/bench/tc-starts.js')], {
      env: { ...process.env, DOCKER_HOST: `unix://${e.socket}`, TESTCONTAINERS_RYUK_DISABLED: 'true', BENCH_CONCURRENT: String(CONCURRENT) },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (!out.includes('\n')) return;
      const m = memoryMB(e.pid);
      e.rssMB = m.rss;
      e.hwmMB = m.hwm;
      child.stdin!.end('measured\n');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the testcontainers starts against ${e.socket} failed (exit ${code})`));
      record(e, `${CONCURRENT} concurrent testcontainers starts (s)`, (JSON.parse(out.trim().split('\n')[0]) as { seconds: number }).seconds);
      resolve();
    });
  });
}

async function measure(engines: Engine[]): Promise<void> {
  for (const e of engines) await pull(e.docker);
  // Round by round, each engine in turn: a burst of load from elsewhere lands on both.
  const turns = async (what: string, rounds: number, one: (e: Engine) => Promise<void>): Promise<void> => {
    if (!wanted(what)) return;
    for (let i = 0; i < rounds; i++) {
      for (const e of i % 2 ? [...engines].reverse() : engines) {
        progress(`${what} ${i + 1}/${rounds}: ${e.name}`);
        try {
          await one(e);
        } catch (err) {
          // One failed measure (e.g. starts timing out under load) must not cost the others' figures.
          failures.push(`${what} on ${e.name}: ${(err as Error).message}`);
          progress(`${what} on ${e.name} failed: ${(err as Error).message}`);
          return;
        }
      }
    }
  };
  // A throughput is a running server's: each engine makes one pass first, outside the medians. In a fresh
  // node process the first megabytes run through cold code and new connections to the cluster (a log read
  // of 8 MiB takes berth serve about twice as long the first time).
  const firstPass = async (what: string, ones: Array<(e: Engine) => Promise<void>>): Promise<void> => {
    if (!wanted(what)) return;
    for (const e of engines) {
      progress(`${what}, first pass: ${e.name}`);
      for (const one of ones)
        await one({ ...e, samples: e.firstPass }).catch((err: Error) => progress(`${what}, first pass on ${e.name} failed: ${err.message}`));
    }
  };
  await turns('starts', ROUNDS, startAndExec);
  await firstPass('logs', [logs, lineLogs]);
  await firstPass('archive', [archive]);
  await turns('logs', 3, logs);
  await turns('logs', 3, lineLogs);
  await turns('archive', 3, archive);
  await turns('concurrent', 1, concurrentStarts);
}

/** The goals of issue 13 for berth serve: the ratio to podman's API (times: ≤; throughputs: ≥). */
const GOALS: Record<string, { measure: string; goal: string; unit: string }> = {
  'create -> running (ms)': { measure: 'create → running', goal: '≤ 1.5×', unit: 'ms' },
  'exec round trip (ms)': { measure: 'exec round trip', goal: '≤ 1.5×', unit: 'ms' },
  'log throughput (MiB/s)': { measure: 'log throughput (one line of 8 MiB)', goal: '≥ 1.0×', unit: 'MiB/s' },
  'log throughput, short lines (MiB/s)': { measure: 'log throughput (200000 short lines)', goal: '≥ 1.0×', unit: 'MiB/s' },
  'archive PUT (MiB/s)': { measure: 'archive PUT', goal: '≥ 0.5×', unit: 'MiB/s' },
  'archive GET (MiB/s)': { measure: 'archive GET', goal: '≥ 0.5×', unit: 'MiB/s' },
  [`${CONCURRENT} concurrent testcontainers starts (s)`]: { measure: `${CONCURRENT} concurrent testcontainers starts`, goal: '≤ 1.5×', unit: 's' },
};

function report(podman: Engine | undefined, berth: Engine | undefined): void {
  const metrics = [...new Set([...Object.keys(podman?.samples ?? {}), ...Object.keys(berth?.samples ?? {})])];
  const fig = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  console.table(
    metrics.map((k) => {
      const p = podman?.samples[k] ? median(podman.samples[k]) : NaN;
      const b = berth?.samples[k] ? median(berth.samples[k]) : NaN;
      return { metric: k, podman: fig(p), berth: fig(b), 'berth/podman': (b / p).toFixed(2), samples: berth?.samples[k]?.map(fig).join(' ') ?? '' };
    }),
  );
  if (berth?.rssMB !== undefined)
    console.log(
      `berth serve with ${CONCURRENT} containers: RSS ${berth.rssMB.toFixed(0)} MB (peak so far ${berth.hwmMB!.toFixed(0)} MB); podman's API service: ${podman?.rssMB?.toFixed(0) ?? '?'} MB`,
    );
  for (const k of metrics) {
    const p = podman?.firstPass[k]?.[0];
    const b = berth?.firstPass[k]?.[0];
    if (p !== undefined || b !== undefined)
      console.log(`first pass, outside the medians: ${k}: podman ${p === undefined ? '?' : fig(p)}, berth ${b === undefined ? '?' : fig(b)}`);
  }
  console.log(
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  if (SETTLE)
    console.log(
      `waited ${(settling.ms / 1000).toFixed(1)} s in all for a quiet machine before ${settling.waits} timed sections; ${settling.unsettled} began on a busy one`,
    );
  if (!podman || !berth) return;
  for (const k of metrics) {
    const g = GOALS[k];
    if (!g || !podman.samples[k] || !berth.samples[k]) continue;
    const p = median(podman.samples[k]);
    const b = median(berth.samples[k]);
    reportGoal({ area: 'serve', measure: g.measure, value: `${fig(b)} ${g.unit}`, ratio: b / p, reference: `podman API ${fig(p)} ${g.unit}`, goal: g.goal });
  }
  if (berth.rssMB !== undefined) {
    reportGoal({
      area: 'serve',
      measure: `RSS of berth serve with ${CONCURRENT} containers`,
      value: `${berth.rssMB.toFixed(0)} MB (peak ${berth.hwmMB!.toFixed(0)} MB)`,
      ratio: berth.rssMB,
      reference: `podman API service ${podman.rssMB?.toFixed(0) ?? '?'} MB`,
      goal: '≤ 200 MB',
    });
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-serve-'));
  const children: ChildProcess[] = [];
  const profile = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  try {
    progress('starting the dev cluster');
    const clusterEnv = PROFILE_DIR ? { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${profile.join(' ')}` } : process.env;
    const up = devClusterUp(dir, clusterEnv);
    if (up.status !== 0) throw new Error('the dev cluster did not start');
    const kubeconfig = join(dir, 'kubeconfig');
    spawnSync('kubectl', ['--kubeconfig', kubeconfig, 'create', 'namespace', 'bench-serve'], { stdio: 'ignore' });
    const engines: Engine[] = [];
    if (ENGINES.includes('podman')) {
      const socket = join(dir, 'podman.sock');
      const child = spawn('podman', ['system', 'service', '--time=0', `unix://${socket}`], { stdio: 'ignore' });
      children.push(child);
      engines.push({ name: 'podman', docker: new Docker({ socketPath: socket }), socket, pid: child.pid!, samples: {}, firstPass: {} });
    }
    if (ENGINES.includes('berth')) {
      const socket = join(dir, 'berth.sock');
      const child = spawn(
        process.execPath,
        [
          ...profile,
          ...(process.env.BENCH_SERVE_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
          cli,
          'serve',
          '--kubeconfig',
          kubeconfig,
          '-n',
          'bench-serve',
          '-H',
          `unix://${socket}`,
          '--instance',
          'bench',
        ],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );
      children.push(child);
      engines.push({ name: 'berth', docker: new Docker({ socketPath: socket }), socket, pid: child.pid!, samples: {}, firstPass: {} });
    }
    await Promise.all(engines.map((e) => waitForPing(e.socket)));
    progress(`measuring ${engines.map((e) => e.name).join(' and ')}, load average ${loadavg()[0].toFixed(1)}`);
    await measure(engines);
    report(
      engines.find((e) => e.name === 'podman'),
      engines.find((e) => e.name === 'berth'),
    );
    for (const f of failures) console.log(`FAILED: ${f}`);
    if (failures.length) process.exitCode = 1;
  } finally {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM'); // berth deletes its pods on SIGTERM
            setTimeout(() => (c.kill('SIGKILL'), resolve()), 20_000).unref();
          }),
      ),
    );
    spawnSync(process.execPath, [cli, 'dev-cluster', 'down', '--state-dir', dir], { stdio: 'inherit' });
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
