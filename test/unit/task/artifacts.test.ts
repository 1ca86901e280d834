// Direct artifacts: the mode setting, the pod plan, and the producer's and consumer's shell run for real
// with busybox's tools, the network replaced by a fake `nc` that runs the producer's answer in-process (no sockets),
// whole or cut short.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifactMode, type PodArtifact } from '../../../src/task/artifacts.js';
import { ARTIFACT_PORT, fetchScript, serveAnswer } from '../../../src/task/artifact-stream.js';
import { parseTaskConfig } from '../../../src/task/config.js';
import { layOut } from '../../../src/task/layout.js';
import { INPUTS_CONTAINER, OUTPUTS_CONTAINER, needsInputsContainer, planTaskPod, type TaskPodContext } from '../../../src/task/pod-plan.js';
import { scratchDir } from '../../util/scratch.js';

const BUSYBOX = '/bin/busybox';
const APPLETS = ['sh', 'tar', 'mkdir', 'rm', 'mv', 'dirname', 'test', '[', 'sleep', 'head', 'find', 'touch', 'cat', 'echo'];

test('--artifacts over BERTH_TASK_ARTIFACTS over the default (direct); anything else refused', () => {
  assert.equal(artifactMode(undefined, {}), 'direct');
  assert.equal(artifactMode(undefined, { BERTH_TASK_ARTIFACTS: 'through-berth' }), 'through-berth');
  assert.equal(artifactMode('direct', { BERTH_TASK_ARTIFACTS: 'through-berth' }), 'direct');
  assert.throws(() => artifactMode('ftp', {}), /--artifacts ftp: expected one of direct, through-berth/);
  assert.throws(() => artifactMode(undefined, { BERTH_TASK_ARTIFACTS: 'x' }), /BERTH_TASK_ARTIFACTS x/);
});

const from = (over: Partial<PodArtifact> = {}): PodArtifact => ({
  pod: 'task-1',
  ip: '10.0.0.7',
  port: ARTIFACT_PORT,
  token: 'tok',
  output: 'out',
  path: 'out',
  read: () => Promise.reject(new Error('unused')),
  ...over,
});

test('the pod plan: a served step runs the artifact server; a fetched input is fetched by the inputs container', () => {
  const c = parseTaskConfig('platform: linux\ninputs: [{name: src}]\noutputs: [{name: out}]\nrun: {path: ls}\n', 't.yml');
  const layout = layOut(c, {
    inputs: [{ name: 'src', dir: '(artifact a)', from: from() }],
    outputs: [],
    args: [],
    workDir: '/tmp/build/0a1b2c3d',
    cwd: '/',
    inPlan: true,
  });
  const ctx: TaskPodContext = {
    namespace: 'ci',
    owner: 'me',
    runId: 'abcd1234',
    now: new Date(0),
    ttlSeconds: 600,
    image: 'busybox:1',
    helperImage: 'helper:1',
    artifactToken: 'secret-token',
  };
  const pod = planTaskPod(c, layout, {}, ctx);
  const init = pod.spec!.initContainers!.find((x) => x.name === INPUTS_CONTAINER)!.command!.join(' ');
  assert.match(
    init,
    /fetch '\/tmp\/build\/0a1b2c3d\/\.berth-artifact-0' '10\.0\.0\.7' '7788' 'tok' 'out' 'out' '\/tmp\/build\/0a1b2c3d\/src' 'src' \|\| exit 1/,
  );
  const serve = pod.spec!.containers.find((x) => x.name === OUTPUTS_CONTAINER)!.command!.join(' ');
  assert.match(serve, /nc -ll -p 7788 -e sh -c/);
  assert.match(serve, /secret-token/);
  assert.match(serve, /exec sleep 600/);
  const plain = planTaskPod(
    c,
    layOut(c, { inputs: [{ name: 'src', dir: '/src' }], outputs: [], args: [], workDir: '/w', cwd: '/' }),
    {},
    { ...ctx, artifactToken: undefined },
  );
  assert.deepEqual(plain.spec!.containers.find((x) => x.name === OUTPUTS_CONTAINER)!.command, ['sh', '-c', 'exec sleep 600']);
  assert.doesNotMatch(plain.spec!.initContainers![0].command!.join(' '), /fetch/);
});

