// Benchmark of `berth serve` on the dev cluster against podman's Docker-compatible API on the same machine,
// in one run; prints medians and the berth/podman ratios: create -> running, exec round trip, log
// throughput, archive copy throughput (dockerode), N concurrent testcontainers-node starts (bench/tc-starts.ts,
// a child process per engine).
// Run: npm run build && node dist/bench/serve.js   (BENCH_ROUNDS, BENCH_CONCURRENT to change the sizes)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { pack } from 'tar-stream';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(root, 'dist/src/cli/main.js');
const IMAGE = 'localhost/berth/busybox:1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 50);
const LOG_BYTES = 8 * 1024 * 1024;
const ARCHIVE_BYTES = 16 * 1024 * 1024;

const progress = (what: string): boolean => process.stderr.write(`bench: ${what}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

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

/** N concurrent testcontainers GenericContainer starts, in a child process pointed at `socket`. */
function testcontainersStarts(socket: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'dist/bench/tc-starts.js')], {
      env: { ...process.env, DOCKER_HOST: `unix://${socket}`, TESTCONTAINERS_RYUK_DISABLED: 'true', BENCH_CONCURRENT: String(CONCURRENT) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the testcontainers starts against ${socket} failed (exit ${code})`));
      resolve((JSON.parse(out.trim().split('\n').pop() as string) as { seconds: number }).seconds);
    });
  });
}

async function measure(docker: Docker, socket: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  await new Promise<void>((resolve, reject) => docker.pull(IMAGE, (err: Error | null, s: NodeJS.ReadableStream) => (err ? reject(err) : docker.modem.followProgress(s, (e: Error | null) => (e ? reject(e) : resolve())))));

  const starts: number[] = [];
  const execs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    const c = await docker.createContainer({ Image: IMAGE, Cmd: ['sleep', '600'] });
    await c.start();
    starts.push(performance.now() - t0);
    const t1 = performance.now();
    const exec = await c.exec({ Cmd: ['true'], AttachStdout: true });
    await drain(await exec.start({ hijack: true, stdin: false }));
    await exec.inspect();
    execs.push(performance.now() - t1);
    await c.remove({ force: true });
  }
  out['create -> running (ms)'] = median(starts);
  out['exec round trip (ms)'] = median(execs);

  const logger = await docker.createContainer({ Image: IMAGE, Cmd: ['sh', '-c', `head -c ${LOG_BYTES} /dev/zero | tr '\\0' x`] });
  await logger.start();
  await logger.wait();
  const t2 = performance.now();
  const logBytes = await drain((await logger.logs({ stdout: true, stderr: true, follow: true })) as unknown as NodeJS.ReadableStream);
  out['log throughput (MiB/s)'] = logBytes / 1048576 / ((performance.now() - t2) / 1000);
  await logger.remove({ force: true });

  const box = await docker.createContainer({ Image: IMAGE, Cmd: ['sleep', '600'] });
  await box.start();
  const p = pack();
  p.entry({ name: 'blob.bin', size: ARCHIVE_BYTES }, Buffer.alloc(ARCHIVE_BYTES, 7));
  p.finalize();
  const tar = new PassThrough();
  p.pipe(tar);
  const t3 = performance.now();
  await box.putArchive(tar, { path: '/tmp' });
  out['archive PUT (MiB/s)'] = ARCHIVE_BYTES / 1048576 / ((performance.now() - t3) / 1000);
  const t4 = performance.now();
  const got = await drain(await box.getArchive({ path: '/tmp/blob.bin' }));
  out['archive GET (MiB/s)'] = got / 1048576 / ((performance.now() - t4) / 1000);
  await box.remove({ force: true });

  out[`${CONCURRENT} concurrent testcontainers starts (s)`] = await testcontainersStarts(socket);
  return out;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-serve-'));
  const children: ChildProcess[] = [];
  try {
    progress('starting the dev cluster');
    const up = spawnSync(process.execPath, [cli, 'dev-cluster', 'up', '--state-dir', dir], { stdio: 'inherit' });
    if (up.status !== 0) throw new Error('the dev cluster did not start');
    const kubeconfig = join(dir, 'kubeconfig');
    spawnSync('kubectl', ['--kubeconfig', kubeconfig, 'create', 'namespace', 'bench-serve'], { stdio: 'ignore' });
    const berthSock = join(dir, 'berth.sock');
    const podmanSock = join(dir, 'podman.sock');
    children.push(spawn(process.execPath, [cli, 'serve', '--kubeconfig', kubeconfig, '-n', 'bench-serve', '-H', `unix://${berthSock}`, '--instance', 'bench'], { stdio: 'ignore' }));
    children.push(spawn('podman', ['system', 'service', '--time=0', `unix://${podmanSock}`], { stdio: 'ignore' }));
    await Promise.all([waitForPing(berthSock), waitForPing(podmanSock)]);
    progress('measuring podman');
    const reference = await measure(new Docker({ socketPath: podmanSock }), podmanSock);
    progress('measuring berth');
    const berth = await measure(new Docker({ socketPath: berthSock }), berthSock);
    const rows = Object.keys(reference).map((k) => ({ metric: k, podman: reference[k].toFixed(1), berth: berth[k].toFixed(1), 'berth/podman': (berth[k] / reference[k]).toFixed(2) }));
    console.table(rows);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 3000)); // berth deletes its pods on SIGTERM
    spawnSync(process.execPath, [cli, 'dev-cluster', 'down', '--state-dir', dir], { stdio: 'inherit' });
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