test('a step with nothing to put in place has no inputs container; params, inputs, outputs or run.dir bring it back', () => {
  const ctx: TaskPodContext = {
    namespace: 'ci',
    owner: 'me',
    runId: 'abcd1234',
    now: new Date(0),
    ttlSeconds: 600,
    image: 'busybox:1',
    helperImage: 'helper:1',
  };
  const pod = (yaml: string, params: Record<string, string> = {}, caches: TaskPodContext['caches'] = undefined) => {
    const c = parseTaskConfig(`platform: linux\n${yaml}`, 't.yml');
    return planTaskPod(c, layOut(c, { inputs: [], outputs: [], args: [], workDir: '/w', cwd: '/', inPlan: true }), params, { ...ctx, caches }).spec!
      .initContainers;
  };
  assert.equal(pod('run: {path: "true"}\n'), undefined);
  assert.equal(pod('run: {path: "true"}\n', { A: '1' })?.length, 1);
  assert.equal(pod('outputs: [{name: o}]\nrun: {path: "true"}\n')?.length, 1);
  assert.equal(pod('run: {path: "true", dir: sub}\n')?.length, 1);
  // it opens a cache's folder to the task's user, and berth feeds it (needsInputsContainer says so to both)
  assert.equal(pod('caches: [{path: c}]\nrun: {path: "true"}\n', {}, [{ path: 'c', claim: 'task-cache-x' }])?.length, 1);
  assert.equal(
    needsInputsContainer(
      layOut(parseTaskConfig('platform: linux\nrun: {path: "true"}\n', 't.yml'), { inputs: [], outputs: [], args: [], workDir: '/w', cwd: '/', inPlan: true }),
      {},
      1,
    ),
    true,
  );
});

/**
 * A producer's working folder with output `out` (two files, one below a folder), and a consumer's; `nc`
 * on PATH runs the producer's answer with the request on stdin, its stream passed through `cut` (a shell
 * filter, e.g. `head -c 3000`).
 */
function world(cut = 'cat', token = 'tok'): { root: string; consumer: string; run(): Promise<{ code: number | null; stderr: string }> } {
  const root = scratchDir('berth-artifacts-');
  const bin = join(root, 'bin');
  const producer = join(root, 'producer');
  const consumer = join(root, 'consumer');
  mkdirSync(bin);
  mkdirSync(join(producer, 'out/sub'), { recursive: true });
  mkdirSync(consumer);
  writeFileSync(join(producer, 'out/a.txt'), 'alpha\n');
  writeFileSync(join(producer, 'out/sub/b.bin'), Buffer.alloc(10_000, 7));
  for (const a of APPLETS) symlinkSync(BUSYBOX, join(bin, a));
  writeFileSync(join(root, 'answer.sh'), serveAnswer(producer, [{ name: 'out', path: 'out' }], token));
  writeFileSync(join(bin, 'nc'), `#!/bin/sh\nsh ${join(root, 'answer.sh')} | ${cut}\n`);
  chmodSync(join(bin, 'nc'), 0o755);
  writeFileSync(join(root, 'fetch.sh'), `${fetchScript(consumer, [{ name: 'in', path: 'in', from: from() }])}\necho fetched\n`);
  return {
    root,
    consumer,
    run: () =>
      new Promise((resolve, reject) => {
        // dash, not busybox sh: busybox's shell would run its own nc applet rather than the fake on PATH
        const child = spawn('/bin/sh', [join(root, 'fetch.sh')], { env: { PATH: bin }, stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stderr }));
      }),
  };
}

test('fetch: the whole output arrives at the input path, staging removed', { skip: !existsSync(BUSYBOX) && 'no /bin/busybox' }, async () => {
  const w = world();
  try {
    const r = await w.run();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(w.consumer, 'in/a.txt'), 'utf8'), 'alpha\n');
    assert.deepEqual(readFileSync(join(w.consumer, 'in/sub/b.bin')), Buffer.alloc(10_000, 7));
    assert.deepEqual(readdirSync(w.consumer), ['in']);
  } finally {
    rmSync(w.root, { recursive: true, force: true });
  }
});

test(
  'fetch: a stream cut short, or a wrong token, is never taken: the container fails, naming the input',
  { skip: !existsSync(BUSYBOX) && 'no /bin/busybox' },
  async () => {
    // cut inside a file's data, and right before the marker entry (the output complete, its end not: 5 entries
    // of 512 bytes and 10,240 of data); a wrong token gets nothing. Each is tried 5 times, 1 s apart: together.
    const worlds = [world('head -c 3000'), world('head -c 12800'), world('cat', 'other-token')];
    try {
      for (const r of await Promise.all(worlds.map((w) => w.run()))) {
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stderr, /berth: the artifact for input in could not be fetched from 10\.0\.0\.7:7788 \(output out\) in 5 tries/);
      }
      for (const w of worlds) assert.ok(!existsSync(join(w.consumer, 'in')), 'nothing at the input path');
    } finally {
      for (const w of worlds) rmSync(w.root, { recursive: true, force: true });
    }
  },
);
